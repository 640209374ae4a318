import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildTestApp, newTenant, listenLocally, until, type TestApp, type Tenant } from '../../../test/helpers.js';
import { memberOf } from '../../areas/workspace/test-support.js';
import { AppError } from '../../core/errors.js';
import { SOCKETS_RETRY_AFTER_SECONDS, SocketQuota, socketOwner } from './socket-quota.js';

/** The refusal admit() throws (fails the test when it throws nothing). */
function refusalOf(f: () => unknown): AppError {
  try { f(); } catch (err) { if (err instanceof AppError) return err; throw err; }
  throw new Error('expected a refusal');
}

/** A connection as the quota sees it: destroyed or not, and a close event. */
const connection = (destroyed = false) => Object.assign(new EventEmitter(), { destroyed });

describe('SocketQuota', () => {
  it('admits up to max sockets of one owner; the next is 429 RATE_LIMIT_EXCEEDED with Retry-After and details {limit, retryAfterSeconds, reason: SOCKETS_PER_USER}; other owners are counted apart', () => {
    const quota = new SocketQuota(2);
    quota.admit('user:a');
    quota.admit('user:a');
    const e = refusalOf(() => quota.admit('user:a'));
    expect([e.code, e.status, e.details, e.headers]).toEqual(['RATE_LIMIT_EXCEEDED', 429,
      { limit: 2, retryAfterSeconds: SOCKETS_RETRY_AFTER_SECONDS, reason: 'SOCKETS_PER_USER' }, { 'Retry-After': String(SOCKETS_RETRY_AFTER_SECONDS) }]);
    expect(SOCKETS_RETRY_AFTER_SECONDS).toBe(30);
    expect(quota.count('user:a')).toBe(2); // the refused one is not counted
    quota.admit('user:b');
    quota.admit('key:k');
    expect([quota.count('user:b'), quota.count('key:k')]).toEqual([1, 1]);
  });

  it('a release frees one place, once: a second call of the same release frees nothing; an owner with no socket left is forgotten', () => {
    const quota = new SocketQuota(2);
    const first = quota.admit('user:a');
    quota.admit('user:a');
    first();
    first();
    expect(quota.count('user:a')).toBe(1);
    quota.admit('user:a');
    expect(() => quota.admit('user:a')).toThrow(AppError);
    const solo = new SocketQuota(1);
    solo.admit('user:c')();
    expect((solo as unknown as { open: Map<string, number> }).open.size).toBe(0);
  });

  it('admitConnection counts until the connection closes, and releases at once a connection already destroyed', () => {
    const quota = new SocketQuota(1);
    const conn = connection();
    quota.admitConnection('user:a', conn);
    expect(() => quota.admitConnection('user:a', connection())).toThrow(AppError);
    conn.emit('close');
    expect(quota.count('user:a')).toBe(0);
    quota.admitConnection('user:b', connection(true));
    expect(quota.count('user:b')).toBe(0);
  });

  it('a key credential counts against its key, a session against its user (the key creator\'s sockets are apart)', () => {
    expect(socketOwner({ userId: 'u1', apiKeyId: 'k1' })).toBe('key:k1');
    expect(socketOwner({ userId: 'u1', apiKeyId: null })).toBe('user:u1');
    expect(socketOwner({ userId: 'u1' })).toBe('user:u1');
  });
});

// End to end: a node with WS_MAX_SOCKETS_PER_USER=2 and a short heartbeat (a frozen peer is dropped within a test).
const LIMIT = 2;
const HEARTBEAT_MS = 150;
let t: TestApp;
let base: string;
const opened: WebSocket[] = [];

beforeAll(async () => {
  t = await buildTestApp({ wsMaxSocketsPerUser: LIMIT, wsHeartbeatMs: HEARTBEAT_MS });
  base = await listenLocally(t);
});
afterAll(async () => {
  for (const ws of opened) ws.terminate();
  await t?.close();
});

type Auth = { authorization: string };
const tokenOf = (auth: Auth) => auth.authorization.slice('Bearer '.length);
const ticket = async (auth: Auth) => (await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: auth })).json().data.ticket as string;
const newDoc = async (who: Tenant) => (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'Quota' } })).json().data.id as string;
async function newProjectDoc(who: Tenant, segment: 'sheets' | 'slides'): Promise<string> {
  const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: who.auth, payload: { name: `Quota ${segment}` } })).json().data.id;
  return (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/${segment}`, headers: who.auth, payload: { name: 'Quota' } })).json().data.document.id;
}

interface Attempt { status: number; ws: WebSocket; retryAfter?: string; body?: Record<string, unknown>; closed: Promise<number> }
/** An upgrade: 101 with the open socket (kept open until the test closes it), or the refusal's status, Retry-After and body. */
function attempt(url: string, opts: { autoPong?: boolean } = {}): Promise<Attempt> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { autoPong: opts.autoPong ?? true });
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('open', () => { opened.push(ws); resolve({ status: 101, ws, closed }); });
    ws.on('unexpected-response', (_q, res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ws, retryAfter: res.headers['retry-after'] as string | undefined, body: body ? JSON.parse(body) : undefined, closed }));
    });
    ws.on('error', () => {});
  });
}
const collabUrl = async (auth: Auth, id: string) => `${base}/v1/collaboration/ws/${id}?ticket=${await ticket(auth)}`;
const deckUrl = async (auth: Auth, id: string) => `${base}/v1/yjs/ws/${id}?ticket=${await ticket(auth)}`;
const sheetUrl = (auth: Auth, id: string) => `${base}/v1/sheet/ws?token=${tokenOf(auth)}&documentId=${id}`;
/** Waits until a socket of `auth` is admitted again (its place was released), then returns it. */
async function admittedAgain(url: () => string | Promise<string>, opts: { autoPong?: boolean } = {}): Promise<Attempt> {
  let last: Attempt | undefined;
  await until(async () => (last = await attempt(await url(), opts)).status === 101, 10_000);
  return last!;
}
const REFUSAL = {
  success: false,
  error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), details: { limit: LIMIT, retryAfterSeconds: 30, reason: 'SOCKETS_PER_USER' } },
};

describe('WebSockets per user (WS_MAX_SOCKETS_PER_USER)', () => {
  it('the socket past the limit is 429 RATE_LIMIT_EXCEEDED (SOCKETS_PER_USER) before the upgrade, collaboration, deck and sheet sockets counted together, a document already open too; another user of the organization is not affected', async () => {
    const x = await newTenant(t.app);
    const [doc, deck, sheet] = [await newDoc(x), await newProjectDoc(x, 'slides'), await newProjectDoc(x, 'sheets')];
    expect((await attempt(await collabUrl(x.auth, doc))).status).toBe(101);
    expect((await attempt(sheetUrl(x.auth, sheet))).status).toBe(101);
    for (const url of [await collabUrl(x.auth, doc), await deckUrl(x.auth, deck), sheetUrl(x.auth, sheet)]) {
      const refused = await attempt(url);
      expect([refused.status, refused.retryAfter, refused.body], url).toEqual([429, '30', REFUSAL]);
    }
    const m = await memberOf(t.app, x, 'member');
    expect((await attempt(await collabUrl(m.auth, doc))).status).toBe(101);
    expect((await attempt(sheetUrl(m.auth, sheet))).status).toBe(101);
    // An API key of x is a credential of its own (socketOwner): its sockets are not x's session's.
    const key = { authorization: `Bearer ${await x.apiKey(['documents:read'])}` };
    expect((await attempt(await collabUrl(key, doc))).status).toBe(101);
  });

  it('sockets opened at once never take a user past the limit: of five, two open and three are refused 429', async () => {
    const x = await newTenant(t.app);
    const sheet = await newProjectDoc(x, 'sheets');
    const all = await Promise.all(Array.from({ length: 5 }, () => attempt(sheetUrl(x.auth, sheet))));
    expect(all.map((a) => a.status).sort()).toEqual([101, 101, 429, 429, 429]);
  });

  it('a socket closed by its client frees its place: the next socket of that user opens', async () => {
    const x = await newTenant(t.app);
    const [doc, sheet] = [await newDoc(x), await newProjectDoc(x, 'sheets')];
    const first = await attempt(await collabUrl(x.auth, doc));
    expect([first.status, (await attempt(sheetUrl(x.auth, sheet))).status]).toEqual([101, 101]);
    expect((await attempt(sheetUrl(x.auth, sheet))).status).toBe(429);
    first.ws.close();
    expect(await first.closed).toBe(1005);
    expect((await admittedAgain(() => sheetUrl(x.auth, sheet))).status).toBe(101);
    expect((await attempt(sheetUrl(x.auth, sheet))).status).toBe(429); // one place freed, one taken
  });

  it('sockets the server closes (the sheet deleted: 4404) and sockets the heartbeat terminates (a frozen peer: 1006) free their places', async () => {
    const x = await newTenant(t.app);
    const [gone, sheet, doc] = [await newProjectDoc(x, 'sheets'), await newProjectDoc(x, 'sheets'), await newDoc(x)];
    const both = [await attempt(sheetUrl(x.auth, gone)), await attempt(sheetUrl(x.auth, gone))];
    expect(both.map((a) => a.status)).toEqual([101, 101]);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/documents/${gone}`, headers: x.auth })).statusCode).toBe(200);
    expect(await Promise.all(both.map((a) => a.closed))).toEqual([4404, 4404]);
    // Two frozen peers (they answer no pings) take both places again once the closed ones are released.
    const frozen = [await admittedAgain(() => sheetUrl(x.auth, sheet), { autoPong: false })];
    frozen.push(await admittedAgain(() => collabUrl(x.auth, doc), { autoPong: false }));
    expect((await attempt(sheetUrl(x.auth, sheet))).status).toBe(429);
    expect(await Promise.all(frozen.map((a) => a.closed))).toEqual([1006, 1006]);
    expect((await admittedAgain(() => sheetUrl(x.auth, sheet))).status).toBe(101);
    expect((await attempt(sheetUrl(x.auth, sheet))).status).toBe(101);
  });
});

describe('WebSockets per user, connections that end before their upgrade', () => {
  /**
   * On a node with WS_MAX_SOCKETS_PER_USER=1: a sheet socket whose admission look-up (openSheetSession) waits until
   * `meanwhile` has done what it does to the request's connection (server side); then the statuses of the user's next
   * socket (waited for until it opens: a place that was kept makes the test time out) and of one more (the bound holds).
   */
  async function afterConnectionEnded(meanwhile: (conn: Socket) => Promise<void>): Promise<number[]> {
    const node = await buildTestApp({ wsMaxSocketsPerUser: 1 });
    const db = node.platform.db;
    const tenant = db.tenant;
    let release = () => {};
    try {
      const server = await listenLocally(node);
      const x = await newTenant(node.app);
      const project = (await node.app.inject({ method: 'POST', url: '/v1/projects', headers: x.auth, payload: { name: 'Gone' } })).json().data.id;
      const sheet = (await node.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: x.auth, payload: { name: 'Gone' } })).json().data.document.id;
      const url = `${server}/v1/sheet/ws?token=${x.token}&documentId=${sheet}`;
      const upgrades: Socket[] = [];
      node.app.server.prependListener('upgrade', (_req, socket: Socket) => { upgrades.push(socket); });
      const gate = new Promise<void>((r) => { release = r; });
      let held = 0;
      db.tenant = (async (orgId: string, fn: (sql: never) => Promise<unknown>) => {
        const r = await tenant.call(db, orgId, fn as never);
        if (orgId === x.orgId && String(fn).includes('documentKind') && held++ === 0) await gate;
        return r;
      }) as typeof db.tenant;
      const first = new WebSocket(url);
      first.on('error', () => {});
      await until(() => held === 1);
      await meanwhile(upgrades[0]);
      release();
      return [(await admittedAgain(() => url)).status, (await attempt(url)).status];
    } finally {
      db.tenant = tenant;
      release();
      await node.close();
    }
  }

  it('a connection closed while its request was checked (the client gone) is not counted: the next socket opens, the one after it is 429', async () => {
    // Its close event has passed before the admission (the `closed` flag is set earlier than the event).
    expect(await afterConnectionEnded(async (conn) => { const closed = new Promise((r) => conn.once('close', r)); conn.destroy(); await closed; })).toEqual([101, 429]);
  });

  it('an upgrade that fails after the admission (its connection no longer writable: the upgrade destroys it) frees its place: the next socket opens, the one after it is 429', async () => {
    expect(await afterConnectionEnded(async (conn) => { conn.end(); await until(() => !conn.writable); })).toEqual([101, 429]);
  });

  it('an upgrade the WebSocket server refuses after the admission (a malformed Sec-WebSocket-Key: 400) frees its place, on each of the three socket routes', async () => {
    const node = await buildTestApp({ wsMaxSocketsPerUser: 1 });
    try {
      const server = await listenLocally(node);
      const { port } = node.app.server.address() as { port: number };
      const x = await newTenant(node.app);
      const project = (await node.app.inject({ method: 'POST', url: '/v1/projects', headers: x.auth, payload: { name: 'Bad keys' } })).json().data.id;
      const sheet = (await node.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: x.auth, payload: { name: 'Bad keys' } })).json().data.document.id;
      const deck = (await node.app.inject({ method: 'POST', url: `/v1/projects/${project}/slides`, headers: x.auth, payload: { name: 'Bad keys' } })).json().data.document.id;
      const doc = (await node.app.inject({ method: 'POST', url: '/v1/documents', headers: x.auth, payload: { title: 'Bad keys' } })).json().data.id;
      const nodeTicket = async () => (await node.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: x.auth })).json().data.ticket as string;
      const paths = [
        async () => `/v1/sheet/ws?token=${x.token}&documentId=${sheet}`,
        async () => `/v1/collaboration/ws/${doc}?ticket=${await nodeTicket()}`,
        async () => `/v1/yjs/ws/${deck}?ticket=${await nodeTicket()}`,
      ];
      for (const path of paths) {
        // A raw upgrade request: every header right but the key, which is not 16 bytes in base64.
        const answer = await new Promise<string>((resolve, reject) => {
          void path().then((p) => {
            const conn = connect(port, '127.0.0.1', () => conn.write(`GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: not-a-key\r\n\r\n`));
            let text = '';
            conn.on('data', (c) => { text += c; });
            conn.on('close', () => resolve(text));
            conn.on('error', reject);
          }, reject);
        });
        expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
        const next = await admittedAgain(async () => `${server}${await path()}`);
        expect(next.status).toBe(101);
        expect((await attempt(`${server}${await path()}`)).status).toBe(429);
        next.ws.close();
        await next.closed;
      }
    } finally { await node.close(); }
  });
});
