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
describe('GET /v1/sheet/ws', () => {
  it('edits cells with formulas and fans out to other sockets', async () => {
    const c1 = await open(a.token);
    const c2 = await open(a.token);
    await until(() => c1.msgs.length > 0 && c2.msgs.length > 0);
    expect(c1.msgs[0]).toMatchObject({ type: 'snapshot', capability: 'write', document_id: sheetId });
    c1.ws.send(JSON.stringify({ type: 'set', id: 1, sheet: 0, cell: 'A1', value: 2 }));
    c1.ws.send(JSON.stringify({ type: 'set', id: 2, sheet: 0, cell: 'A2', formula: '=A1*21' }));
    await until(() => c2.msgs.filter((m) => m.type === 'cell').length === 2);
    expect(c2.msgs.at(-1)).toMatchObject({ type: 'cell', cell: 'A2', data: { f: '=A1*21' }, display: { A1: 2, A2: 42 } });
    expect(c1.msgs.some((m) => m.type === 'ack' && m.id === 2)).toBe(true);
    c1.ws.send(JSON.stringify({ type: 'set', id: 3, sheet: 9, cell: 'A1', value: 1 }));
    c1.ws.send('nope');
    await until(() => c1.msgs.filter((m) => m.type === 'error').length === 2);
    expect(c1.msgs.find((m) => m.type === 'error' && m.id === 3)).toMatchObject({ code: 'VALIDATION_ERROR' });
    const csv = await t.app.inject({ method: 'GET', url: `/v1/sheet/${sheetId}/export?token=${a.token}&format=csv&sheet_id=0` });
    expect(csv.body).toBe('2\r\n42\r\n');
    c1.ws.close(); c2.ws.close();
  });

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
});
