import net from 'node:net';

export interface ReceivedMail { from: string; to: string[]; data: string; auth: string | null }

/**
 * A tiny SMTP server on 127.0.0.1 for tests: EHLO/HELO, AUTH PLAIN/LOGIN (any credentials), MAIL, RCPT,
 * DATA, RSET, NOOP, QUIT. Messages are kept in `messages`. `failNext` makes the next DATA answer 451.
 */
export class SmtpSink {
  readonly messages: ReceivedMail[] = [];
  private server = net.createServer((s) => this.session(s));
  private waiters: Array<() => void> = [];
  failNext = 0;
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  get url(): string { return `smtp://sink:secret@127.0.0.1:${this.port}`; }

  /** Resolves once `n` messages have arrived (or rejects after timeoutMs). */
  async waitFor(n: number, timeoutMs = 10_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < n) {
      if (Date.now() > deadline) throw new Error(`SMTP sink: expected ${n} messages, got ${this.messages.length}`);
      await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, 100); });
    }
    return this.messages;
  }

  async close(): Promise<void> { await new Promise<void>((r) => this.server.close(() => r())); }

  private session(socket: net.Socket): void {
    socket.setEncoding('utf8');
    const say = (line: string) => socket.write(line + '\r\n');
    let buf = '';
    let mode: 'cmd' | 'data' | 'auth-user' | 'auth-pass' = 'cmd';
    let from = '';
    let to: string[] = [];
    let auth: string | null = null;
    let data = '';
    say('220 127.0.0.1 ESMTP test sink');
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      buf += chunk;
      for (;;) {
        if (mode === 'data') {
          data += buf;
          buf = '';
          const probe = '\r\n' + data;
          const end = probe.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buf = probe.slice(end + 5);
          const body = probe.slice(2, end + 2);
          mode = 'cmd';
          if (this.failNext > 0) { this.failNext--; say('451 4.3.0 temporary failure (test)'); }
          else {
            this.messages.push({ from, to, data: body.replace(/\r\n\.\./g, '\r\n.'), auth });
            say('250 2.0.0 OK queued');
            for (const w of this.waiters.splice(0)) w();
          }
          from = ''; to = []; data = '';
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        if (mode === 'auth-user') { auth = Buffer.from(line, 'base64').toString('utf8'); mode = 'auth-pass'; say('334 UGFzc3dvcmQ6'); continue; }
        if (mode === 'auth-pass') { mode = 'cmd'; say('235 2.7.0 Authentication successful'); continue; }
        const verb = line.slice(0, 4).toUpperCase();
        const arg = line.slice(5);
        switch (verb) {
          case 'EHLO': socket.write('250-127.0.0.1\r\n250-AUTH PLAIN LOGIN\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n'); break;
          case 'HELO': say('250 127.0.0.1'); break;
          case 'AUTH': {
            const [mech, initial] = arg.split(' ');
            if (mech?.toUpperCase() === 'PLAIN') { auth = initial ? Buffer.from(initial, 'base64').toString('utf8').split('\0')[1] ?? '' : ''; say('235 2.7.0 Authentication successful'); }
            else { mode = 'auth-user'; say('334 VXNlcm5hbWU6'); }
            break;
          }
          case 'MAIL': from = /<([^>]*)>/.exec(arg)?.[1] ?? ''; say('250 2.1.0 OK'); break;
          case 'RCPT': to.push(/<([^>]*)>/.exec(arg)?.[1] ?? ''); say('250 2.1.5 OK'); break;
          case 'DATA': mode = 'data'; data = ''; say('354 End data with <CR><LF>.<CR><LF>'); break;
          case 'RSET': from = ''; to = []; say('250 2.0.0 OK'); break;
          case 'NOOP': say('250 2.0.0 OK'); break;
          case 'QUIT': say('221 2.0.0 Bye'); socket.end(); break;
          default: say('502 5.5.2 Command not recognized');
        }
      }
    });
  }
}
