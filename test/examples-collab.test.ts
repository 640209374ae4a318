import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import { buildTestApp, newTenant, listenLocally, until, type TestApp, type Tenant } from './helpers.js';
// The connection logic of examples/collab.html and examples/collab-node.mjs (plain JavaScript, run as is).
import { openLiveDocument } from '../examples/collab-client.js';

let t: TestApp;
let a: Tenant;
let base: string;
const opened: Array<{ close: () => void }> = [];

beforeAll(async () => {
  t = await buildTestApp();
  base = (await listenLocally(t)).replace(/^ws/, 'http');
  a = await newTenant(t.app);
});
afterAll(async () => {
  for (const o of opened) o.close();
  await t?.close();
});

const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, headers: a.auth, payload });
const newDoc = async (content = '') => (await post('/v1/documents', { title: 'Live', content })).json().data.id as string;
/** Tickets the client asked for so far (tickets are deleted when used, so the table cannot count them). */
const fetches = vi.spyOn(globalThis, 'fetch');
afterEach(() => fetches.mockClear());
const tickets = () => fetches.mock.calls.filter(([url]) => String(url).endsWith('/v1/collaboration/ticket')).length;

async function open(documentId: string, statuses: string[] = []) {
  const live = await openLiveDocument({ Y, WebsocketProvider, WebSocketPolyfill: WebSocket, base, token: a.token, documentId, name: 'Test', onStatus: (s: string) => statuses.push(s) });
  opened.push(live);
  return live;
}

describe('examples/collab-node.mjs', () => {
  it('two editors in Node converge and the document content follows; it ends with OK', async () => {
    const id = await newDoc('Hello');
    const { stdout } = await promisify(execFile)(process.execPath, ['examples/collab-node.mjs'], {
      env: { ...process.env, PLATFORM_URL: base, PLATFORM_TOKEN: a.token, DOCUMENT_ID: id }, timeout: 30_000,
    });
    expect(stdout).toMatch(/both editors show "Hello\\n(Alice was here\.\\nBob too\.|Bob too\.\\nAlice was here\.)"/);
    expect(stdout.trim().endsWith('OK')).toBe(true);
    const doc = await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth });
    expect(doc.json().data.content).toMatch(/^Hello\n(Alice was here\.\nBob too\.|Bob too\.\nAlice was here\.)$/);
  });
});

describe('examples/collab-client.js', () => {
  it('names a wrong document id or a sheet before opening any socket', async () => {
    const before = tickets();
    await expect(open('01900000-0000-7000-8000-000000000000')).rejects.toThrow('Document not found');
    const project = (await post('/v1/projects', { name: 'P' })).json().data.id;
    const sheet = (await post(`/v1/projects/${project}/sheets`, { name: 'S' })).json().data.document.id;
    await expect(open(sheet)).rejects.toThrow('This is a sheet, not a text document');
    expect(tickets()).toBe(before);
  });

  it('reconnects with a new ticket after a dropped connection, and edits flow again', async () => {
    const id = await newDoc();
    const one = await open(id);
    const two = await open(id);
    await until(() => one.provider.synced && two.provider.synced, 10_000);
    const before = tickets();
    one.provider.ws!.close();
    await until(() => one.provider.synced && tickets() === before + 1, 10_000);
    one.text.insert(0, 'after the drop');
    await until(() => two.text.toString() === 'after the drop', 10_000);
  });

  it('stops, saying why, when the document is deleted (close 4404): no reconnection', async () => {
    const id = await newDoc('x');
    const statuses: string[] = [];
    const live = await open(id, statuses);
    await until(() => live.provider.synced, 10_000);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/documents/${id}`, headers: a.auth })).statusCode).toBe(200);
    await until(() => statuses.some((s) => s.startsWith('closed by the server: 4404')), 10_000);
    const after = tickets();
    await new Promise((r) => setTimeout(r, 1500));
    expect(live.provider.shouldConnect).toBe(false);
    expect(live.provider.wsconnected).toBe(false);
    expect(tickets()).toBe(after);
  });
});
