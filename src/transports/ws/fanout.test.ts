/**
 * REDIS_URL, WebSocket fan-out: sockets of one document on two nodes of a deployment see each other's changes live
 * (collaboration rooms and sheet sockets), and a deletion on one node closes the sockets of the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import { buildTestApp, newTenant, listenLocally, until, type TestApp, type Tenant } from '../../../test/helpers.js';
import { startRedisServer } from '../../adapters/redis/test-server.js';

let redis: Awaited<ReturnType<typeof startRedisServer>>;
let nodeA: TestApp;
let nodeB: TestApp;
let urlA: string;
let urlB: string;
let owner: Tenant;
const providers: WebsocketProvider[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  [nodeA, nodeB] = await Promise.all([buildTestApp({ redisUrl: redis.url }), buildTestApp({ redisUrl: redis.url })]);
  [urlA, urlB] = await Promise.all([listenLocally(nodeA), listenLocally(nodeB)]);
  owner = await newTenant(nodeA.app);
});
afterAll(async () => {
  for (const p of providers) p.destroy();
  await Promise.all([nodeA?.close(), nodeB?.close()]);
  await redis?.close();
});

const newDoc = async () => (await nodeA.app.inject({ method: 'POST', url: '/v1/documents', headers: owner.auth, payload: { title: 'Two nodes', content: '' } })).json().data.id as string;
const ticket = async (node: TestApp) => (await node.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: owner.auth })).json().data.ticket as string;

/** A stock y-websocket client on `server`, synced with the document. */
async function connect(server: string, node: TestApp, documentId: string) {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(`${server}/v1/collaboration/ws`, documentId, doc, { WebSocketPolyfill: WebSocket as never, params: { ticket: await ticket(node) }, disableBc: true, connect: true });
  providers.push(provider);
  await until(() => provider.synced);
  return { doc, provider, text: doc.getText('content') };
}

/** A new document with a client on each node, both showing `text` typed on node A. */
async function onBothNodes(text: string) {
  const id = await newDoc();
  const one = await connect(urlA, nodeA, id);
  const two = await connect(urlB, nodeB, id);
  one.text.insert(0, text);
  await until(() => two.text.toString() === text);
  return { id, one, two };
}

const storedUpdates = async (documentId: string) =>
  (await nodeA.platform.db.sys.one<{ n: number }>('SELECT count(*)::int AS n FROM document_updates WHERE document_id = $1', [documentId]))!.n;
const contentOn = async (node: TestApp, id: string) => (await node.app.inject({ url: `/v1/documents/${id}`, headers: owner.auth })).json().data.content as string;

describe('collaboration rooms on two nodes (REDIS_URL)', () => {
  it('edits and awareness made on one node reach the sockets of the other, and the stored content has both', async () => {
    const id = await newDoc();
    const one = await connect(urlA, nodeA, id);
    const two = await connect(urlB, nodeB, id);
    const stored = await storedUpdates(id); // the state a first room seeds from the content
    one.text.insert(0, 'Hello');
    await until(() => two.text.toString() === 'Hello');
    // Stored once, by the node whose socket made it (not again by the node that relayed it).
    await until(async () => (await storedUpdates(id)) > stored);
    await new Promise((r) => setTimeout(r, 200));
    expect(await storedUpdates(id)).toBe(stored + 1);
    two.text.insert(5, ', world');
    await until(() => one.text.toString() === 'Hello, world');
    one.provider.awareness.setLocalStateField('user', { name: 'Ada on A' });
    await until(() => two.provider.awareness.getStates().get(one.doc.clientID)?.user?.name === 'Ada on A');
    // Each node stored the updates of its own socket; the content written back holds both.
    await until(async () => (await contentOn(nodeB, id)) === 'Hello, world');
    one.provider.destroy(); two.provider.destroy();
  });

  it('a REST write on a node with no room reaches the room of the other node', async () => {
    const id = await newDoc();
    const two = await connect(urlB, nodeB, id);
    two.text.insert(0, 'draft');
    await until(async () => (await contentOn(nodeA, id)) === 'draft');
    const put = await nodeA.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: owner.auth, payload: { content: 'final text' } });
    expect(put.statusCode).toBe(200);
    await until(() => two.text.toString() === 'final text');
    two.provider.destroy();
  });

  it('an edit made while the nodes were cut off from Redis reaches the other node once they are back', async () => {
    const { one, two } = await onBothNodes('before');
    redis.dropConnections();
    one.text.insert(6, ' during');
    await until(() => two.text.toString() === 'before during', 8000);
    two.text.insert(0, '> ');
    await until(() => one.text.toString() === '> before during');
    one.provider.destroy(); two.provider.destroy();
  });

  it('a deletion of text published while Redis hung reaches the other node afterwards (a state vector does not show it)', async () => {
    const { one, two } = await onBothNodes('Hello world');
    redis.pause();
    try {
      one.text.delete(5, 6);
      await new Promise((r) => setTimeout(r, 1_300)); // the publish has timed out
    } finally { redis.resume(); }
    await until(() => two.text.toString() === 'Hello', 8000);
    one.provider.destroy(); two.provider.destroy();
  });

  it('an edit whose publish failed reaches the other node once Redis answers, though its sender\'s room closed meanwhile', async () => {
    const { id, one, two } = await onBothNodes('base');
    redis.pause();
    try {
      one.text.insert(4, ' typed before closing the tab');
      await until(async () => (await contentOn(nodeA, id)).endsWith('tab')); // stored, and written back, by A
      one.provider.destroy();
      await new Promise((r) => setTimeout(r, 1_100)); // A's publish has failed
    } finally { redis.resume(); }
    await until(() => two.text.toString() === 'base typed before closing the tab', 8000);
    two.provider.destroy();
  });

  it('edits made on two nodes while Redis hung are both in the content written back, before the nodes hear of each other', async () => {
    const { id, one, two } = await onBothNodes('base');
    redis.pause();
    try {
      one.text.insert(4, ' from A');
      two.text.insert(0, 'B: ');
      // Each node stored its own edit; whichever writes back last, the text covers what is stored.
      await until(async () => { const c = await contentOn(nodeA, id); return c.includes('from A') && c.includes('B: '); }, 8000);
      expect(one.text.toString()).toBe('base from A'); // A has not heard B yet
    } finally { redis.resume(); }
    await until(() => one.text.toString() === two.text.toString() && one.text.toString().length === 'B: base from A'.length, 8000);
    one.provider.destroy(); two.provider.destroy();
  });

  it('a node stops hearing a document once its sockets there have closed; unreadable messages from another node are dropped', async () => {
    const id = await newDoc();
    const channel = `platform:fanout:collab:${owner.orgId}:${id}`;
    const one = await connect(urlA, nodeA, id);
    const two = await connect(urlB, nodeB, id);
    await until(() => redis.channels().includes(channel));
    for (const garbage of [Uint8Array.of(), Uint8Array.of(0), Uint8Array.of(0, 2, 200, 1), Uint8Array.of(1, 9), Uint8Array.of(7)]) nodeB.platform.fanout.publish(`collab:${owner.orgId}:${id}`, garbage);
    one.text.insert(0, 'still fine');
    await until(() => two.text.toString() === 'still fine');
    one.provider.destroy(); two.provider.destroy();
    await until(() => !redis.channels().includes(channel));
  });

  it('deleting the document on one node closes its sockets on the other (4404)', async () => {
    const id = await newDoc();
    const two = await connect(urlB, nodeB, id);
    const closed = new Promise<number>((resolve) => two.provider.ws!.addEventListener('close', (e) => resolve((e as CloseEvent).code)));
    expect((await nodeA.app.inject({ method: 'DELETE', url: `/v1/documents/${id}`, headers: owner.auth })).statusCode).toBe(200);
    expect(await closed).toBe(4404);
    two.provider.destroy();
  });
});

/** A sheet socket on `server`, collecting its JSON messages. */
function openSheet(server: string, documentId: string): Promise<{ ws: WebSocket; msgs: Array<Record<string, unknown>>; closed: Promise<number> }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${server}/v1/sheet/ws?token=${owner.token}&documentId=${documentId}`);
    const msgs: Array<Record<string, unknown>> = [];
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('message', (d) => msgs.push(JSON.parse(String(d))));
    ws.on('open', () => resolve({ ws, msgs, closed }));
    ws.on('error', () => {});
  });
}

describe('sheet sockets on two nodes (REDIS_URL)', () => {
  it('a cell edited on one node reaches the other; a REST write sends both a snapshot; a deletion closes both', async () => {
    const project = (await nodeA.app.inject({ method: 'POST', url: '/v1/projects', headers: owner.auth, payload: { name: 'Grid on two nodes' } })).json().data.id;
    const sheetId = (await nodeA.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: owner.auth, payload: { name: 'Shared grid' } })).json().data.document.id as string;
    const onA = await openSheet(urlA, sheetId);
    const onB = await openSheet(urlB, sheetId);
    await until(() => onA.msgs.length > 0 && onB.msgs.length > 0);
    onA.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'B2', value: 7 }));
    await until(() => onB.msgs.some((m) => m.type === 'cell'));
    expect(onB.msgs.find((m) => m.type === 'cell')).toMatchObject({ type: 'cell', cell: 'B2', by: owner.userId, display: { B2: 7 } });

    const wb = (await nodeB.app.inject({ url: `/v1/documents/${sheetId}`, headers: owner.auth })).json().data.content as string;
    const edited = JSON.parse(wb);
    edited.sheets[0].cells.C3 = { v: 'from REST' };
    const put = await nodeB.app.inject({ method: 'PUT', url: `/v1/documents/${sheetId}`, headers: owner.auth, payload: { content: JSON.stringify(edited) } });
    expect(put.statusCode).toBe(200);
    await until(() => onA.msgs.filter((m) => m.type === 'snapshot').length === 2);
    expect(onA.msgs.filter((m) => m.type === 'snapshot').at(-1)).toMatchObject({ display: [{ B2: 7, C3: 'from REST' }] });

    // News another node cannot have sent (malformed, or not news) is dropped; the sockets keep working.
    for (const garbage of ['null', '{"t":"cell"}', '{"t":"cell","cell":7}', '[]', 'not json', '{"t":"explode"}']) nodeB.platform.fanout.publish(`sheet:${owner.orgId}:${sheetId}`, Buffer.from(garbage));
    onB.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'A1', value: 'after' }));
    await until(() => onA.msgs.some((m) => m.type === 'cell' && m.cell === 'A1'));
    expect(onA.msgs.filter((m) => m.type === 'cell').map((m) => m.cell)).toEqual(['B2', 'A1']); // its own edit, then B's: nothing from the garbage

    expect((await nodeB.app.inject({ method: 'DELETE', url: `/v1/documents/${sheetId}`, headers: owner.auth })).statusCode).toBe(200);
    expect(await onA.closed).toBe(4404);
    expect(await onB.closed).toBe(4404);
    await until(() => !redis.channels().includes(`platform:fanout:sheet:${owner.orgId}:${sheetId}`));
  });
});
