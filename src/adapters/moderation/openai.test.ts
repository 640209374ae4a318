import { describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HostedModeration } from './openai.js';
import { startModerationServer } from './test-server.js';

/** What a failed check throws: 503 SERVICE_UNAVAILABLE, its message, and the cause kept for the log. */
async function failure(m: HostedModeration) {
  const err = await m.check(['some text']).then(() => { throw new Error('did not fail'); }, (e: { code?: string; message: string; cause?: unknown }) => e);
  expect(err.code).toBe('SERVICE_UNAVAILABLE');
  return { message: err.message, cause: err.cause };
}

async function listening(server: http.Server | net.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('hosted moderation failures carry their cause for the log (never the key)', () => {
  it('a refused key: the status and the provider\'s error code', async () => {
    const srv = await startModerationServer({ apiKey: 'right-key', flagWord: 'x' });
    try {
      expect(await failure(new HostedModeration({ baseUrl: srv.url, apiKey: 'wrong-key' })))
        .toEqual({ message: 'The moderation service answered 401; retry later', cause: { status: 401, code: 'invalid_api_key' } });
    } finally { await srv.close(); }
  });

  it('an answer that is no moderation result, an error page without a code', async () => {
    let answer = { status: 200, body: '<html>maintenance</html>' };
    const server = http.createServer((_req, res) => res.writeHead(answer.status).end(answer.body));
    const url = await listening(server);
    try {
      expect(await failure(new HostedModeration({ baseUrl: url, apiKey: 'k' })))
        .toEqual({ message: 'The moderation service gave an unreadable answer; retry later', cause: { status: 200, code: 'UNREADABLE_ANSWER' } });
      answer = { status: 502, body: '<html>bad gateway</html>' };
      expect((await failure(new HostedModeration({ baseUrl: url, apiKey: 'k' }))).cause).toEqual({ status: 502, code: 'HTTP_502' });
    } finally { server.close(); }
  });

  it('a server that is not there, or does not answer in time', async () => {
    const gone = net.createServer();
    const goneUrl = await listening(gone);
    await new Promise((r) => gone.close(r));
    expect(await failure(new HostedModeration({ baseUrl: goneUrl, apiKey: 'k' })))
      .toEqual({ message: 'The moderation service cannot be reached; retry later', cause: { code: 'ECONNREFUSED' } });
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => { sockets.push(s); });
    const silentUrl = await listening(silent);
    try {
      expect(await failure(new HostedModeration({ baseUrl: silentUrl, apiKey: 'k', timeoutMs: 200 })))
        .toEqual({ message: 'The moderation service did not answer in time; retry later', cause: { code: 'TIMEOUT' } });
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});
