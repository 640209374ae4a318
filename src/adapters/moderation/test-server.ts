import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local server speaking the OpenAI moderation API, for tests: flags inputs containing `flagWord`. */
export async function startModerationServer(opts: { apiKey: string; flagWord: string }) {
  const requests: Array<{ auth?: string; body: unknown }> = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : null;
      requests.push({ auth: req.headers.authorization, body });
      if (req.method !== 'POST' || req.url !== '/v1/moderations') { res.writeHead(404).end(); return; }
      if (req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
        return;
      }
      const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
      const results = input.map((t) => {
        const hit = t.toLowerCase().includes(opts.flagWord);
        return { flagged: hit, categories: { harassment: hit, violence: false }, category_scores: { harassment: hit ? 0.98 : 0.01, violence: 0 } };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'modr-test', model: 'omni-moderation-latest', results }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}
