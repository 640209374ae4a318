import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { uuidv7 } from '../../core/ids.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
  b = await newTenant(t.app);
});
afterAll(async () => { await t?.close(); });

const req = (who: Tenant, method: string, url: string, payload?: unknown) =>
  t.app.inject({ method: method as 'GET', url, headers: who.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });

/** A minimal offline client: applies pages to a local map; returns the next `since`. */
async function pullAll(who: Tenant, type: string, state: Map<string, Record<string, unknown>>, since?: number, limit = 5): Promise<{ since: number; pages: number; seen: string[] }> {
  let cursor: string | undefined;
  let pages = 0;
  const seen: string[] = [];
  for (;;) {
    const qs = new URLSearchParams({ limit: String(limit), ...(since !== undefined ? { since: String(since) } : {}), ...(cursor ? { cursor } : {}) });
    const r = await req(who, 'GET', `/v1/sync/${type}?${qs}`);
    if (r.statusCode !== 200) throw new Error(r.body);
    const d = r.json().data;
    pages++;
    for (const it of d.items) { state.set(it.id, it); seen.push(it.id); }
    for (const del of d.deleted) { state.delete(del.id); seen.push(del.id); }
    if (!d.has_more) return { since: d.server_time, pages, seen };
    cursor = d.next_cursor;
  }
}

describe('offline sync preferences', () => {
  it('serves spec 2.8 values', async () => {
    const r = await req(a, 'GET', '/v1/preferences/offline-sync');
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ enabled: true, max_items: 500, sync_on_reconnect: true, storage_limit_mb: 50 });
    expect(r.json().data.resource_types).toEqual(['entities', 'relationships', 'documents', 'tasks', 'comments', 'projects']);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/preferences/offline-sync' }), 401, 'AUTH_REQUIRED');
  });

  it('answers safe defaults when the database fails', async () => {
    await req(a, 'PUT', '/v1/settings/preferences', { preferences: { offline_sync: { enabled: false, storage_limit_mb: 200 } } });
    expect((await req(a, 'GET', '/v1/preferences/offline-sync')).json().data).toMatchObject({ enabled: false, storage_limit_mb: 200 });
    const db = t.platform.db as unknown as { tenant: unknown };
    const original = db.tenant;
    db.tenant = async () => { throw new Error('database down'); };
    try {
      const r = await req(a, 'GET', '/v1/preferences/offline-sync');
      expect(r.statusCode).toBe(200);
      expect(r.json().data).toMatchObject({ enabled: true, max_items: 500, sync_on_reconnect: true, storage_limit_mb: 50 });
    } finally { db.tenant = original; }
  });
});

describe('entities, relationships, comments', () => {
  it('CRUD with errors', async () => {
    const e1 = (await req(a, 'POST', '/v1/entities', { name: 'Billing service', entity_type: 'system', properties: { tier: 1 } })).json().data;
    const e2 = (await req(a, 'POST', '/v1/entities', { name: 'Ledger', entity_type: 'system' })).json().data;
    expect(e1).toMatchObject({ name: 'Billing service', entity_type: 'system', properties: { tier: 1 }, description: null, project_id: null, created_by: a.userId });
    errorOf(await req(a, 'POST', '/v1/entities', { name: 'x' }), 400, 'VALIDATION_ERROR');
    errorOf(await req(a, 'POST', '/v1/entities', { name: 'x', entity_type: 'a b' }), 400, 'VALIDATION_ERROR');
    errorOf(await req(a, 'POST', '/v1/entities', { name: 'x', entity_type: 't', project_id: uuidv7() }), 404, 'NOT_FOUND');
    errorOf(await req(a, 'PUT', `/v1/entities/${e1.id}`, {}), 400, 'VALIDATION_ERROR');
    expect((await req(a, 'PUT', `/v1/entities/${e1.id}`, { description: 'Pays' })).json().data.description).toBe('Pays');
    errorOf(await req(b, 'GET', `/v1/entities/${e1.id}`), 404, 'NOT_FOUND');
    expect((await req(a, 'GET', '/v1/entities?entity_type=system')).json().pagination.total).toBe(2);

    const rel = await req(a, 'POST', '/v1/relationships', { source_entity_id: e1.id, target_entity_id: e2.id, relationship_type: 'writes_to' });
    expect(rel.statusCode).toBe(201);
    errorOf(await req(a, 'POST', '/v1/relationships', { source_entity_id: e1.id, target_entity_id: e2.id, relationship_type: 'writes_to' }), 409, 'CONFLICT');
    errorOf(await req(a, 'POST', '/v1/relationships', { source_entity_id: e1.id, target_entity_id: uuidv7(), relationship_type: 'x' }), 404, 'NOT_FOUND');
    expect((await req(a, 'GET', `/v1/relationships?entity_id=${e2.id}`)).json().data).toHaveLength(1);
    expect((await req(a, 'PUT', `/v1/relationships/${rel.json().data.id}`, { properties: { w: 2 } })).json().data.properties).toEqual({ w: 2 });
    // Deleting an entity removes its relationships.
    expect((await req(a, 'DELETE', `/v1/entities/${e2.id}`)).json().data).toEqual({ id: e2.id, deleted: true });
    errorOf(await req(a, 'GET', `/v1/relationships/${rel.json().data.id}`), 404, 'NOT_FOUND');

    const doc = (await req(a, 'POST', '/v1/documents', { title: 'Discussed' })).json().data;
    const c = await req(a, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'Looks good' });
    expect(c.statusCode).toBe(201);
    expect(c.json().data).toMatchObject({ target_type: 'document', target_id: doc.id, body: 'Looks good', author_id: a.userId });
    errorOf(await req(a, 'POST', '/v1/comments', { target_type: 'document', target_id: uuidv7(), body: 'x' }), 404, 'NOT_FOUND');
    errorOf(await req(b, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'x' }), 404, 'NOT_FOUND');
    errorOf(await req(a, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'x-content-policy-test-violation' }), 422, 'CONTENT_POLICY_VIOLATION');
    errorOf(await req(a, 'GET', `/v1/comments?target_type=project&target_id=${doc.id}`), 400, 'INVALID_PARAMETER');
    expect((await req(a, 'GET', `/v1/comments?target_type=document&target_id=${doc.id}`)).json().data.map((x: { body: string }) => x.body)).toEqual(['Looks good']);
    expect((await req(a, 'PUT', `/v1/comments/${c.json().data.id}`, { body: 'Edited' })).json().data.body).toBe('Edited');
    errorOf(await req(b, 'PUT', `/v1/comments/${c.json().data.id}`, { body: 'x' }), 404, 'NOT_FOUND');
    expect((await req(a, 'DELETE', `/v1/comments/${c.json().data.id}`)).json().data.deleted).toBe(true);
  });
});

describe('GET /v1/sync/{resourceType}', () => {
  it('bulk, then delta with tombstones; validation', async () => {
    const c = await newTenant(t.app);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await req(c, 'POST', '/v1/entities', { name: `E${i}`, entity_type: 'thing' })).json().data.id);
    const state = new Map<string, Record<string, unknown>>();
    const first = await pullAll(c, 'entities', state, undefined, 3);
    expect(first.pages).toBe(3);
    expect([...state.keys()].sort()).toEqual([...ids].sort());
    await req(c, 'PUT', `/v1/entities/${ids[0]}`, { name: 'E0 renamed' });
    await req(c, 'DELETE', `/v1/entities/${ids[1]}`);
    const added = (await req(c, 'POST', '/v1/entities', { name: 'E7', entity_type: 'thing' })).json().data.id;
    const r = (await req(c, 'GET', `/v1/sync/entities?since=${first.since}`)).json().data;
    expect(r.mode).toBe('delta');
    expect(r.items.map((x: { id: string }) => x.id).sort()).toEqual([ids[0], added].sort());
    expect(r.deleted.map((x: { id: string }) => x.id)).toEqual([ids[1]]);
    expect(r.items.find((x: { id: string }) => x.id === ids[0]).name).toBe('E0 renamed');
    expect(r.items[0].created_at).toMatch(/Z$/);
    // Bulk never lists tombstones.
    expect((await req(c, 'GET', '/v1/sync/entities')).json().data.deleted).toEqual([]);
    // Other organizations see nothing of it.
    expect((await req(b, 'GET', `/v1/sync/entities?since=0`)).json().data.items.filter((x: { id: string }) => ids.includes(x.id))).toEqual([]);
    errorOf(await req(c, 'GET', '/v1/sync/widgets'), 400, 'VALIDATION_ERROR'); // the six types are a closed list
    errorOf(await req(c, 'GET', '/v1/sync/entities?since=abc'), 400, 'INVALID_PARAMETER');
    errorOf(await req(c, 'GET', '/v1/sync/entities?limit=501'), 400, 'INVALID_PARAMETER');
    errorOf(await req(c, 'GET', '/v1/sync/entities?cursor=nonsense'), 400, 'INVALID_PARAMETER');
    const page = (await req(c, 'GET', '/v1/sync/entities?limit=1')).json().data;
    errorOf(await req(c, 'GET', `/v1/sync/documents?cursor=${page.next_cursor}`), 400, 'INVALID_PARAMETER');
    const ro = await c.apiKey(['documents:read']);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/sync/entities', headers: { authorization: `Bearer ${ro}` } }), 403, 'FORBIDDEN');
    expect((await t.app.inject({ method: 'GET', url: '/v1/sync/documents', headers: { authorization: `Bearer ${ro}` } })).statusCode).toBe(200);
  });

  it('syncs documents, comments, tasks and projects', async () => {
    const c = await newTenant(t.app);
    const doc = (await req(c, 'POST', '/v1/documents', { title: 'Offline doc', content: 'body' })).json().data;
    await req(c, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'hi' });
    const project = (await req(c, 'POST', '/v1/projects', { name: 'Sync project' })).json().data;
    const task = await req(c, 'POST', `/v1/projects/${project.id}/tasks`, { title: 'Sync task' });
    expect(task.statusCode).toBe(201);
    const d = (await req(c, 'GET', '/v1/sync/documents')).json().data;
    expect(d.items).toHaveLength(1);
    expect(d.items[0]).toMatchObject({ id: doc.id, title: 'Offline doc', content: 'body' });
    expect(d.items[0].search).toBeUndefined();
    expect((await req(c, 'GET', '/v1/sync/comments')).json().data.items).toHaveLength(1);
    expect((await req(c, 'GET', '/v1/sync/projects')).json().data.items.map((x: { id: string }) => x.id)).toEqual([project.id]);
    const tasks = (await req(c, 'GET', '/v1/sync/tasks')).json().data.items;
    expect(tasks.map((x: { title: string }) => x.title)).toEqual(['Sync task']);
    // A task names its status like spec 2.3 and GET /v1/tasks/{id}; a status change comes as a delta.
    expect(tasks[0]).toMatchObject({ id: task.json().data, status_key: 'todo', status_name: 'To do' });
    const before = (await req(c, 'GET', '/v1/sync/tasks')).json().data.server_time;
    expect((await req(c, 'PUT', `/v1/tasks/${task.json().data}`, { status: 'done' })).statusCode).toBe(200);
    const rest = (await req(c, 'GET', `/v1/tasks/${task.json().data}`)).json().data;
    expect((await req(c, 'GET', `/v1/sync/tasks?since=${before}`)).json().data.items).toEqual([
      expect.objectContaining({ id: rest.id, status_id: rest.status_id, status_key: 'done', status_name: rest.status_name }),
    ]);
    // Deleting the document removes its comments: two tombstones.
    const since = (await req(c, 'GET', '/v1/sync/comments')).json().data.server_time;
    await req(c, 'DELETE', `/v1/documents/${doc.id}`);
    expect((await req(c, 'GET', `/v1/sync/comments?since=${since}`)).json().data.deleted).toHaveLength(1);
    expect((await req(c, 'GET', `/v1/sync/documents?since=${since}`)).json().data.deleted.map((x: { id: string }) => x.id)).toEqual([doc.id]);
  });

  it('a synced document is the spec 2.4 record, as GET /v1/documents/{id} returns it', async () => {
    const c = await newTenant(t.app);
    const folder = (await req(c, 'POST', '/v1/documents', { title: 'Folder' })).json().data;
    const doc = (await req(c, 'POST', '/v1/documents', { title: 'Filed', parent_id: folder.id })).json().data;
    const pdf = Buffer.from('%PDF-1.4\n%%EOF\n');
    const file = (method: 'PUT' | 'DELETE') => t.app.inject({ method, url: `/v1/documents/${doc.id}/file`, headers: { ...c.auth, ...(method === 'PUT' ? { 'content-type': 'application/pdf' } : {}) }, ...(method === 'PUT' ? { payload: pdf } : {}) });
    expect((await file('PUT')).statusCode).toBe(200);
    const synced = async () => (await req(c, 'GET', '/v1/sync/documents')).json().data.items.find((x: { id: string }) => x.id === doc.id);
    const rest = (await req(c, 'GET', `/v1/documents/${doc.id}`)).json().data;
    const item = await synced();
    expect(Object.keys(item).sort()).toEqual(Object.keys(rest).sort());
    expect(item).toMatchObject({ id: doc.id, org_id: c.orgId, folder_id: folder.id, parent_id: folder.id, file_url: `/v1/documents/${doc.id}/file`, file_size: pdf.length, created_at: rest.created_at, deleted_at: null });
    expect((await file('DELETE')).statusCode).toBe(200);
    expect(await synced()).toMatchObject({ file_url: null, file_size: null });
  });

  it('waits for an in-flight write instead of skipping it', async () => {
    const c = await newTenant(t.app);
    const client = await t.platform.db.app.connect();
    try {
      await client.query(`SELECT set_config('app.org_id', $1, false)`, [c.orgId]);
      await client.query('BEGIN');
      const slowId = uuidv7();
      await client.query(`INSERT INTO entities (org_id, id, entity_type, name) VALUES ($1, $2, 'x', 'slow')`, [c.orgId, slowId]);
      // A faster writer commits before the slow one does, with a higher change number; the pull must wait for both.
      const fast = req(c, 'POST', '/v1/entities', { name: 'fast', entity_type: 'x' });
      const pull = req(c, 'GET', '/v1/sync/entities?since=0');
      await new Promise((r) => setTimeout(r, 300));
      await client.query('COMMIT');
      await fast;
      const first = (await pull).json().data;
      expect(first.items.map((x: { id: string }) => x.id)).toContain(slowId);
      const state = new Map(first.items.map((x: { id: string }) => [x.id, x]));
      await pullAll(c, 'entities', state as Map<string, Record<string, unknown>>, first.server_time);
      expect(state.size).toBe(2);
    } finally {
      client.release();
    }
  });

  it('writers of one organization do not wait for each other (only a pull waits for them)', async () => {
    const c = await newTenant(t.app);
    const client = await t.platform.db.app.connect();
    try {
      await client.query(`SELECT set_config('app.org_id', $1, false)`, [c.orgId]);
      await client.query('BEGIN');
      await client.query(`INSERT INTO entities (org_id, id, entity_type, name) VALUES ($1, $2, 'x', 'open')`, [c.orgId, uuidv7()]);
      // The open transaction holds the organization's sync lock (shared); another writer still gets through.
      const fast = await Promise.race([req(c, 'POST', '/v1/entities', { name: 'fast', entity_type: 'x' }), new Promise((r) => setTimeout(() => r('blocked'), 3000))]);
      expect(fast).not.toBe('blocked');
      expect((fast as Awaited<ReturnType<typeof req>>).statusCode).toBe(201);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  });

  it('a delta pull starts at the lowest change number after since, even when numbers and times disagree', async () => {
    const c = await newTenant(t.app);
    const x = (await req(c, 'POST', '/v1/entities', { name: 'x', entity_type: 'x' })).json().data.id;
    const y = (await req(c, 'POST', '/v1/entities', { name: 'y', entity_type: 'x' })).json().data.id;
    // Concurrent writers may draw number and time in either order: x has the lower number, but the later time.
    await t.platform.db.sys.query(`UPDATE sync_changes SET changed_at = now() + interval '1 second' WHERE org_id = $1 AND id = $2`, [c.orgId, x]);
    await t.platform.db.sys.query(`UPDATE sync_changes SET changed_at = now() WHERE org_id = $1 AND id = $2`, [c.orgId, y]);
    const [{ since }] = await t.platform.db.sys.query<{ since: number }>(
      `SELECT floor(extract(epoch FROM changed_at) * 1000)::bigint - 1 AS since FROM sync_changes WHERE org_id = $1 AND id = $2`, [c.orgId, y]);
    const seqs = await t.platform.db.sys.query<{ id: string; change_seq: number }>(`SELECT id, change_seq FROM sync_changes WHERE org_id = $1 AND id = ANY($2::uuid[])`, [c.orgId, [x, y]]);
    expect(seqs.find((r) => r.id === x)!.change_seq).toBeLessThan(seqs.find((r) => r.id === y)!.change_seq);
    const state = new Map<string, Record<string, unknown>>();
    await pullAll(c, 'entities', state, since);
    expect([...state.keys()].sort()).toEqual([x, y].sort());
  });

  it('a client paging while another client writes ends with exactly the server state', async () => {
    const c = await newTenant(t.app);
    const live: string[] = [];
    for (let i = 0; i < 30; i++) live.push((await req(c, 'POST', '/v1/entities', { name: `seed ${i}`, entity_type: 'seed' })).json().data.id);
    let writing = true;
    let n = 0;
    const writer = (async () => {
      while (writing) {
        const k = n++;
        const op = k % 3;
        if (op === 0 || live.length < 5) {
          const created = await Promise.all([1, 2].map((j) => req(c, 'POST', '/v1/entities', { name: `w${k}.${j}`, entity_type: 'w' })));
          live.push(...created.map((r) => r.json().data.id));
        } else if (op === 1) {
          const id = live[k % live.length];
          await req(c, 'PUT', `/v1/entities/${id}`, { name: `upd ${k}` });
        } else {
          const id = live.splice(k % live.length, 1)[0];
          await req(c, 'DELETE', `/v1/entities/${id}`);
        }
      }
    })();
    const state = new Map<string, Record<string, unknown>>();
    let { since } = await pullAll(c, 'entities', state, undefined, 4);
    // Keep pulling until the writer has really interleaved a dozen writes (however fast this machine is).
    for (let round = 0; (round < 5 || n < 12) && round < 500; round++) since = (await pullAll(c, 'entities', state, since, 4)).since;
    writing = false;
    await writer;
    since = (await pullAll(c, 'entities', state, since, 4)).since;
    const server = (await t.platform.db.sys.query<{ id: string; name: string; updated_at: string }>(`SELECT id, name, updated_at FROM entities WHERE org_id = $1`, [c.orgId]));
    expect(n).toBeGreaterThanOrEqual(12);
    expect([...state.keys()].sort()).toEqual(server.map((r) => r.id).sort());
    for (const r of server) expect(state.get(r.id)!.name).toBe(r.name);
  });
});
