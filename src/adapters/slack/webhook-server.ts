import http from 'node:http';

export interface ReceivedWebhook { path: string; headers: http.IncomingHttpHeaders; body: unknown }

/**
 * A local HTTP server on 127.0.0.1 standing in for Slack's incoming webhooks in tests. Every POST is
 * recorded; `failWith` (a status) makes requests fail until `failCount` reaches 0 (-1: forever).
 */
export class WebhookServer {
  readonly received: ReceivedWebhook[] = [];
  failWith = 500;
  failCount = 0;
  private server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { raw += c; });
    req.on('end', () => {
      let body: unknown = raw;
      try { body = JSON.parse(raw); } catch { /* keep the text */ }
      this.received.push({ path: req.url ?? '/', headers: req.headers, body });
      if (this.failCount !== 0) {
        if (this.failCount > 0) this.failCount--;
        res.writeHead(this.failWith, { 'content-type': 'text/plain' }).end('internal_error');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  url(path = '/services/T000/B000/XXXX'): string { return `http://127.0.0.1:${this.port}${path}`; }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
