import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import type { AddressInfo } from 'node:net';
import { buildTestApp, newTenant, bearer, type TestApp, type Tenant } from '../../../test/helpers.js';
import { memberOf, waitFor } from '../../areas/workspace/test-support.js';

// Sockets stay open for hours; the credential that opened them can stop being valid meanwhile. Every credential change
// re-checks the open sockets: a credential that no longer resolves closes them with 4401, a lost permission with 4403,
// and nothing the client sends after the change is applied.

let t: TestApp;
let base: string;
const providers: WebsocketProvider[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const p of providers) p.destroy();
  await t?.close();
});

const MEMBERS = '/v1/organizations/current/members';
type Auth = { authorization: string };
const tokenOf = (auth: Auth) => auth.authorization.slice('Bearer '.length);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ticket(auth: Auth, scope?: 'read' | 'write') {
  const r = await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: auth, ...(scope ? { payload: { scope } } : {}) });
  expect(r.statusCode).toBe(200);
  return r.json().data.ticket as string;
}
async function newDoc(owner: Tenant, content: string) {
  const r = await t.app.inject({ method: 'POST', url: '/v1/documents', headers: owner.auth, payload: { title: 'Live', content } });
  expect(r.statusCode).toBe(201);
  return r.json().data.id as string;
}
const contentOf = async (owner: Tenant, id: string) => (await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: owner.auth })).json().data.content as string;

/** A y-websocket client that does not reconnect; `closed` resolves with the close code the server sent. */
async function collabClient(id: string, params: Record<string, string>) {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(`${base}/v1/collaboration/ws`, id, doc, { WebSocketPolyfill: WebSocket as never, params, disableBc: true });
  providers.push(provider);
  await waitFor(async () => provider.synced);
  provider.shouldConnect = false;
  const closed = new Promise<number>((r) => provider.ws!.addEventListener('close', (ev) => r((ev as unknown as { code: number }).code)));
  let code: number | null = null;
  void closed.then((c) => { code = c; });
  return { doc, provider, text: doc.getText('content'), closed, isOpen: () => code === null };
}

/** A sheet socket collecting its JSON messages. */
async function sheetClient(token: string, id: string) {
  const ws = new WebSocket(`${base}/v1/sheet/ws?token=${token}&documentId=${id}`);
  const msgs: Array<Record<string, unknown>> = [];
  ws.on('message', (d) => msgs.push(JSON.parse(String(d))));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => { ws.on('open', () => resolve()); ws.on('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`))); });
  await waitFor(async () => msgs.some((m) => m.type === 'snapshot'));
  return { ws, msgs, closed };
}

describe('collaboration sockets after the credential changes', () => {
  it('removing a member closes their ticket and token sockets with 4401; their later edits are not persisted', async () => {
    const owner = await newTenant(t.app);
    const m = await memberOf(t.app, owner, 'member');
    const id = await newDoc(owner, 'Original.');
    const watcher = await collabClient(id, { ticket: await ticket(owner.auth) });
    const viaTicket = await collabClient(id, { ticket: await ticket(m.auth) });
    const viaToken = await collabClient(id, { token: tokenOf(m.auth) });
    viaTicket.text.insert(0, 'before ');
    await waitFor(async () => watcher.text.toString() === 'before Original.');

    expect((await t.app.inject({ method: 'DELETE', url: `${MEMBERS}/${m.userId}`, headers: owner.auth })).statusCode).toBe(200);
    viaTicket.text.insert(0, 'AFTER-1 ');
    viaToken.text.insert(0, 'AFTER-2 ');
    expect(await viaTicket.closed).toBe(4401);
    expect(await viaToken.closed).toBe(4401);
    await sleep(500); // past the 300 ms content write-back
    expect(watcher.text.toString()).toBe('before Original.');
    expect(await contentOf(owner, id)).toBe('before Original.');
    expect(watcher.isOpen()).toBe(true); // the owner's socket is untouched
  });

  it('a role downgrade to viewer closes write sockets with 4403 and keeps read-only ones', async () => {
    const owner = await newTenant(t.app);
    const m = await memberOf(t.app, owner, 'member');
    const id = await newDoc(owner, 'Text');
    const writer = await collabClient(id, { ticket: await ticket(m.auth, 'write') });
    const reader = await collabClient(id, { ticket: await ticket(m.auth, 'read') });
    const res = await t.app.inject({ method: 'PUT', url: `${MEMBERS}/${m.userId}`, headers: owner.auth, payload: { role: 'viewer' } });
    expect(res.statusCode).toBe(200);
    writer.text.insert(0, 'LATE ');
    expect(await writer.closed).toBe(4403);
    await sleep(500);
    expect(await contentOf(owner, id)).toBe('Text');
    // The read-only socket still follows the document.
    await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: owner.auth, payload: { content: 'Owner edit' } });
    await waitFor(async () => reader.text.toString() === 'Owner edit');
    expect(reader.isOpen()).toBe(true);
    expect(await contentOf(owner, id)).toBe('Owner edit');
  });

  it('signing out closes a socket opened with that session (token and ticket) with 4401', async () => {
    const owner = await newTenant(t.app);
    const id = await newDoc(owner, 'x');
    const login = (await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: owner.email, password: owner.password } })).json().data;
    const second = bearer(login.access_token);
    const viaToken = await collabClient(id, { token: login.access_token });
    const viaTicket = await collabClient(id, { ticket: await ticket(second) });
    const other = await collabClient(id, { ticket: await ticket(owner.auth) }); // another session of the same user
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: second })).statusCode).toBe(204);
    expect(await viaToken.closed).toBe(4401);
    expect(await viaTicket.closed).toBe(4401);
    await sleep(200);
    expect(other.isOpen()).toBe(true);
  });

  it('revoking an API key closes the socket it opened with 4401', async () => {
    const owner = await newTenant(t.app);
    const id = await newDoc(owner, 'x');
    const key = await owner.apiKey(['documents:write', 'settings:write']);
    const viaKey = await collabClient(id, { token: key });
    const keyTicket = await collabClient(id, { ticket: await ticket(bearer(key)) });
    const keyId = (await t.platform.db.sys.one<{ id: string }>(`SELECT id FROM api_keys WHERE org_id = $1`, [owner.orgId]))!.id;
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${keyId}`, headers: owner.auth })).statusCode).toBe(200);
    viaKey.text.insert(0, 'NO ');
    expect(await viaKey.closed).toBe(4401);
    expect(await keyTicket.closed).toBe(4401);
    await sleep(500);
    expect(await contentOf(owner, id)).toBe('x');
  });

  it('a session past its expiry fails the re-check (which the periodic sweep also runs): its sockets close with 4401', async () => {
    const owner = await newTenant(t.app);
    const id = await newDoc(owner, 'x');
    const login = (await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: owner.email, password: owner.password } })).json().data;
    const viaToken = await collabClient(id, { token: login.access_token });
    const viaTicket = await collabClient(id, { ticket: await ticket(bearer(login.access_token)) });
    const other = await collabClient(id, { ticket: await ticket(owner.auth) });
    // The session reaches its end: nothing announces that, so a re-check must find it (here run by another change).
    await t.platform.db.sys.exec(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = (
      SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1)`, [owner.userId]);
    const stranger = await newTenant(t.app);
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: stranger.auth })).statusCode).toBe(204);
    expect(await viaToken.closed).toBe(4401);
    expect(await viaTicket.closed).toBe(4401);
    await sleep(200);
    expect(other.isOpen()).toBe(true);
  });

  it('a change that does not concern the socket leaves it open and editing', async () => {
    const owner = await newTenant(t.app);
    const stranger = await newTenant(t.app);
    const id = await newDoc(owner, 'keep');
    const c = await collabClient(id, { token: owner.token });
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: stranger.auth })).statusCode).toBe(204);
    c.text.insert(4, '!');
    await waitFor(async () => (await contentOf(owner, id)) === 'keep!');
    expect(c.isOpen()).toBe(true);
  });
});

describe('sheet sockets after the credential changes', () => {
  async function sheetOf(owner: Tenant) {
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: owner.auth, payload: { name: 'Grid' } })).json().data.id;
    return (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: owner.auth, payload: { name: 'S' } })).json().data.document.id as string;
  }
  const cellsOf = async (owner: Tenant, id: string) => JSON.parse(await contentOf(owner, id)).sheets[0].cells as Record<string, unknown>;

  it('removing a member closes their sheet socket with 4401; a set sent after is neither acked nor persisted', async () => {
    const owner = await newTenant(t.app);
    const m = await memberOf(t.app, owner, 'member');
    const id = await sheetOf(owner);
    const c = await sheetClient(tokenOf(m.auth), id);
    c.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'A1', value: 'before' }));
    await waitFor(async () => c.msgs.some((x) => x.type === 'ack' && x.id === 1));
    expect((await t.app.inject({ method: 'DELETE', url: `${MEMBERS}/${m.userId}`, headers: owner.auth })).statusCode).toBe(200);
    c.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'A2', value: 'after' }));
    expect(await c.closed).toBe(4401);
    expect(c.msgs.some((x) => x.id === 2)).toBe(false);
    expect(await cellsOf(owner, id)).toEqual({ A1: { v: 'before' } });
  });

  it('a downgrade to viewer closes a write sheet socket with 4403; an unrelated change does not', async () => {
    const owner = await newTenant(t.app);
    const stranger = await newTenant(t.app);
    const m = await memberOf(t.app, owner, 'member');
    const id = await sheetOf(owner);
    const mine = await sheetClient(owner.token, id);
    const c = await sheetClient(tokenOf(m.auth), id);
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: stranger.auth })).statusCode).toBe(204);
    c.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'B1', value: 1 }));
    await waitFor(async () => c.msgs.some((x) => x.type === 'ack' && x.id === 1));
    expect((await t.app.inject({ method: 'PUT', url: `${MEMBERS}/${m.userId}`, headers: owner.auth, payload: { role: 'viewer' } })).statusCode).toBe(200);
    c.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'B2', value: 2 }));
    expect(await c.closed).toBe(4403);
    expect(await cellsOf(owner, id)).toEqual({ B1: { v: 1 } });
    expect(mine.ws.readyState).toBe(WebSocket.OPEN);
    mine.ws.close();
  });
});
