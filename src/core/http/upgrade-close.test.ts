import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { buildTestApp, listenLocally, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let port: number;
beforeAll(async () => { t = await buildTestApp(); port = Number(new URL(await listenLocally(t)).port); });
afterAll(async () => { await t?.close(); });

/** Sends one request over a raw connection; resolves with the status line and whether the server closed it within `ms`. */
function rawRequest(path: string, headers: string, ms = 3000): Promise<{ status: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    let got = '';
    const s = net.connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`));
    s.on('data', (d) => { got += d; });
    const timer = setTimeout(() => { s.destroy(); resolve({ status: got.split('\r\n')[0], closedByServer: false }); }, ms);
    s.on('close', () => { clearTimeout(timer); resolve({ status: got.split('\r\n')[0], closedByServer: true }); });
  });
}
const UPGRADE = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

describe('an upgrade request to a route that is not a WebSocket', () => {
  it('is answered, then its connection is closed (it was left open, outside the HTTP server\'s care)', async () => {
    expect(await rawRequest('/v1/health', UPGRADE)).toEqual({ status: 'HTTP/1.1 200 OK', closedByServer: true });
    expect(await rawRequest('/v1/me', UPGRADE)).toEqual({ status: 'HTTP/1.1 401 Unauthorized', closedByServer: true });
    expect(await rawRequest('/no/such/route', UPGRADE)).toEqual({ status: 'HTTP/1.1 404 Not Found', closedByServer: true });
  });

  it('answered before routing (a badly encoded URL: Fastify\'s frameworkErrors, no onRequest hook), its connection is closed too', async () => {
    expect(await rawRequest('/v1/projects/%E0%A4%A/tasks', UPGRADE)).toEqual({ status: 'HTTP/1.1 404 Not Found', closedByServer: true });
  });

  it('an ordinary request keeps its keep-alive connection', async () => {
    expect(await rawRequest('/v1/health', '', 1000)).toEqual({ status: 'HTTP/1.1 200 OK', closedByServer: false });
  });
});
