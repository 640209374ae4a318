/**
 * The bounds of a collaboration socket (collab-limits.ts, docs/documents.md "Limits of a collaboration socket"):
 * awareness states, updates waiting for missing ones, frames sent while the room loads, unread data. Stock
 * y-websocket clients watch; the misbehaving peers are raw sockets speaking the same protocol (lib0 encoding).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import { buildTestApp, newTenant, listenLocally, until, type TestApp, type Tenant } from '../../../test/helpers.js';
import { liveRooms, roomKey } from '../../areas/documents/collab.service.js';
import { COLLAB_MESSAGE_BURST, EARLY_MAX_BYTES, EARLY_MAX_FRAMES, MAX_AWARENESS_STATE_BYTES, MAX_PENDING_BYTES, STATE_REQUEST_INTERVAL_MS } from './collab-limits.js';

let t: TestApp;
let a: Tenant;
let base: string;
const providers: WebsocketProvider[] = [];
const sockets: WebSocket[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  base = await listenLocally(t);
  a = await newTenant(t.app);
});
afterAll(async () => {
  for (const p of providers) p.destroy();
  for (const s of sockets) s.terminate();
  await t?.close();
});

const ticket = async (scope: 'read' | 'write' = 'write') =>
  (await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: a.auth, payload: { scope } })).json().data.ticket as string;
const newDoc = async (content = '') => (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'Limits', content } })).json().data.id as string;

/** A stock y-websocket client, synced. */
async function client(id: string) {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(`${base}/v1/collaboration/ws`, id, doc, { WebSocketPolyfill: WebSocket as never, params: { ticket: await ticket() }, disableBc: true });
  providers.push(provider);
  await until(() => provider.synced);
  return { doc, provider, states: () => provider.awareness.getStates() };
}

interface Raw { ws: WebSocket; got: Buffer[]; closed: Promise<{ code: number; reason: string }> }

/** A raw socket on the document, open. */
async function raw(id: string, scope: 'read' | 'write' = 'write'): Promise<Raw> {
  const ws = new WebSocket(`${base}/v1/collaboration/ws/${id}?ticket=${await ticket(scope)}`);
  sockets.push(ws);
  const got: Buffer[] = [];
  ws.on('message', (m: Buffer) => got.push(m));
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: String(reason) })));
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  return { ws, got, closed };
}

const encode = (write: (e: encoding.Encoder) => void) => { const e = encoding.createEncoder(); write(e); return encoding.toUint8Array(e); };
/** An awareness message (y-websocket type 1) setting these clients' states (JSON texts). */
const awareness = (...entries: Array<[clientId: number, clock: number, state: string]>) => encode((e) => {
  encoding.writeVarUint(e, 1);
  encoding.writeVarUint8Array(e, encode((u) => {
    encoding.writeVarUint(u, entries.length);
    for (const [id, clock, state] of entries) { encoding.writeVarUint(u, id); encoding.writeVarUint(u, clock); encoding.writeVarString(u, state); }
  }));
});
const syncUpdate = (update: Uint8Array) => encode((e) => { encoding.writeVarUint(e, 0); encoding.writeVarUint(e, 2); encoding.writeVarUint8Array(e, update); });
/** A sync step 1 with an empty state vector: answered with a step 2 holding the whole document. */
const STEP1 = Uint8Array.of(0, 0, 1, 0);
const QUERY_AWARENESS = Uint8Array.of(3);
const isStep2 = (m: Buffer) => m[0] === 0 && m[1] === 1;
const isAwareness = (m: Buffer) => m[0] === 1;

/**
 * Whether the server kept the socket after what it sent so far: a sync step 1 sent now is answered ('open') only
 * if every earlier message was handled without closing it (a socket's messages are handled in order), else the
 * close ('closed <code> <reason>').
 */
function probe(r: Raw): Promise<string> {
  return new Promise((resolve) => {
    const seen = r.got.length;
    const check = () => { if (r.got.slice(seen).some(isStep2)) { r.ws.off('message', check); resolve('open'); } };
    r.ws.on('message', check);
    void r.closed.then((c) => resolve(`closed ${c.code} ${c.reason}`));
    if (r.ws.readyState === WebSocket.OPEN) r.ws.send(STEP1);
  });
}

/** An update the server cannot integrate: a new client's insert at clock 1, whose clock-0 insert it never gets. */
function dependentUpdate(clientId: number, size: number): { update: Uint8Array; missing: Uint8Array } {
  const d = new Y.Doc();
  d.clientID = clientId;
  d.getText('content').insert(0, 'a');
  const missing = Y.encodeStateAsUpdate(d);
  const sv = Y.encodeStateVector(d);
  d.getText('content').insert(1, 'p'.repeat(size));
  return { update: Y.encodeStateAsUpdate(d, sv), missing };
}

describe('awareness is checked before the room keeps it', () => {
  it('a state nested deeper than JSON_MAX_DEPTH closes its socket (1008); a socket joining meanwhile is served and the server stays up', async () => {
    const id = await newDoc('text');
    const deep = await raw(id, 'read');
    // Deep enough that re-encoding it (JSON.stringify) overflows the stack, yet far under the state's size bound.
    const n = 5_000;
    // It stops reading once sent, so it does not answer the server's close frame: its socket stays in the room until
    // the close times out.
    await new Promise((r) => deep.ws.send(awareness([424242, 1, '['.repeat(n) + ']'.repeat(n)]), r));
    (deep.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await new Promise((r) => setTimeout(r, 200));
    const late = await client(id);
    expect(late.doc.getText('content').toString()).toBe('text');
    expect(late.states().has(424242)).toBe(false);
    expect((await t.app.inject({ url: '/v1/health' })).statusCode).toBe(200);
    deep.ws.terminate();
    // Just past the bound, on a socket that reads: the reason says why.
    const just = await raw(id, 'read');
    just.ws.send(awareness([424243, 1, '{"a":'.repeat(33) + '1' + '}'.repeat(33)]));
    expect(await probe(just)).toBe('closed 1008 awareness state nested deeper than 32 levels');
    late.provider.destroy();
  });

  it('a state over 64 KiB closes its socket (1008) and reaches no one; read-only sockets may still show presence', async () => {
    const id = await newDoc();
    const watcher = await client(id);
    const ro = await raw(id, 'read');
    ro.ws.send(awareness([5000, 1, JSON.stringify({ user: { name: 'x'.repeat(MAX_AWARENESS_STATE_BYTES) } })]));
    expect(await probe(ro)).toBe(`closed 1008 awareness state over ${MAX_AWARENESS_STATE_BYTES} bytes`);
    const viewer = await raw(id, 'read');
    viewer.ws.send(awareness([5001, 1, JSON.stringify({ user: { name: 'Viewer' } })]));
    await until(() => watcher.states().get(5001)?.user?.name === 'Viewer');
    expect(watcher.states().has(5000)).toBe(false);
    watcher.provider.destroy();
  });

  it("a socket cannot set or remove another client's state, nor announce more than 4 client ids", async () => {
    const id = await newDoc();
    const ada = await client(id);
    ada.provider.awareness.setLocalStateField('user', { name: 'Ada' });
    const watcher = await client(id);
    const adaId = ada.doc.clientID;
    await until(() => watcher.states().get(adaId)?.user?.name === 'Ada');
    const mallory = await raw(id, 'read');
    mallory.ws.send(awareness([adaId, 1000, JSON.stringify({ user: { name: 'Mallory' } })]));
    mallory.ws.send(awareness([adaId, 1001, 'null']));
    // Its own id is accepted: once the watcher has it, the messages before were handled.
    mallory.ws.send(awareness([777001, 1, JSON.stringify({ user: { name: 'Mallory' } })]));
    await until(() => watcher.states().has(777001));
    expect(watcher.states().get(adaId)?.user?.name).toBe('Ada');
    // Its own id it may update and remove.
    mallory.ws.send(awareness([777001, 2, 'null']));
    await until(() => !watcher.states().has(777001));
    // Four ids at most over its life (the one it removed still counts), removals of unknown ids too.
    mallory.ws.send(awareness([777002, 1, '{}']));
    mallory.ws.send(awareness([777003, 1, 'null']));
    mallory.ws.send(awareness([777004, 1, '{}']));
    expect(await probe(mallory)).toBe('open');
    mallory.ws.send(awareness([777005, 1, '{}']));
    expect(await probe(mallory)).toBe('closed 1008 awareness for over 4 client ids');
    // Its states go with its socket.
    await until(() => !watcher.states().has(777002) && !watcher.states().has(777004));
    ada.provider.destroy(); watcher.provider.destroy();
  });

  it("the room's states are bounded together (2 MiB): past it a new state is dropped, the socket stays", async () => {
    const id = await newDoc();
    const watcher = await client(id);
    const state = JSON.stringify({ user: { name: 'w'.repeat(60 * 1024) } });
    // 9 sockets of 4 states of 60 KiB: 2,160 KiB, the last ones past the bound.
    for (let s = 0; s < 9; s++) {
      const r = await raw(id, 'read');
      for (let i = 0; i < 4; i++) r.ws.send(awareness([600000 + s * 10 + i, 1, state]));
      expect(await probe(r)).toBe('open');
    }
    // Every socket's messages were handled (probe), and the watcher hears them before the probe's answer.
    const kept = [...watcher.states().keys()].filter((k) => k >= 600000 && k < 601000).length;
    expect(kept).toBe(Math.floor((2 * 1024 * 1024) / state.length)); // 34 of 36
    watcher.provider.destroy();
  });

  it('query-awareness is answered at most once a second per socket', async () => {
    const id = await newDoc();
    const ada = await client(id);
    ada.provider.awareness.setLocalStateField('user', { name: 'Ada' });
    const q = await raw(id, 'read');
    await until(() => q.got.some(isAwareness));
    const before = q.got.length;
    for (let i = 0; i < 3; i++) q.ws.send(QUERY_AWARENESS);
    expect(await probe(q)).toBe('open');
    const answers = q.got.slice(before).filter(isAwareness).length;
    expect(answers).toBeGreaterThanOrEqual(1);
    expect(answers).toBeLessThan(3); // 1, or 2 on a machine that stalled a second between them
    ada.provider.destroy();
  });
});

describe('state requests are paced', () => {
  /** The text a sync step 2 answer holds (the answer applied to an empty document). */
  const textOf = (m: Buffer) => {
    const dec = decoding.createDecoder(m);
    decoding.readVarUint(dec);
    decoding.readVarUint(dec);
    const d = new Y.Doc();
    Y.applyUpdate(d, decoding.readVarUint8Array(dec));
    return d.getText('content').toString();
  };

  it('state requests of a socket: one is answered at once, the newest of the rest when the interval ends (a burst asking for the whole document is not encoded each time)', async () => {
    const id = await newDoc('start');
    const r = await raw(id, 'read');
    const before = r.got.length;
    for (let i = 0; i < 5; i++) r.ws.send(STEP1);
    await until(() => r.got.slice(before).some(isStep2));
    const first = r.got.slice(before).filter(isStep2);
    expect(first.map(textOf)).toEqual(['start']);
    // An edit while the other requests wait: the deferred answer is computed when sent, so it holds it.
    const ada = await client(id);
    ada.doc.getText('content').insert(5, ' and more');
    await until(() => r.got.slice(before).filter(isStep2).length === 2, STATE_REQUEST_INTERVAL_MS + 3_000);
    await new Promise((resolve) => setTimeout(resolve, STATE_REQUEST_INTERVAL_MS + 200));
    const answers = r.got.slice(before).filter(isStep2);
    expect(answers).toHaveLength(2);
    expect(textOf(answers[1])).toBe('start and more');
    ada.provider.destroy();
  });

  it('a malformed request that waited for its turn closes its socket (1003) when it is read, and the server stays up', async () => {
    const id = await newDoc('start');
    const r = await raw(id, 'read');
    r.ws.send(STEP1);
    // A state vector that announces 5 entries and holds none: it fails only when decoded, after the interval.
    r.ws.send(Uint8Array.of(0, 0, 1, 5));
    expect(await r.closed).toEqual({ code: 1003, reason: 'bad message' });
    const other = await client(id);
    expect(other.doc.getText('content').toString()).toBe('start');
    other.provider.destroy();
  });
});

describe('updates waiting for missing ones are bounded', () => {
  it('an update that depends on a missing one waits and integrates once that arrives; past 1 MiB waiting the socket closes (1008) and the waiting data is dropped', async () => {
    const id = await newDoc('base');
    const watcher = await client(id);
    const key = roomKey(a.orgId, id);
    const pending = () => (liveRooms(t.platform).get(key)!.doc!.store as unknown as { pendingStructs: unknown }).pendingStructs;
    const w = await raw(id);
    // A small one waits, then integrates.
    const small = dependentUpdate(910001, 10);
    w.ws.send(syncUpdate(small.update));
    expect(await probe(w)).toBe('open');
    expect(pending()).not.toBeNull();
    w.ws.send(syncUpdate(small.missing));
    await until(() => watcher.doc.getText('content').toString().includes('pppppppppp'));
    expect(pending()).toBeNull();
    // Updates whose first change never comes, 600 KiB each: the second takes what waits past 1 MiB.
    const size = Math.ceil(MAX_PENDING_BYTES * 0.6);
    w.ws.send(syncUpdate(dependentUpdate(910002, size).update));
    expect(await probe(w)).toBe('open');
    w.ws.send(syncUpdate(dependentUpdate(910003, size).update));
    expect(await probe(w)).toBe(`closed 1008 over ${MAX_PENDING_BYTES} bytes of updates waiting for missing ones`);
    expect(pending()).toBeNull();
    // The document goes on.
    watcher.doc.getText('content').insert(0, '>');
    const text = watcher.doc.getText('content').toString();
    expect(text).toMatch(/^>/);
    await until(async () => (await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content === text);
    watcher.provider.destroy();
  });
});

describe('what a socket may make the server hold for it', () => {
  it('frames sent while the room loads are held up to 64: past it the socket closes (1008) before the room has loaded', async () => {
    const id = await newDoc();
    // A document's first room seeds its state under a lock on the document: held here, the room cannot load.
    await t.platform.db.systemTx(async (sql) => {
      await sql.query('SELECT 1 FROM documents WHERE id = $1 FOR UPDATE', [id]);
      const few = await raw(id);
      for (let i = 0; i < EARLY_MAX_FRAMES; i++) few.ws.send(QUERY_AWARENESS);
      const many = await raw(id);
      for (let i = 0; i <= EARLY_MAX_FRAMES; i++) many.ws.send(QUERY_AWARENESS);
      const outcome = await Promise.race([many.closed.then((c) => `closed ${c.code} ${c.reason}`), new Promise((r) => setTimeout(() => r('open'), 5_000))]);
      expect(outcome).toBe(`closed 1008 over ${EARLY_MAX_FRAMES} messages or ${EARLY_MAX_BYTES} bytes before the document loaded`);
      expect(few.ws.readyState).toBe(WebSocket.OPEN);
    });
    const ok = await client(id);
    ok.provider.destroy();
  });

  it('a socket that does not read is closed (1013) once more than 8 MiB beyond its largest message wait for it, not sent more', async () => {
    const MIB = 1024 * 1024;
    const id = await newDoc('x'.repeat(6 * MIB));
    const watcher = await client(id);
    // The server's end of the next socket (ws keeps its WebSocket on the connection under the symbol "websocket").
    let connection: object | undefined;
    t.app.server.once('upgrade', (_req, sock: object) => { connection = sock; });
    const slow = await raw(id, 'read');
    const kWebSocket = Object.getOwnPropertySymbols(connection!).find((k) => k.description === 'websocket')!;
    const onServer = (connection as Record<symbol, WebSocket>)[kWebSocket];
    expect(onServer.readyState).toBe(WebSocket.OPEN);
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    // Each sync step 1 is answered with the whole document (6 MiB), at most one a second (STATE_REQUEST_INTERVAL_MS):
    // four of them are 24 MiB.
    const asks = 4;
    for (let i = 0; i < asks; i++) {
      slow.ws.send(STEP1);
      await new Promise((resolve) => setTimeout(resolve, STATE_REQUEST_INTERVAL_MS + 100));
    }
    // Then its presence: once the watcher has it, the server has handled the asks before it (and kept the socket).
    slow.ws.send(awareness([880001, 1, '{}']));
    await until(() => watcher.states().has(880001) || onServer.readyState !== WebSocket.OPEN, 15_000);
    socket.resume();
    const outcome = await new Promise<string>((resolve) => {
      const check = () => { if (slow.got.filter(isStep2).length === asks) resolve('open: every answer sent'); };
      slow.ws.on('message', check);
      check();
      void slow.closed.then((c) => resolve(`closed ${c.code} ${c.reason}`));
    });
    expect(outcome).toBe('closed 1013 too slow: messages sent were not read');
    expect(slow.got.filter(isStep2).length).toBeLessThan(asks);
    // The watcher was not affected.
    expect(watcher.provider.wsconnected).toBe(true);
    watcher.provider.destroy();
  }, 60_000);
});

describe('message rate', () => {
  it(`a socket sending more than ${COLLAB_MESSAGE_BURST} messages at once is closed (1008 "too many messages"); other sockets are not`, async () => {
    const id = await newDoc('rate');
    const watcher = await client(id);
    const flood = await raw(id, 'read');
    for (let i = 0; i < COLLAB_MESSAGE_BURST + 50; i++) flood.ws.send(QUERY_AWARENESS);
    expect(await flood.closed).toEqual({ code: 1008, reason: 'too many messages' });
    expect(watcher.provider.wsconnected).toBe(true);
    // A burst within the bound keeps its socket.
    const calm = await raw(id, 'read');
    for (let i = 0; i < 50; i++) calm.ws.send(QUERY_AWARENESS);
    expect(await probe(calm)).toBe('open');
    watcher.provider.destroy();
  });
});
