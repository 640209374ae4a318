import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import { buildTestApp, newTenant, listenLocally, until, type TestApp, type Tenant } from '../../../test/helpers.js';
import { liveRooms, roomKey } from '../../areas/documents/collab.service.js';

/** WS_HEARTBEAT_MS of the test app: short, so that a dead peer is dropped within a test. */
const HEARTBEAT_MS = 150;
/**
 * Timers may fire late on a busy machine (CI runs the test files side by side on two cores): a drop "within two
 * intervals" is allowed this much more. Generous on purpose; what is proven is the drop, not its speed.
 */
const LATE_MS = 2_000;

let t: TestApp;
let base: string;

beforeAll(async () => {
  // One room per organization: a dead peer's room blocks its organization's next document until it is dropped.
  t = await buildTestApp({ wsHeartbeatMs: HEARTBEAT_MS, collabMaxRoomsPerOrg: 1 });
  base = await listenLocally(t);
});
afterAll(async () => { await t?.close(); });

const newDoc = async (who: Tenant) => (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'Heartbeat' } })).json().data.id as string;
const ticket = async (who: Tenant) => (await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: who.auth })).json().data.ticket as string;
async function newSheet(who: Tenant): Promise<string> {
  const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: who.auth, payload: { name: 'Heartbeat' } })).json().data.id;
  return (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: who.auth, payload: { name: 'Heartbeat' } })).json().data.document.id;
}

/**
 * A raw client socket (a frozen peer with `autoPong: false`: it answers no pings and sends nothing), with when it
 * opened, when it closed and with which code, the pings it heard and its JSON messages.
 */
function openSocket(url: string, autoPong: boolean) {
  const s = { ws: new WebSocket(url, { autoPong }), openedAt: 0, closedAt: 0, code: 0, pings: 0, status: 0, msgs: [] as Record<string, unknown>[] };
  s.ws.on('open', () => { s.openedAt = Date.now(); });
  s.ws.on('close', (code) => { s.code = code; s.closedAt = Date.now(); });
  s.ws.on('ping', () => { s.pings++; });
  s.ws.on('message', (d, binary) => { if (!binary) s.msgs.push(JSON.parse(String(d))); });
  s.ws.on('unexpected-response', (_q, res) => { s.status = res.statusCode ?? 0; });
  s.ws.on('error', () => {});
  return s;
}
/** The HTTP status of an upgrade: 101 when the socket opened (then closed), else the refusal's. */
async function upgradeStatus(url: string): Promise<number> {
  const s = openSocket(url, true);
  await until(() => s.openedAt > 0 || s.status > 0);
  s.ws.close();
  return s.openedAt ? 101 : s.status;
}
const orgRooms = (orgId: string) => [...liveRooms(t.platform).keys()].filter((k) => k.startsWith(`${orgId}:`));

describe('WebSocket heartbeat (WS_HEARTBEAT_MS)', () => {
  it('a collaboration socket whose client answers no pings is terminated within two intervals; its room closes and the organization opens another', async () => {
    const x = await newTenant(t.app);
    const [d1, d2] = [await newDoc(x), await newDoc(x)];
    const frozen = openSocket(`${base}/v1/collaboration/ws/${d1}?ticket=${await ticket(x)}`, false);
    await until(() => frozen.openedAt > 0 && orgRooms(x.orgId).length === 1);
    expect(orgRooms(x.orgId)).toEqual([roomKey(x.orgId, d1)]);
    // The frozen peer holds the organization's only room: another document is refused.
    expect(await upgradeStatus(`${base}/v1/collaboration/ws/${d2}?ticket=${await ticket(x)}`)).toBe(429);
    await until(() => frozen.closedAt > 0, 4 * HEARTBEAT_MS + LATE_MS);
    expect(frozen.code).toBe(1006); // terminated: no close frame
    expect(frozen.closedAt - frozen.openedAt).toBeLessThan(2 * HEARTBEAT_MS + LATE_MS);
    await until(() => orgRooms(x.orgId).length === 0);
    expect(await upgradeStatus(`${base}/v1/collaboration/ws/${d2}?ticket=${await ticket(x)}`)).toBe(101);
  });

  it("a sheet socket whose client answers no pings is terminated within two intervals; the sheet's sockets are released", async () => {
    const x = await newTenant(t.app);
    const id = await newSheet(x);
    const fanout = t.platform.fanout;
    const subscribe = fanout.subscribe;
    let subscribed = 0;
    fanout.subscribe = (channel, sub) => {
      if (channel !== `sheet:${x.orgId}:${id}`) return subscribe.call(fanout, channel, sub);
      subscribed++;
      const stop = subscribe.call(fanout, channel, sub);
      return () => { subscribed--; stop(); };
    };
    try {
      const frozen = openSocket(`${base}/v1/sheet/ws?token=${x.token}&documentId=${id}`, false);
      await until(() => frozen.msgs.length === 1);
      expect(frozen.msgs[0]).toMatchObject({ type: 'snapshot', document_id: id });
      expect(subscribed).toBe(1);
      await until(() => frozen.closedAt > 0, 4 * HEARTBEAT_MS + LATE_MS);
      expect(frozen.code).toBe(1006);
      expect(frozen.closedAt - frozen.openedAt).toBeLessThan(2 * HEARTBEAT_MS + LATE_MS);
      // The sheet's last socket left: its set and its fan-out subscription are gone.
      expect(subscribed).toBe(0);
    } finally { fanout.subscribe = subscribe; }
  });

  it('a client that answers pings stays connected across several intervals and keeps receiving updates', async () => {
    const x = await newTenant(t.app);
    const id = await newDoc(x);
    const sheet = await newSheet(x);
    const docs = [new Y.Doc(), new Y.Doc()];
    const [c1, c2] = await Promise.all(docs.map(async (doc) => new WebsocketProvider(`${base}/v1/collaboration/ws`, id, doc,
      { WebSocketPolyfill: WebSocket as never, params: { ticket: await ticket(x) }, disableBc: true })));
    const grid = openSocket(`${base}/v1/sheet/ws?token=${x.token}&documentId=${sheet}`, true);
    try {
      await until(() => c1.synced && c2.synced && grid.msgs.length === 1);
      const first = c1.ws;
      const closes: number[] = [];
      c1.ws!.addEventListener('close', (ev) => closes.push((ev as unknown as { code: number }).code));
      let pings = 0;
      (c1.ws as unknown as WebSocket).on('ping', () => { pings++; });
      // Three pings each: a socket that did not answer would have been dropped at the second.
      await until(() => pings >= 3 && grid.pings >= 3, 20 * HEARTBEAT_MS + LATE_MS);
      expect(closes).toEqual([]);
      expect(grid.closedAt).toBe(0);
      expect(c1.ws).toBe(first);
      docs[1].getText('content').insert(0, 'still here');
      await until(() => docs[0].getText('content').toString() === 'still here');
      const content = JSON.stringify({ sheets: [{ name: 'S', cells: { A1: { v: 7 } } }] });
      expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${sheet}`, headers: x.auth, payload: { content } })).statusCode).toBe(200);
      await until(() => grid.msgs.length === 2);
      expect(grid.msgs[1]).toMatchObject({ type: 'snapshot', document_id: sheet, workbook: JSON.parse(content), display: [{ A1: 7 }] });
      expect(grid.closedAt).toBe(0);
    } finally {
      c1.destroy(); c2.destroy(); grid.ws.close();
    }
  });
});
