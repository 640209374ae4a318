import net from 'node:net';

type Reply = string | Buffer | number | null | Reply[] | { error: string };

/**
 * A local server speaking the Redis protocol (RESP2) for tests, with the commands the platform's client sends:
 * CLIENT, PING, SELECT, AUTH, QUIT, GET, SET (PX/EX/NX), GETDEL, DEL, INCR, DECR, PEXPIREAT, PEXPIRE, PTTL, MULTI,
 * EXEC, and pub/sub's PUBLISH, SUBSCRIBE and UNSUBSCRIBE (messages are bytes). Keys expire as Redis expires them.
 * `pause()` stops answering (a Redis that hangs); `dropConnections()` cuts every client off; `close()` ends it.
 */
export async function startRedisServer() {
  const data = new Map<string, { value: string; expiresAt: number | null }>();
  const sockets = new Set<net.Socket>();
  /** Subscribed sockets by channel (pub/sub). */
  const subscribers = new Map<string, Set<net.Socket>>();
  const channelsOf = (socket: net.Socket) => [...subscribers].filter(([, subs]) => subs.has(socket)).map(([c]) => c);
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
  const encode = (r: Reply): Buffer => {
    if (r === null) return Buffer.from('$-1\r\n');
    if (typeof r === 'number') return Buffer.from(`:${r}\r\n`);
    if (Array.isArray(r)) return Buffer.concat([Buffer.from(`*${r.length}\r\n`), ...r.map(encode)]);
    if (Buffer.isBuffer(r)) return Buffer.concat([Buffer.from(`$${r.length}\r\n`), r, Buffer.from('\r\n')]);
    if (typeof r === 'object') return Buffer.from(`-${r.error}\r\n`);
    if (r === 'OK' || r === 'PONG' || r === 'QUEUED') return Buffer.from(`+${r}\r\n`);
    return encode(Buffer.from(r));
  };
  /** Reads one command (an array of bulk strings, as bytes) from the front of `buf`; null until it has all of it. */
  const parse = (buf: Buffer): { args: Buffer[]; rest: Buffer } | null => {
    let p = 0;
    const line = () => { const i = buf.indexOf('\r\n', p); if (i < 0) return null; const l = buf.toString('utf8', p, i); p = i + 2; return l; };
    const head = line();
    if (head === null) return null;
    const args: Buffer[] = [];
    for (let n = Number(head.slice(1)); n > 0; n--) {
      const len = line();
      if (len === null) return null;
      const size = Number(len.slice(1));
      if (buf.length < p + size + 2) return null;
      args.push(Buffer.from(buf.subarray(p, p + size)));
      p += size + 2;
    }
    return { args, rest: buf.subarray(p) };
  };
  /** Commands read while paused, answered in order on resume (those of connections closed meanwhile never). */
  const held: Array<() => void> = [];
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => { sockets.delete(socket); for (const subs of subscribers.values()) subs.delete(socket); });
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    let queued: string[][] | null = null;
    /** Runs one command and writes its reply. */
    const answer = (raw: Buffer[]) => {
      if (socket.destroyed) return;
      const args = raw.map((a) => a.toString('utf8'));
      state.commands.push(args);
      const name = args[0].toUpperCase();
      if (name === 'MULTI') { queued = []; socket.write(encode('OK')); return; }
      if (name === 'EXEC') { const replies = (queued ?? []).map(run); queued = null; socket.write(encode(replies)); return; }
      if (queued) { queued.push(args); socket.write(encode('QUEUED')); return; }
      if (name === 'PUBLISH') {
        const subs = [...(subscribers.get(args[1]) ?? [])];
        for (const s of subs) s.write(encode(['message', args[1], raw[2]]));
        socket.write(encode(subs.length));
        return;
      }
      if (name === 'SUBSCRIBE' || name === 'UNSUBSCRIBE') {
        const named = args.slice(1);
        for (const c of name === 'UNSUBSCRIBE' && named.length === 0 ? channelsOf(socket) : named) {
          const subs = subscribers.get(c) ?? new Set<net.Socket>();
          subscribers.set(c, subs);
          if (name === 'SUBSCRIBE') subs.add(socket); else subs.delete(socket);
          socket.write(encode([name.toLowerCase(), c, channelsOf(socket).length]));
        }
        return;
      }
      socket.write(encode(run(args)));
    };
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (let cmd = parse(buf); cmd; cmd = parse(buf)) {
        buf = Buffer.from(cmd.rest);
        const args = cmd.args;
        if (state.paused || held.length > 0) held.push(() => answer(args)); else answer(args);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `redis://127.0.0.1:${port}`, data, state,
    /** Stops answering commands (they wait, and are answered on resume): a Redis that hangs. */
    pause() { state.paused = true; },
    resume() { state.paused = false; for (const run of held.splice(0)) run(); },
    /** Channels that have a subscriber now (pub/sub). */
    channels: () => [...subscribers].filter(([, subs]) => subs.size > 0).map(([c]) => c),
    /** Closes every client connection (a network cut); clients reconnect by themselves. */
    dropConnections() { for (const s of sockets) s.destroy(); },
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}
