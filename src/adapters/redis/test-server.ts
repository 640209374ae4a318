import net from 'node:net';

type Reply = string | number | null | Reply[] | { error: string };

/**
 * A local server speaking the Redis protocol (RESP2) for tests, with the commands the platform's client sends:
 * CLIENT, PING, SELECT, AUTH, QUIT, GET, SET (PX/EX/NX), GETDEL, DEL, INCR, DECR, PEXPIREAT, PEXPIRE, PTTL, MULTI and
 * EXEC. Keys expire as Redis expires them. `pause()` stops answering (a Redis that hangs); `close()` ends it.
 */
export async function startRedisServer() {
  const data = new Map<string, { value: string; expiresAt: number | null }>();
  const sockets = new Set<net.Socket>();
  const state = { paused: false, commands: [] as string[][] };
  const live = (k: string) => {
    const e = data.get(k);
    if (e && e.expiresAt !== null && e.expiresAt <= Date.now()) { data.delete(k); return undefined; }
    return e;
  };
  const add = (k: string, by: number): Reply => {
    const e = live(k);
    const n = Number(e?.value ?? '0');
    if (!Number.isInteger(n)) return { error: 'ERR value is not an integer or out of range' };
    data.set(k, { value: String(n + by), expiresAt: e?.expiresAt ?? null });
    return n + by;
  };
  const run = (a: string[]): Reply => {
    const [cmd, k] = [a[0].toUpperCase(), a[1]];
    switch (cmd) {
      case 'PING': return 'PONG';
      case 'CLIENT': case 'SELECT': case 'AUTH': case 'QUIT': return 'OK';
      case 'GET': return live(k)?.value ?? null;
      case 'GETDEL': { const v = live(k)?.value ?? null; data.delete(k); return v; }
      case 'DEL': return a.slice(1).filter((x) => live(x) && data.delete(x)).length;
      case 'INCR': return add(k, 1);
      case 'DECR': return add(k, -1);
      case 'SET': {
        const opts = a.slice(3).map((x) => x.toUpperCase());
        if (opts.includes('NX') && live(k)) return null;
        const px = opts.indexOf('PX'), ex = opts.indexOf('EX');
        const ttl = px >= 0 ? Number(a[3 + px + 1]) : ex >= 0 ? Number(a[3 + ex + 1]) * 1000 : null;
        data.set(k, { value: a[2], expiresAt: ttl === null ? null : Date.now() + ttl });
        return 'OK';
      }
      case 'PEXPIREAT': case 'PEXPIRE': {
        const e = live(k);
        if (!e) return 0;
        e.expiresAt = cmd === 'PEXPIREAT' ? Number(a[2]) : Date.now() + Number(a[2]);
        return 1;
      }
      case 'PTTL': { const e = live(k); return !e ? -2 : e.expiresAt === null ? -1 : e.expiresAt - Date.now(); }
      default: return { error: `ERR unknown command '${a[0]}'` };
    }
  };
  const encode = (r: Reply): string => {
    if (r === null) return '$-1\r\n';
    if (typeof r === 'number') return `:${r}\r\n`;
    if (Array.isArray(r)) return `*${r.length}\r\n${r.map(encode).join('')}`;
    if (typeof r === 'object') return `-${r.error}\r\n`;
    if (r === 'OK' || r === 'PONG' || r === 'QUEUED') return `+${r}\r\n`;
    return `$${Buffer.byteLength(r)}\r\n${r}\r\n`;
  };
  /** Reads one command (an array of bulk strings) from the front of `buf`; null until it has all of it. */
  const parse = (buf: Buffer): { args: string[]; rest: Buffer } | null => {
    let p = 0;
    const line = () => { const i = buf.indexOf('\r\n', p); if (i < 0) return null; const l = buf.toString('utf8', p, i); p = i + 2; return l; };
    const head = line();
    if (head === null) return null;
    const args: string[] = [];
    for (let n = Number(head.slice(1)); n > 0; n--) {
      const len = line();
      if (len === null) return null;
      const size = Number(len.slice(1));
      if (buf.length < p + size + 2) return null;
      args.push(buf.toString('utf8', p, p + size));
      p += size + 2;
    }
    return { args, rest: buf.subarray(p) };
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    let queued: string[][] | null = null;
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (let cmd = parse(buf); cmd; cmd = parse(buf)) {
        buf = Buffer.from(cmd.rest);
        if (state.paused) continue;
        state.commands.push(cmd.args);
        const name = cmd.args[0].toUpperCase();
        if (name === 'MULTI') { queued = []; socket.write(encode('OK')); continue; }
        if (name === 'EXEC') { const replies = (queued ?? []).map(run); queued = null; socket.write(encode(replies)); continue; }
        if (queued) { queued.push(cmd.args); socket.write(encode('QUEUED')); continue; }
        socket.write(encode(run(cmd.args)));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `redis://127.0.0.1:${port}`, data, state,
    /** Stops answering commands (they are read and dropped): a Redis that hangs. */
    pause() { state.paused = true; },
    resume() { state.paused = false; },
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}
