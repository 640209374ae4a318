import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildTestApp, newTenant, errorOf, listenLocally, until, type TestApp, type Tenant } from '../../../test/helpers.js';

let t: TestApp;
let a: Tenant;
let base: string;
let sheetId: string;

beforeAll(async () => {
  t = await buildTestApp();
  base = await listenLocally(t);
  a = await newTenant(t.app);
  const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Grid' } })).json().data.id;
  sheetId = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name: 'Live grid' } })).json().data.document.id;
});
afterAll(async () => { await t?.close(); });

/** Opens a socket and collects its JSON messages. */
function open(token: string, documentId = sheetId): Promise<{ ws: WebSocket; msgs: Record<string, unknown>[]; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${base}/v1/sheet/ws?token=${token}&documentId=${documentId}`);
    const msgs: Record<string, unknown>[] = [];
    ws.on('message', (d) => msgs.push(JSON.parse(String(d))));
    ws.on('open', () => resolve({ ws, msgs }));
    ws.on('unexpected-response', (_q, res) => resolve({ ws, msgs, status: res.statusCode }));
    ws.on('error', () => {});
  });
}
/** A new sheet of tenant a. */
async function newSheet(name: string): Promise<string> {
  const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: `${name} project` } })).json().data.id;
  return (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name } })).json().data.document.id;
}

/**
 * Holds back the sheet socket's reads of the workbook (the snapshot) after they read it: the snapshot's data is then
 * older than what happens meanwhile. Returns how many were held and the function that lets them go (and undoes this).
 */
function holdSnapshotReads(): { held: () => number; release: () => void } {
  const db = t.platform.db;
  const original = db.tenant;
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  let held = 0;
  db.tenant = (async (orgId: string, fn: (sql: never) => Promise<unknown>) => {
    const result = await original.call(db, orgId, fn as never);
    // readWorkbook's read (documentContent); the admission's document lookup and the edits' transactions go on.
    if (orgId === a.orgId && String(fn).includes('documentContent')) { held++; await gate; }
    return result;
  }) as typeof db.tenant;
  return { held: () => held, release: () => { db.tenant = original; release(); } };
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GET /v1/sheet/ws', () => {
  it('the snapshot is the first message: what a client sends at once is answered after it', async () => {
    const id = await newSheet('First things first');
    const hold = holdSnapshotReads();
    let c: Awaited<ReturnType<typeof open>>;
    try {
      c = await open(a.token, id);
      c.ws.send(JSON.stringify({ type: 'ping', id: 'p' }));
      c.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'A1', value: 5 }));
      c.ws.send('nope');
      c.ws.send(JSON.stringify({ type: 'hello', id: 'h' }));
      await until(() => hold.held() === 1);
      await pause(200);
      // The snapshot is still being read: nothing is answered before it.
      expect(c.msgs).toEqual([]);
    } finally { hold.release(); }
    await until(() => c.msgs.length === 6);
    expect(c.msgs.map((m) => m.type)).toEqual(['snapshot', 'pong', 'ack', 'cell', 'error', 'error']);
    // Read before the edit, which its cell message, after it, brings.
    expect(c.msgs[0]).toMatchObject({ type: 'snapshot', document_id: id, workbook: { sheets: [{ cells: {} }] } });
    expect(c.msgs[3]).toMatchObject({ type: 'cell', cell: 'A1', data: { v: 5 }, display: { A1: 5 } });
    expect(c.msgs.slice(4)).toMatchObject([{ code: 'INVALID_JSON' }, { id: 'h', code: 'VALIDATION_ERROR', message: 'Unknown message type' }]);
    c.ws.close();
  });

  it('an edit by another socket or REST while a snapshot is read comes after that snapshot, never before it', async () => {
    const id = await newSheet('Racing the snapshot');
    const c1 = await open(a.token, id);
    await until(() => c1.msgs.length === 1);
    const hold = holdSnapshotReads();
    let c2: Awaited<ReturnType<typeof open>>;
    const content = JSON.stringify({ sheets: [{ name: 'Sheet1', cells: { B1: { v: 7 }, C1: { v: 'rest' } } }] });
    try {
      c2 = await open(a.token, id);
      await until(() => hold.held() === 1); // c2's snapshot is read (an empty sheet) and held back
      c1.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'B1', value: 7 }));
      await until(() => c1.msgs.some((m) => m.type === 'ack'));
      expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content } })).statusCode).toBe(200);
      await pause(200);
      // Neither the edit's cell nor the REST write's snapshot overtakes c2's first snapshot.
      expect(c2.msgs).toEqual([]);
    } finally { hold.release(); }
    await until(() => c2.msgs.length === 3 && c1.msgs.length === 4);
    expect(c2.msgs).toMatchObject([
      { type: 'snapshot', workbook: { sheets: [{ cells: {} }] } },
      { type: 'cell', cell: 'B1', data: { v: 7 } },
      { type: 'snapshot', workbook: JSON.parse(content) },
    ]);
    expect(c1.msgs.map((m) => m.type)).toEqual(['snapshot', 'ack', 'cell', 'snapshot']);
    expect(c1.msgs[3]).toMatchObject({ workbook: JSON.parse(content) });
    c1.ws.close(); c2.ws.close();
  });


  it('edits cells with formulas and fans out to other sockets', async () => {
    const c1 = await open(a.token);
    const c2 = await open(a.token);
    await until(() => c1.msgs.length > 0 && c2.msgs.length > 0);
    expect(c1.msgs[0]).toMatchObject({ type: 'snapshot', capability: 'write', document_id: sheetId });
    c1.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'A1', value: 2 }));
    c1.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'A2', formula: '=A1*21' }));
    await until(() => c2.msgs.filter((m) => m.type === 'cell').length === 2);
    expect(c2.msgs.at(-1)).toMatchObject({ type: 'cell', cell: 'A2', data: { f: '=A1*21' }, display: { A2: 42 } });
    // The display of a cell message is what the edit changed: A1's new value and the formula reading it.
    c1.ws.send(JSON.stringify({ type: 'set', id: 10, sheet: 0, cell: 'A1', value: 3 }));
    await until(() => c2.msgs.filter((m) => m.type === 'cell').length === 3);
    expect(c2.msgs.at(-1)).toEqual({ type: 'cell', sheet: 0, cell: 'A1', data: { v: 3 }, display: { A1: 3, A2: 63 }, by: a.userId });
    c1.ws.send(JSON.stringify({ type: 'set', id: 11, sheet: 0, cell: 'A1', value: 2 }));
    await until(() => c2.msgs.filter((m) => m.type === 'cell').length === 4);
    expect(c1.msgs.some((m) => m.type === 'ack' && m.id === 2)).toBe(true);
    c1.ws.send(JSON.stringify({ type: 'set', id: 3, sheet: 9, cell: 'A1', value: 1 }));
    c1.ws.send('nope');
    await until(() => c1.msgs.filter((m) => m.type === 'error').length === 2);
    expect(c1.msgs.find((m) => m.type === 'error' && m.id === 3)).toMatchObject({ code: 'VALIDATION_ERROR' });
    const csv = await t.app.inject({ method: 'GET', url: `/v1/sheet/${sheetId}/export?token=${a.token}&format=csv&sheet_id=0` });
    expect(csv.body).toBe('2\r\n42\r\n');
    c1.ws.close(); c2.ws.close();
  });

  it('a message nested past JSON_MAX_DEPTH, or whose id is not a short string or a finite number, gets an error; the socket and the server go on', async () => {
    const id = await newSheet('Deep ids');
    const c = await open(a.token, id);
    await until(() => c.msgs.length === 1);
    // 200,000 levels: echoed, the id overflowed JSON.stringify's stack inside the socket's promise chain (the process exited).
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    c.ws.send(`{"type":"ping","id":${deep(200_000)}}`);
    c.ws.send(`{"type":"set","id":1,"sheet":0,"cell":"A1","value":${deep(40)}}`);
    c.ws.send(JSON.stringify({ type: 'ping', id: [1] }));
    c.ws.send(JSON.stringify({ type: 'set', id: { a: 1 }, sheet: 0, cell: 'A1', value: 1 }));
    c.ws.send(JSON.stringify({ type: 'ping', id: 'x'.repeat(201) }));
    c.ws.send(JSON.stringify({ type: 'ping', id: 'x'.repeat(200) }));
    c.ws.send(JSON.stringify({ type: 'ping', id: 7.5 }));
    await until(() => c.msgs.length === 8, 15_000);
    const refusedId = { type: 'error', id: null, code: 'VALIDATION_ERROR', message: '"id" must be a string of at most 200 characters or a finite number' };
    expect(c.msgs.slice(1)).toMatchObject([
      { type: 'error', id: null, code: 'PAYLOAD_TOO_LARGE', message: 'JSON nesting deeper than 32 levels' },
      { type: 'error', id: null, code: 'PAYLOAD_TOO_LARGE' },
      refusedId, refusedId, refusedId,
      { type: 'pong', id: 'x'.repeat(200) },
      { type: 'pong', id: 7.5 },
    ]);
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    // Nothing was written, and the server answers other requests.
    const csv = await t.app.inject({ method: 'GET', url: `/v1/sheet/${id}/export?token=${a.token}&format=csv&sheet_id=0` });
    expect(csv.body).toBe('\r\n');
    expect((await t.app.inject({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
    c.ws.close();
  }, 30_000);

  it('a set whose value is a number past the double range (1e400) is refused, as REST refuses it, and nothing is written', async () => {
    const id = await newSheet('Huge numbers');
    const c = await open(a.token, id);
    await until(() => c.msgs.length === 1);
    c.ws.send('{"type":"set","id":3,"sheet":0,"cell":"D3","value":1e400}');
    c.ws.send('{"type":"set","id":4,"sheet":0,"cell":"D4","value":-1e400}');
    c.ws.send('{"type":"set","id":5,"sheet":0,"cell":"D5","value":1e308}');
    await until(() => c.msgs.some((m) => m.id === 5 && m.type === 'ack'));
    const message = '"value" is a number out of range: numbers must be finite, at most about 1.8e308 in size';
    expect(c.msgs.filter((m) => m.id === 3 || m.id === 4)).toEqual([
      { type: 'error', id: 3, code: 'VALIDATION_ERROR', message },
      { type: 'error', id: 4, code: 'VALIDATION_ERROR', message },
    ]);
    expect(c.msgs.filter((m) => m.type === 'cell').map((m) => m.cell)).toEqual(['D5']);
    const stored = JSON.parse((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.content);
    expect(stored.sheets[0].cells).toEqual({ D5: { v: 1e308 } });
    c.ws.close();
  });

  it('an edit sends every socket only the displayed values it changed, not the whole sheet', async () => {
    // 300 formulas showing a 32,000-character text: each edit of C1 sent all of them, 9.6 MB per socket per edit.
    const cells: Record<string, unknown> = { A1: { v: 'x'.repeat(32_000) } };
    for (let r = 1; r <= 300; r++) cells[`B${r}`] = { f: '=A1' };
    const id = await newSheet('Amplified');
    expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: JSON.stringify({ sheets: [{ name: 'S', cells }] }) } })).statusCode).toBe(200);
    const reader = await open(a.token, id);
    const raw: number[] = [];
    reader.ws.on('message', (d) => raw.push(String(d).length));
    const editor = await open(a.token, id);
    await until(() => reader.msgs.length === 1 && editor.msgs.length === 1);
    editor.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'C1', value: 1 }));
    editor.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'A1', value: 'short' }));
    await until(() => reader.msgs.filter((m) => m.type === 'cell').length === 2);
    const [c1, a1] = reader.msgs.filter((m) => m.type === 'cell');
    expect(c1).toEqual({ type: 'cell', sheet: 0, cell: 'C1', data: { v: 1 }, display: { C1: 1 }, by: a.userId });
    expect(raw[1]).toBeLessThan(200);
    // An edit read by formulas brings them too: A1 and its 300 readers.
    expect(a1.display).toEqual(Object.fromEntries([['A1', 'short'], ...Array.from({ length: 300 }, (_, i) => [`B${i + 1}`, 'short'])]));
    reader.ws.close(); editor.ws.close();
  });

  it('a socket sending past the message rate (50 a second, bursts of 100) is closed with 1008', async () => {
    const c = await open(a.token, await newSheet('Chatty'));
    await until(() => c.msgs.length === 1);
    const closed = new Promise<[number, string]>((resolve) => c.ws.on('close', (code, reason) => resolve([code, String(reason)])));
    for (let i = 0; i < 400; i++) c.ws.send(JSON.stringify({ type: 'ping', id: i }));
    expect(await closed).toEqual([1008, 'too many messages']);
    // Not all answered: the socket closed (what the burst allowed and was not yet answered is not answered either).
    expect(c.msgs.filter((m) => m.type === 'pong').length).toBeLessThan(400);
  });

  it('a socket that does not read is closed with 1013 once more than 8 MiB (beyond its largest message) wait for it, not buffered without end', async () => {
    const id = await newSheet('Slow reader');
    const c = await open(a.token, id);
    await until(() => c.msgs.length === 1);
    const closed = new Promise<[number, string]>((resolve) => c.ws.on('close', (code, reason) => resolve([code, String(reason)])));
    (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    // Each REST write sends the socket a snapshot of 2 MB: 20 of them are 40 MB, past the kernel's buffers and the bound.
    for (let i = 0; i < 20; i++) {
      const content = JSON.stringify({ sheets: [{ name: 'S', cells: { A1: { v: `${i}`.padEnd(2_000_000, 'y') } } }] });
      expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content } })).statusCode).toBe(200);
    }
    (c.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    expect(await closed).toEqual([1013, 'too slow: messages sent were not read']);
    // What it was sent before the close: not every snapshot.
    expect(c.msgs.filter((m) => m.type === 'snapshot').length).toBeLessThan(21);
  }, 60_000);

  it('a cell text or formula the content policy refuses is an error and nothing is written', async () => {
    const c = await open(a.token);
    await until(() => c.msgs.length > 0);
    c.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'C7', value: 'x-content-policy-test-violation' }));
    c.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'C8', formula: '="X-Content-Policy-Test-Violation"' }));
    await until(() => c.msgs.filter((m) => m.type === 'error').length === 2);
    expect(c.msgs.filter((m) => m.type === 'error').map((m) => [m.id, m.code])).toEqual([[1, 'CONTENT_POLICY_VIOLATION'], [2, 'CONTENT_POLICY_VIOLATION']]);
    expect(c.msgs.some((m) => m.type === 'cell' || m.type === 'ack')).toBe(false);
    const doc = (await t.app.inject({ method: 'GET', url: `/v1/documents/${sheetId}`, headers: a.auth })).json().data;
    expect(doc.content).not.toMatch(/content-policy/i);
    c.ws.close();
  });

  it('a REST write of the sheet sends its sockets the new snapshot; deleting it closes them with 4404', async () => {
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Grid 2' } })).json().data.id;
    const id = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name: 'Doomed grid' } })).json().data.document.id;
    const c = await open(a.token, id);
    await until(() => c.msgs.length > 0);
    const content = JSON.stringify({ sheets: [{ name: 'S', cells: { A1: { v: 3 }, A2: { f: '=A1*2' } } }, { name: 'Added', cells: {} }] });
    expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content } })).statusCode).toBe(200);
    await until(() => c.msgs.filter((m) => m.type === 'snapshot').length === 2);
    expect(c.msgs.at(-1)).toMatchObject({ type: 'snapshot', document_id: id, capability: 'write', workbook: JSON.parse(content), display: [{ A1: 3, A2: 6 }, {}] });
    const closed = new Promise<number>((r) => c.ws.on('close', (code) => r(code)));
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/documents/${id}`, headers: a.auth })).statusCode).toBe(200);
    expect(await closed).toBe(4404);
  });

  it('the snapshot a viewer or editor gets on connect shows formulas past the work bounds as #ERROR!, one budget for the whole workbook', async () => {
    const id = await newSheet('Heavy grid');
    const sum100k = '=SUM(A1:A100000)'; // 16 characters + 100,000 range cells / 10: 10,016 of the budget
    // The reported formula: a hundred 100,000-cell ranges in 1 KB, which stalled the server on every connect.
    const first: Record<string, { v?: number; f?: string }> = { A1: { v: 1 }, B1: { f: `=SUM(${Array(100).fill('A2:CV1001').join(',')})` } };
    const shown: Record<string, number | string> = { A1: 1, B1: '#ERROR!' };
    for (let i = 2; i <= 25; i++) { first[`B${i}`] = { f: sum100k }; shown[`B${i}`] = 1; }
    const content = JSON.stringify({ sheets: [
      { name: 'S', cells: first },
      // What the first sheet left of the recalculation budget (250,000 - 1,005 - 24 x 10,016 = 8,611) is not enough here.
      { name: 'T', cells: { A1: { v: 5 }, B1: { f: sum100k }, B2: { f: '=A1*2' } } },
    ] });
    expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content } })).statusCode).toBe(200);
    const c = await open(a.token, id);
    await until(() => c.msgs.length > 0);
    expect(c.msgs[0]).toMatchObject({ type: 'snapshot', display: [shown, { A1: 5, B1: '#ERROR!', B2: 10 }] });
    c.ws.close();
  });

  it('read-only for viewers; refused tokens; 426 without upgrade', async () => {
    const v = await newTenant(t.app);
    const vProject = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: v.auth, payload: { name: 'Mine' } })).json().data.id;
    const vSheet = (await t.app.inject({ method: 'POST', url: `/v1/projects/${vProject}/sheets`, headers: v.auth, payload: { name: 'S' } })).json().data.document.id;
    await t.platform.db.sys.exec(`UPDATE memberships SET role = 'viewer' WHERE user_id = $1`, [v.userId]);
    t.platform.credentials.invalidate();
    const ro = await open(v.token, vSheet);
    await until(() => ro.msgs.length > 0);
    expect(ro.msgs[0]).toMatchObject({ type: 'snapshot', capability: 'read' });
    ro.ws.send(JSON.stringify({ type: 'set', id: 'x', sheet: 0, cell: 'A1', value: 1 }));
    await until(() => ro.msgs.some((m) => m.type === 'error'));
    expect(ro.msgs.find((m) => m.type === 'error')).toMatchObject({ code: 'PERMISSION_DENIED' });
    ro.ws.close();
    expect((await open(v.token)).status).toBe(404); // another organization's sheet
    expect((await open('garbage')).status).toBe(401);
    expect((await open(await a.apiKey())).status).toBe(401);
    await t.platform.db.sys.exec(`UPDATE users SET token_version = token_version + 1 WHERE id = $1`, [v.userId]);
    t.platform.credentials.invalidate();
    expect((await open(v.token, vSheet)).status).toBe(401);
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/sheet/ws?token=${a.token}&documentId=${sheetId}` }), 426, 'UPGRADE_REQUIRED');
    // Spec 4.5: 426 without Upgrade, whatever the query; with Upgrade a missing documentId is 400.
    errorOf(await t.app.inject({ method: 'GET', url: `/v1/sheet/ws?token=${a.token}` }), 426, 'UPGRADE_REQUIRED');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/sheet/ws' }), 426, 'UPGRADE_REQUIRED');
    const noDoc = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${base}/v1/sheet/ws?token=${a.token}`);
      ws.on('unexpected-response', (_q, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => { ws.close(); resolve(101); });
      ws.on('error', () => {});
    });
    expect(noDoc).toBe(400);
  });

  it('edits build on what is stored: a REST write through another node between two socket edits is kept (the parse this node keeps of its last edit is not used for other text)', async () => {
    const id = await newSheet('Kept between edits');
    const c = await open(a.token, id);
    await until(() => c.msgs.some((m) => m.type === 'snapshot'));
    const acks = () => c.msgs.filter((m) => m.type === 'ack').length;
    c.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'A1', value: 1 }));
    await until(() => acks() === 1);
    c.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'A2', value: 2 }));
    await until(() => acks() === 2);
    // Another node of the same database (no REDIS_URL: this node's sockets do not hear of it, so no new snapshot).
    const other = await buildTestApp();
    try {
      const put = await other.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: JSON.stringify({ sheets: [{ name: 'From REST', cells: { B1: { v: 'rest' } } }] }) } });
      expect(put.statusCode).toBe(200);
    } finally { await other.close(); }
    c.ws.send(JSON.stringify({ type: 'set', id: 3, sheet: 0, cell: 'C1', value: 3 }));
    await until(() => acks() === 3);
    c.ws.send(JSON.stringify({ type: 'set', id: 4, sheet: 0, cell: 'C2', value: 4 }));
    await until(() => acks() === 4);
    const stored = (await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: a.auth })).json().data.content;
    expect(JSON.parse(stored)).toEqual({ sheets: [{ name: 'From REST', cells: { B1: { v: 'rest' }, C1: { v: 3 }, C2: { v: 4 } } }] });
    c.ws.close();
  });
});
