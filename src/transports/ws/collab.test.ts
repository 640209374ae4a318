import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import net, { type AddressInfo } from 'node:net';
import { buildTestApp, newTenant, errorOf, listenLocally, until, type TestApp, type Tenant } from '../../../test/helpers.js';
import { uuidv7 } from '../../core/ids.js';
import { documentsDeps, setDocumentsDeps } from '../../areas/documents/deps.js';
import { AppError } from '../../core/errors.js';
import { liveRooms, roomKey } from '../../areas/documents/collab.service.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;
let base: string;
const providers: WebsocketProvider[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  base = await listenLocally(t);
  a = await newTenant(t.app);
  b = await newTenant(t.app);
});
afterAll(async () => {
  for (const p of providers) p.destroy();
  await t?.close();
});

const ticket = async (who: Tenant, scope?: string) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: who.auth, ...(scope ? { payload: { scope } } : {}) });
  expect(r.statusCode).toBe(200);
  return r.json().data.ticket as string;
};
const newDoc = async (who: Tenant, content = '') => (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'Live', content } })).json().data.id as string;

function connect(server: string, room: string, params: Record<string, string>, path = '/v1/collaboration/ws') {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(`${server}${path}`, room, doc, { WebSocketPolyfill: WebSocket as never, params, disableBc: true, maxBackoffTime: 200 });
  providers.push(provider);
  return { doc, provider, text: doc.getText('content') };
}

/** Raw upgrade attempt: resolves with the HTTP status of a refusal, or 101 when the socket opened. */
function tryUpgrade(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on('open', () => { ws.close(); resolve({ status: 101, body: '' }); });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', () => {});
  });
}

/**
 * How a socket ends up: 'open' when still open after `holdMs` (then closed by the test), `closed <code>` when the
 * server closed it after the upgrade, `refused <status>` when the upgrade was refused.
 */
function socketOutcome(url: string, holdMs: number): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on('open', () => setTimeout(() => { resolve('open'); ws.close(); }, holdMs));
    ws.on('close', (code) => resolve(`closed ${code}`));
    ws.on('unexpected-response', (_q, res) => resolve(`refused ${res.statusCode}`));
    ws.on('error', () => {});
  });
}

describe('collaboration', () => {
  it('issues 64-hex single-use tickets', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: a.auth });
    expect(r.json().data).toEqual({ ticket: expect.stringMatching(/^[0-9a-f]{64}$/), expiresInSeconds: 60 });
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket' }), 401, 'AUTH_REQUIRED');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: a.auth, payload: { scope: 'admin' } }), 400, 'VALIDATION_ERROR');
    // Write asked with a read-only key: the missing scope is FORBIDDEN (spec 7), as on every write route.
    const ro = { authorization: `Bearer ${await a.apiKey(['documents:read'])}` };
    const asked = (scope?: string) => t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: ro, ...(scope ? { payload: { scope } } : {}) });
    expect(errorOf(await asked('write'), 403, 'FORBIDDEN').details).toEqual({ requiredScope: 'documents:write' });
    expect((await asked('read')).statusCode).toBe(200);
    expect((await asked()).statusCode).toBe(200);
  });

  it('two y-websocket clients converge; a late joiner gets the state; content follows', async () => {
    const id = await newDoc(a, 'Start.');
    const c1 = connect(base, id, { ticket: await ticket(a) });
    const c2 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c1.provider.synced && c2.provider.synced);
    expect(c1.text.toString()).toBe('Start.');
    c1.text.insert(c1.text.length, ' Hello');
    c2.text.insert(0, '>> ');
    await until(() => c1.text.toString() === c2.text.toString() && c1.text.toString().includes('Hello') && c1.text.toString().startsWith('>> '));
    expect(c1.text.toString()).toBe('>> Start. Hello');
    // Awareness travels between clients.
    c1.provider.awareness.setLocalStateField('user', { name: 'Ada' });
    await until(() => [...c2.provider.awareness.getStates().values()].some((s) => s.user?.name === 'Ada'));
    // Late joiner.
    const c3 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c3.provider.synced && c3.text.toString() === '>> Start. Hello');
    // The document's content reflects the shared text.
    await until(async () => (await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.content === '>> Start. Hello');
    // A REST edit continues the history and reaches live clients.
    await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: 'Rewritten' } });
    await until(() => c1.text.toString() === 'Rewritten' && c3.text.toString() === 'Rewritten');
    for (const c of [c1, c2, c3]) c.provider.destroy();
  });

  it('refuses replayed, expired and foreign tickets; 400 without ticket; 426 without upgrade', async () => {
    const id = await newDoc(a);
    const tk = await ticket(a);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${tk}`)).status).toBe(101);
    const replay = await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${tk}`);
    expect(replay.status).toBe(401);
    expect(JSON.parse(replay.body).error.code).toBe('AUTH_TOKEN_INVALID');
    const expired = await documentsDeps(t.platform).tickets.issue({ orgId: a.orgId, userId: a.userId, sessionId: null, apiKeyId: null, scope: 'write' }, -1);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${expired.ticket}`)).status).toBe(401);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${'0'.repeat(64)}`)).status).toBe(401);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${'0'.repeat(500)}`)).status).toBe(401);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${'0'.repeat(64)}&ticket=${'1'.repeat(64)}`)).status).toBe(401);
    // Another organization's document is not found.
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${await ticket(b)}`)).status).toBe(404);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${uuidv7()}?ticket=${await ticket(a)}`)).status).toBe(404);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}`)).status).toBe(400);
    // Spec 4.5: the query is just `ticket`. Without a document id the ticket still upgrades (and is used up);
    // the socket is then closed with 4400. A replay of that ticket is refused.
    const bare = await ticket(a);
    const closed = await new Promise<{ status: number; code?: number }>((resolve) => {
      const ws = new WebSocket(`${base}/v1/collaboration/ws?ticket=${bare}`);
      let opened = false;
      ws.on('open', () => { opened = true; });
      ws.on('close', (code) => resolve({ status: opened ? 101 : 0, code }));
      ws.on('unexpected-response', (_q, res) => resolve({ status: res.statusCode ?? 0 }));
      ws.on('error', () => {});
    });
    expect(closed).toEqual({ status: 101, code: 4400 });
    expect((await tryUpgrade(`${base}/v1/collaboration/ws?ticket=${bare}`)).status).toBe(401);
    expect((await tryUpgrade(`${base}/v1/yjs/ws?ticket=${'0'.repeat(64)}`)).status).toBe(401);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws?documentId=nope&ticket=${await ticket(a)}`)).status).toBe(400);
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/collaboration/ws/${id}` }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/collaboration/ws/${id}?ticket=${tk}` }), 426, 'UPGRADE_REQUIRED');
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/yjs/ws?documentId=${id}&ticket=${tk}` }), 426, 'UPGRADE_REQUIRED');
    // Spec 4.5 names only `ticket` as the query: without Upgrade it is 426 even without a document id.
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/collaboration/ws?ticket=${tk}` }), 426, 'UPGRADE_REQUIRED');
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/yjs/ws?ticket=${tk}` }), 426, 'UPGRADE_REQUIRED');
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/collaboration/ws` }), 400, 'VALIDATION_ERROR');
    // A document is not a deck.
    expect((await tryUpgrade(`${base}/v1/yjs/ws/${id}?ticket=${await ticket(a)}`)).status).toBe(404);
    // Deprecated token and the documentId query form.
    expect((await tryUpgrade(`${base}/v1/collaboration/ws?documentId=${id}&token=${a.token}`)).status).toBe(101);
    expect((await tryUpgrade(`${base}/v1/collaboration/ws?documentId=${id}&token=bad`)).status).toBe(401);
  });

  it('426 for an upgrade to anything but websocket, before the ticket is used', async () => {
    const id = await newDoc(a);
    const tk = await ticket(a);
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Upgrade' } })).json().data.id;
    const sheet = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name: 'S' } })).json().data.document.id;
    // The WebSocket plugin treats any Upgrade header as a socket request; h2c is not a WebSocket handshake.
    const { port } = t.app.server.address() as AddressInfo;
    const h2c = (path: string) => new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n`));
      let raw = '';
      sock.on('data', (c) => { raw += c; }); // the server closes the connection after its answer
      sock.on('close', () => resolve(raw));
      sock.on('error', reject);
    });
    for (const path of [`/v1/collaboration/ws/${id}?ticket=${tk}`, `/v1/yjs/ws?ticket=${tk}`, `/v1/sheet/ws?token=${a.token}&documentId=${sheet}`]) {
      const raw = await h2c(path);
      expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 426 Upgrade Required');
      expect(raw.toLowerCase()).toContain('content-type: application/json');
      expect(raw).toContain('"code":"UPGRADE_REQUIRED"');
    }
    // The ticket was not consumed by the refused requests.
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${tk}`)).status).toBe(101);
  });

  it('read-only tickets cannot edit; decks use /v1/yjs/ws', async () => {
    const id = await newDoc(a, 'fixed');
    const ro = connect(base, id, { ticket: await ticket(a, 'read') });
    const rw = connect(base, id, { ticket: await ticket(a) });
    await until(() => ro.provider.synced && rw.provider.synced);
    ro.text.insert(0, 'HACK ');
    rw.text.insert(5, '!');
    await until(() => ro.text.toString().includes('!'));
    await new Promise((r) => setTimeout(r, 200));
    expect(rw.text.toString()).toBe('fixed!');
    ro.provider.destroy(); rw.provider.destroy();
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Decks' } })).json().data.id;
    const deck = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/slides`, headers: a.auth, payload: { name: 'Pitch' } })).json().data.document.id;
    const d1 = connect(base, deck, { ticket: await ticket(a) }, '/v1/yjs/ws');
    await until(() => d1.provider.synced);
    expect(JSON.parse(d1.text.toString()).slides).toHaveLength(1);
    d1.provider.destroy();
  });

  it("a deck's REST content follows the collaborative text only while it is a valid deck", async () => {
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Deck follows' } })).json().data.id;
    const deck = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/slides`, headers: a.auth, payload: { name: 'Live' } })).json().data.document.id;
    const rest = async () => (await t.app.inject({ url: `/v1/documents/${deck}`, headers: a.auth })).json().data.content as string;
    const d = connect(base, deck, { ticket: await ticket(a) }, '/v1/yjs/ws');
    await until(() => d.provider.synced);
    const two = JSON.stringify({ slides: [{ id: 's1', title: 'One', body: '' }, { id: 's2', title: 'Two', body: 'b' }] });
    d.doc.transact(() => { d.text.delete(0, d.text.length); d.text.insert(0, two); });
    await until(async () => (await rest()) === two);
    // Broken JSON (an edit half-way): the REST content keeps the last valid deck.
    d.text.insert(0, '{"slides": [');
    await new Promise((r) => setTimeout(r, 900));
    expect(await rest()).toBe(two);
    // Valid again (a deck with a repeated slide id is not): then it follows.
    d.doc.transact(() => { d.text.delete(0, d.text.length); d.text.insert(0, JSON.stringify({ slides: [{ id: 'x', title: '', body: '' }, { id: 'x', title: '', body: '' }] })); });
    await new Promise((r) => setTimeout(r, 900));
    expect(await rest()).toBe(two);
    const one = JSON.stringify({ slides: [{ id: 's3', title: 'Three', body: '' }] });
    d.doc.transact(() => { d.text.delete(0, d.text.length); d.text.insert(0, one); });
    await until(async () => (await rest()) === one);
    d.provider.destroy();
  });

  it('collaborative text passes the safety gate before it reaches content; a NUL typed in it is stored as U+FFFD and later edits still follow', async () => {
    const id = await newDoc(a, 'clean');
    const rest = async () => (await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string;
    const d = connect(base, id, { ticket: await ticket(a) });
    await until(() => d.provider.synced && d.text.toString() === 'clean');
    d.text.insert(5, ' x-content-policy-test-violation');
    await new Promise((r) => setTimeout(r, 900));
    expect(await rest()).toBe('clean'); // refused: the last accepted content stays
    d.doc.transact(() => { d.text.delete(0, d.text.length); d.text.insert(0, 'fine NUL\u0000HERE'); });
    await until(async () => (await rest()) === 'fine NUL\uFFFDHERE');
    d.text.insert(d.text.length, ' AFTER');
    await until(async () => (await rest()) === 'fine NUL\uFFFDHERE AFTER');
    d.provider.destroy();
  });

  it('a write-back that failed (the moderation service out of reach) is tried again while the room stays open and idle', async () => {
    const id = await newDoc(a, 'start');
    const rest = async () => (await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string;
    const real = documentsDeps(t.platform).moderation;
    let failing = true;
    setDocumentsDeps(t.platform, { moderation: { ...real, check: async (texts: string[]) => { if (failing) throw new AppError('SERVICE_UNAVAILABLE', 'moderation down'); return real.check(texts); } } });
    try {
      const d = connect(base, id, { ticket: await ticket(a) });
      await until(() => d.provider.synced && d.text.toString() === 'start');
      d.text.insert(5, ' typed while moderation was down');
      await new Promise((r) => setTimeout(r, 900));
      expect(await rest()).toBe('start');
      failing = false; // back up; nobody types any more
      await until(async () => (await rest()) === 'start typed while moderation was down', 6000);
      d.provider.destroy();
    } finally {
      setDocumentsDeps(t.platform, { moderation: real });
    }
  });

  it('an edit that would take the content over 10 MiB is not applied: the socket closes with 1009; smaller edits go on', async () => {
    const MIB = 1024 * 1024;
    const id = await newDoc(a, 'x'.repeat(6 * MIB));
    const c1 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c1.provider.synced && c1.text.length === 6 * MIB, 15_000);
    c1.provider.shouldConnect = false; // no reconnect that would send the refused edit again
    const closed = new Promise<number>((r) => c1.provider.ws!.addEventListener('close', (ev) => r((ev as unknown as { code: number }).code)));
    c1.text.insert(0, 'y'.repeat(5 * MIB));
    expect(await closed).toBe(1009);
    c1.provider.destroy();
    const c2 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c2.provider.synced && c2.text.length > 0, 15_000);
    expect(c2.text.length).toBe(6 * MIB); // the server's copy never had the refused edit
    c2.text.insert(0, 'ok');
    await until(async () => ((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string).startsWith('okx'), 15_000);
    c2.provider.destroy();
  }, 60_000);

  it('other shared types count too: the whole CRDT state is bounded (3 x 10 MiB), past it the socket closes with 1009', async () => {
    const MIB = 1024 * 1024;
    const id = await newDoc(a, 'tiny');
    const c1 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c1.provider.synced && c1.text.length === 4, 15_000);
    c1.provider.shouldConnect = false;
    const closed = new Promise<number>((r) => c1.provider.ws!.addEventListener('close', (ev) => r((ev as unknown as { code: number }).code)));
    const junk = c1.doc.getText('junk');
    for (let i = 0; i < 3; i++) junk.insert(0, 'j'.repeat(12 * MIB)); // 36 MiB in three updates of 12
    expect(await closed).toBe(1009);
    c1.provider.destroy();
    // A writer connecting to a document near the limit is not refused (its state request changes nothing), and an
    // edit that shrinks the state is applied.
    const c2 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c2.provider.synced, 15_000);
    expect(c2.doc.getText('junk').length).toBe(24 * MIB); // the third update was refused
    expect(c2.text.toString()).toBe('tiny');
    c2.doc.getText('junk').delete(0, 24 * MIB);
    c2.text.insert(4, '!');
    await until(async () => ((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string) === 'tiny!', 15_000);
    expect(c2.provider.wsconnected).toBe(true);
    c2.provider.destroy();
    const c3 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c3.provider.synced && c3.text.toString() === 'tiny!', 15_000);
    expect(c3.doc.getText('junk').length).toBe(0);
    c3.provider.destroy();
  }, 90_000);

  it('deleting the document closes its sockets', async () => {
    const id = await newDoc(a, 'gone soon');
    const c1 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c1.provider.synced);
    const closed = new Promise<number>((r) => c1.provider.ws!.addEventListener('close', (ev) => r((ev as unknown as { code: number }).code)));
    c1.provider.shouldConnect = false;
    await t.app.inject({ method: 'DELETE', url: `/v1/documents/${id}`, headers: a.auth });
    expect(await closed).toBe(4404);
    c1.provider.destroy();
  });

  it('a server shutting down closes open sockets with 1001 (going away)', async () => {
    const other = await buildTestApp();
    try {
      const server = await listenLocally(other);
      const who = await newTenant(other.app);
      const id = (await other.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'Closing' } })).json().data.id as string;
      const tk = (await other.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: who.auth })).json().data.ticket as string;
      const c1 = connect(server, id, { ticket: tk });
      await until(() => c1.provider.synced);
      const closed = new Promise<number>((r) => c1.provider.ws!.addEventListener('close', (ev) => r((ev as unknown as { code: number }).code)));
      c1.provider.shouldConnect = false;
      await other.app.close();
      expect(await closed).toBe(1001);
      c1.provider.destroy();
    } finally {
      await other.close();
    }
  });

  it('state survives a restart', async () => {
    const id = await newDoc(a);
    const c1 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c1.provider.synced);
    for (let i = 0; i < 120; i++) c1.text.insert(c1.text.length, `${i % 10}`); // past the compaction threshold
    await until(async () => ((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string).length === 120);
    c1.provider.destroy();
    const rows = await t.platform.db.sys.query<{ n: number }>(`SELECT count(*) AS n FROM document_updates WHERE org_id = $1 AND document_id = $2`, [a.orgId, id]);
    expect(rows[0].n).toBeLessThan(100);
    await t.close();
    t = await buildTestApp();
    base = await listenLocally(t);
    const c2 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c2.provider.synced);
    expect(c2.text.toString()).toBe('0123456789'.repeat(12));
    c2.provider.destroy();
  });
});

/** A raw HTTP/1.1 upgrade request with the given headers; resolves with the status line, headers and body. */
function rawUpgrade(path: string, headers: Record<string, string>): Promise<{ status: number; head: string; body: string }> {
  const { port } = t.app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const lines = Object.entries({ Host: 'x', Connection: 'Upgrade', Upgrade: 'websocket', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const sock = net.connect(port, '127.0.0.1', () => sock.write(`GET ${path} HTTP/1.1\r\n${lines}\r\n`));
    let raw = '';
    const done = () => {
      const [head, body = ''] = raw.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head: head.toLowerCase(), body });
      sock.destroy();
    };
    sock.on('data', (c) => { raw += c; if (raw.includes('\r\n\r\n') && (raw.startsWith('HTTP/1.1 101') || /"success":false.*}$/s.test(raw))) done(); });
    sock.on('close', done);
    sock.on('error', reject);
  });
}
const KEY = { 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' };

describe('room lifecycle', () => {
  it('a room whose only socket closed while it loaded closes too (it would hold the document for ever)', async () => {
    const id = await newDoc(a);
    const key = roomKey(a.orgId, id);
    // The room's first load seeds the state under a lock on the document: held here, the socket is gone before it.
    await t.platform.db.systemTx(async (sql) => {
      await sql.query('SELECT 1 FROM documents WHERE id = $1 FOR UPDATE', [id]);
      const ws = new WebSocket(`${base}/v1/collaboration/ws/${id}?ticket=${await ticket(a)}`);
      const closed = new Promise((resolve) => ws.on('close', resolve));
      ws.on('upgrade', () => ws.terminate());
      ws.on('error', () => {});
      await closed;
      await new Promise((r) => setTimeout(r, 100)); // the server has seen the close
    });
    // The room loaded once the lock was gone (it stored the seeded state), and closed since.
    await until(async () => (await t.platform.db.sys.one<{ n: number }>('SELECT count(*)::int AS n FROM document_updates WHERE document_id = $1', [id]))!.n > 0);
    await new Promise((r) => setTimeout(r, 500));
    expect(liveRooms(t.platform).has(key)).toBe(false);
  });
  it('a content PUT answered while the room was loading reaches its sockets and stays in content once the room closed', async () => {
    const id = await newDoc(a, 'Old text.');
    const key = roomKey(a.orgId, id);
    // The document has collaborative state (edited live once); its room has closed since.
    const c0 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c0.provider.synced);
    c0.text.insert(0, '> ');
    await until(async () => (await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content === '> Old text.');
    c0.provider.destroy();
    await until(() => !liveRooms(t.platform).has(key));
    // The next room's load has read the stored state, and is held there while the PUT is answered.
    const db = t.platform.db;
    const tenantTx = db.tenantTx;
    let loading!: () => void;
    const loaded = new Promise<void>((r) => { loading = r; });
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    db.tenantTx = (async (orgId: string, fn: never) => {
      const isLoad = /loadStateThrough/.test(new Error().stack ?? '');
      const r = await tenantTx.call(db, orgId, fn);
      if (isLoad) { loading(); await gate; }
      return r;
    }) as typeof db.tenantTx;
    try {
      const c1 = connect(base, id, { ticket: await ticket(a) });
      await loaded;
      const put = await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: 'New text.' } });
      expect(put.statusCode).toBe(200);
      release();
      await until(() => c1.provider.synced && c1.text.toString() === 'New text.');
      c1.provider.destroy();
      await until(() => !liveRooms(t.platform).has(key));
      expect((await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content).toBe('New text.');
    } finally {
      release();
      db.tenantTx = tenantTx;
    }
  });
  it('a content PUT committed while the closing room writes back its older text is saved by the room before it goes', async () => {
    const id = await newDoc(a, 'Start.');
    const key = roomKey(a.orgId, id);
    const content = async () => (await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string;
    const c1 = connect(base, id, { ticket: await ticket(a) });
    await until(() => c1.provider.synced);
    c1.text.insert(0, 'X');
    await until(async () => (await content()) === 'XStart.');
    // Both wait for the document's row: the PUT first, then the closing room's write-back of "YXStart.", which so
    // lands after the PUT's commit and before the room hears the PUT.
    let holder = 0;
    // Sessions waiting behind the lock held here, directly or behind one that waits for it.
    const waiting = async () => (await t.platform.db.sys.one<{ n: number }>(`WITH b AS (SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid)))
      SELECT ((SELECT count(*) FROM b) + (SELECT count(*) FROM pg_stat_activity WHERE pid NOT IN (SELECT pid FROM b) AND pg_blocking_pids(pid) && ARRAY(SELECT pid FROM b)))::int AS n`, [holder]))!.n;
    let put: Promise<{ statusCode: number }> | undefined;
    await t.platform.db.systemTx(async (sql) => {
      await sql.query('SELECT 1 FROM documents WHERE id = $1 FOR UPDATE', [id]);
      holder = (await sql.one<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!.pid;
      put = Promise.resolve(t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: 'Final.' } }));
      await until(async () => (await waiting()) >= 1);
      c1.text.insert(0, 'Y'); // not written back yet: the room's last write-back has it
      c1.provider.destroy();
      await until(async () => (await waiting()) >= 2);
    });
    expect((await put!).statusCode).toBe(200);
    await until(() => !liveRooms(t.platform).has(key));
    expect(await content()).toBe('Final.');
  });
});

describe('handshake and scope checks before the upgrade', () => {
  it('a malformed WebSocket handshake is 400 VALIDATION_ERROR in the envelope and does not use up the ticket', async () => {
    const id = await newDoc(a);
    const tk = await ticket(a);
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Handshake' } })).json().data.id;
    const sheet = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name: 'S' } })).json().data.document.id;
    const bad: Array<[string, Record<string, string>]> = [
      ['Sec-WebSocket-Key', {}],
      ['Sec-WebSocket-Key', { 'Sec-WebSocket-Key': 'short', 'Sec-WebSocket-Version': '13' }],
      ['Sec-WebSocket-Version', { 'Sec-WebSocket-Key': KEY['Sec-WebSocket-Key'] }],
      ['Sec-WebSocket-Version', { 'Sec-WebSocket-Key': KEY['Sec-WebSocket-Key'], 'Sec-WebSocket-Version': '12' }],
      ['Sec-WebSocket-Protocol', { ...KEY, 'Sec-WebSocket-Protocol': 'a b' }],
    ];
    for (const path of [`/v1/collaboration/ws/${id}?ticket=${tk}`, `/v1/collaboration/ws?documentId=${id}&ticket=${tk}`, `/v1/yjs/ws?ticket=${tk}`, `/v1/sheet/ws?token=${a.token}&documentId=${sheet}`]) {
      for (const [field, headers] of bad) {
        const r = await rawUpgrade(path, headers);
        expect(r.status).toBe(400);
        expect(r.head).toContain('content-type: application/json');
        expect(JSON.parse(r.body)).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', details: { field } } });
      }
    }
    // The ticket survived every refused handshake.
    expect((await tryUpgrade(`${base}/v1/collaboration/ws/${id}?ticket=${tk}`)).status).toBe(101);
  });

  it('the 101 of an upgrade carries the rate-limit headers and the request id like every response (part 8)', async () => {
    const id = await newDoc(a);
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Upgrade headers' } })).json().data.id;
    const sheet = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name: 'S' } })).json().data.document.id;
    for (const path of [`/v1/collaboration/ws/${id}?ticket=${await ticket(a)}`, `/v1/sheet/ws?token=${a.token}&documentId=${sheet}`]) {
      const r = await rawUpgrade(path, KEY);
      expect(r.status, path).toBe(101);
      expect(r.head).toMatch(/\r\nx-ratelimit-limit: \d+/);
      expect(r.head).toMatch(/\r\nx-ratelimit-remaining: \d+/);
      expect(r.head).toMatch(/\r\nx-ratelimit-reset: \d+/);
      expect(r.head).toMatch(/\r\nx-request-id: \S+/);
    }
  });

  it('an upgrade with the deprecated token says so as every deprecated use does: Deprecation (RFC 9745 date), not with a ticket', async () => {
    const id = await newDoc(a);
    const withToken = await rawUpgrade(`/v1/collaboration/ws/${id}?token=${a.token}`, KEY);
    expect(withToken.status).toBe(101);
    expect(withToken.head).toMatch(/\r\ndeprecation: @1767225600(\r\n|$)/);
    const withTicket = await rawUpgrade(`/v1/collaboration/ws/${id}?ticket=${await ticket(a)}`, KEY);
    expect(withTicket.status).toBe(101);
    expect(withTicket.head).not.toMatch(/deprecation/);
  });

  it('the deprecated token needs documents:read like every documents route: 403 FORBIDDEN before the upgrade', async () => {
    const k = await newTenant(t.app); // a fresh tenant: its apiKey() uses the current app (this file restarts it)
    const id = await newDoc(k, 'secret');
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: k.auth, payload: { name: 'Scopes' } })).json().data.id;
    const deck = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/slides`, headers: k.auth, payload: { name: 'Deck' } })).json().data.document.id;
    const mcp = await k.apiKey(['mcp:*']);
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: { authorization: `Bearer ${mcp}` } }), 403, 'FORBIDDEN');
    for (const url of [`${base}/v1/collaboration/ws/${id}?token=${mcp}`, `${base}/v1/collaboration/ws?documentId=${id}&token=${mcp}`, `${base}/v1/yjs/ws/${deck}?token=${mcp}`]) {
      const r = await tryUpgrade(url);
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body)).toMatchObject({ success: false, error: { code: 'FORBIDDEN', details: { requiredScope: 'documents:read' } } });
    }
    // documents:read connects read-only: its edits are dropped.
    const ro = connect(base, id, { token: await k.apiKey(['documents:read']) });
    const rw = connect(base, id, { token: await k.apiKey(['documents:write']) });
    await until(() => ro.provider.synced && rw.provider.synced);
    ro.text.insert(0, 'HACK ');
    rw.text.insert(6, '!');
    await until(() => ro.text.toString().includes('!'));
    await new Promise((r) => setTimeout(r, 200));
    expect(rw.text.toString()).toBe('secret!');
    ro.provider.destroy(); rw.provider.destroy();
  });
});

describe('open rooms per organization', () => {
  it('past COLLAB_MAX_ROOMS_PER_ORG rooms on the node a new document is 429 RATE_LIMIT_EXCEEDED before the upgrade; open rooms, other organizations and rooms freed meanwhile still open', async () => {
    const node = await buildTestApp({ collabMaxRoomsPerOrg: 2 });
    try {
      const server = await listenLocally(node);
      const [x, y] = [await newTenant(node.app), await newTenant(node.app)];
      const doc = async (who: Tenant) => (await node.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'Room' } })).json().data.id as string;
      const tk = async (who: Tenant) => (await node.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: who.auth })).json().data.ticket as string;
      const [d1, d2, d3, d4] = [await doc(x), await doc(x), await doc(x), await doc(y)];
      const c1 = connect(server, d1, { ticket: await tk(x) });
      const c2 = connect(server, d2, { ticket: await tk(x) });
      await until(() => c1.provider.synced && c2.provider.synced);
      const url = `${server}/v1/collaboration/ws/${d3}?ticket=${await tk(x)}`;
      const third = await new Promise<{ status: number; retryAfter: unknown; body: string }>((resolve) => {
        const ws = new WebSocket(url);
        ws.on('open', () => { ws.close(); resolve({ status: 101, retryAfter: undefined, body: '' }); });
        ws.on('unexpected-response', (_q, res) => {
          let body = '';
          res.on('data', (c) => { body += c; });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }));
        });
        ws.on('error', () => {});
      });
      expect(third.status).toBe(429);
      expect(third.retryAfter).toBe('30');
      expect(JSON.parse(third.body)).toEqual({ success: false, error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), details: { limit: 2, retryAfterSeconds: 30, reason: 'COLLAB_ROOMS' } } });
      // A document already open is joined; another organization has its own rooms.
      expect((await tryUpgrade(`${server}/v1/collaboration/ws/${d1}?ticket=${await tk(x)}`)).status).toBe(101);
      expect((await tryUpgrade(`${server}/v1/collaboration/ws/${d4}?ticket=${await tk(y)}`)).status).toBe(101);
      // Once a room has closed, another document opens.
      c2.provider.destroy();
      await until(() => !liveRooms(node.platform).has(roomKey(x.orgId, d2)));
      expect((await tryUpgrade(`${server}/v1/collaboration/ws/${d3}?ticket=${await tk(x)}`)).status).toBe(101);
      c1.provider.destroy();
    } finally {
      await node.close();
    }
  });
});

describe('open rooms per node', () => {
  it('while the open rooms hold COLLAB_ROOMS_MAX_MB of state a new document is 503 SERVICE_UNAVAILABLE before the upgrade, whatever the organization; open rooms are still joined', async () => {
    const node = await buildTestApp({ collabRoomsMaxBytes: 1000 });
    try {
      const server = await listenLocally(node);
      const [x, y] = [await newTenant(node.app), await newTenant(node.app)];
      const doc = async (who: Tenant, content: string) => (await node.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'Room', content } })).json().data.id as string;
      const tk = async (who: Tenant) => (await node.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: who.auth })).json().data.ticket as string;
      const [big, other] = [await doc(x, 'a'.repeat(2000)), await doc(y, 'small')];
      const c1 = connect(server, big, { ticket: await tk(x) });
      await until(() => c1.provider.synced);
      const refused = await tryUpgrade(`${server}/v1/collaboration/ws/${other}?ticket=${await tk(y)}`);
      expect(refused.status).toBe(503);
      expect(JSON.parse(refused.body)).toEqual({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), details: { retryAfterSeconds: 30, reason: 'COLLAB_MEMORY', requestId: expect.any(String) } } });
      expect(JSON.parse(refused.body).error.message).toBe('This server holds as many documents open for collaboration as it may; retry shortly');
      expect((await tryUpgrade(`${server}/v1/collaboration/ws/${big}?ticket=${await tk(x)}`)).status).toBe(101);
      c1.provider.destroy();
      await until(() => !liveRooms(node.platform).has(roomKey(x.orgId, big)));
      expect((await tryUpgrade(`${server}/v1/collaboration/ws/${other}?ticket=${await tk(y)}`)).status).toBe(101);
    } finally {
      await node.close();
    }
  });
});

describe('open rooms per node, sockets opened at once', () => {
  it('rooms that all passed the check before loading go past COLLAB_ROOMS_MAX_MB by one room at most: the rest close with 1013', async () => {
    const node = await buildTestApp({ collabRoomsMaxBytes: 1000 });
    try {
      const server = await listenLocally(node);
      const x = await newTenant(node.app);
      const ids: string[] = [];
      const tickets: string[] = [];
      for (let i = 0; i < 6; i++) {
        ids.push((await node.app.inject({ method: 'POST', url: '/v1/documents', headers: x.auth, payload: { title: 'Room', content: 'a'.repeat(2000) } })).json().data.id);
        tickets.push((await node.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: x.auth })).json().data.ticket);
      }
      // Opened together: every socket passes the check before the upgrade while no room has loaded yet.
      const outcomes = await Promise.all(ids.map((id, i) => socketOutcome(`${server}/v1/collaboration/ws/${id}?ticket=${tickets[i]}`, 1_500)));
      // Each room holds over 2,000 bytes against a budget of 1,000: one room, whichever loaded first.
      expect(outcomes.filter((o) => o === 'open')).toHaveLength(1);
      expect(outcomes.filter((o) => o !== 'open').every((o) => o === 'closed 1013' || o === 'refused 503')).toBe(true);
    } finally {
      await node.close();
    }
  });
});

describe('open rooms per organization, sockets opened at once', () => {
  it('two sockets that both passed the check before the upgrade do not take the organization past its rooms: the second closes with 4429', async () => {
    const node = await buildTestApp({ collabMaxRoomsPerOrg: 1 });
    try {
      const server = await listenLocally(node);
      const x = await newTenant(node.app);
      const doc = async () => (await node.app.inject({ method: 'POST', url: '/v1/documents', headers: x.auth, payload: { title: 'Room' } })).json().data.id as string;
      const tk = async () => (await node.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: x.auth })).json().data.ticket as string;
      const urls = [`${server}/v1/collaboration/ws/${await doc()}?ticket=${await tk()}`, `${server}/v1/collaboration/ws/${await doc()}?ticket=${await tk()}`];
      // Both sockets' document look-ups (just before the check) are held until both are there: both pass the check.
      const db = node.platform.db;
      const tenant = db.tenant;
      let waiting = 0;
      let both!: () => void;
      const gate = new Promise<void>((r) => { both = r; });
      db.tenant = (async (orgId: string, fn: never) => {
        const r = await tenant.call(db, orgId, fn);
        if (/requireCollabDocument/.test(new Error().stack ?? '')) { if (++waiting === 2) both(); await gate; }
        return r;
      }) as typeof db.tenant;
      // Each socket ends as: still open after a while, or closed after the upgrade (with its code).
      const outcomes = await Promise.all(urls.map((url) => socketOutcome(url, 1000)));
      expect(outcomes.filter((o) => o === 'open')).toHaveLength(1);
      expect(outcomes.filter((o) => o !== 'open')).toEqual(['closed 4429']);
      expect(liveRooms(node.platform).size).toBeLessThanOrEqual(1);
      db.tenant = tenant;
    } finally {
      await node.close();
    }
  });
});
