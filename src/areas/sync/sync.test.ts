import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, until, type TestApp, type Tenant } from '../../../test/helpers.js';
import { uuidv7 } from '../../core/ids.js';
import { memberOf } from '../projects/projects.fixtures.js';

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

  it('says enabled: false where sync cannot run (the documents feature off: GET /v1/sync/* is 403), whatever the preference', async () => {
    const c = await newTenant(t.app);
    const entitlements = (features: string[]) => t.app.inject({ method: 'PUT', url: `/v1/admin/organizations/${c.orgId}/entitlements`,
      headers: { authorization: `Bearer ${t.rootKey}` }, payload: { features } });
    const before = (await req(c, 'GET', '/v1/me')).json().data.organization.features as string[];
    expect((await entitlements(before.filter((f) => f !== 'documents'))).statusCode).toBe(200);
    expect((await req(c, 'GET', '/v1/preferences/offline-sync')).json().data).toMatchObject({ enabled: false, max_items: 500 });
    errorOf(await req(c, 'GET', '/v1/sync/entities'), 403, 'FEATURE_DISABLED');
    expect((await entitlements(before)).statusCode).toBe(200);
    expect((await req(c, 'GET', '/v1/preferences/offline-sync')).json().data.enabled).toBe(true);
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
    // Names follow the rule of every name: something visible, no bidirectional overrides (core nonBlankText).
    expect(errorOf(await req(a, 'POST', '/v1/entities', { name: '\u200B ', entity_type: 't' }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'name', reason: 'BLANK' });
    expect(errorOf(await req(a, 'POST', '/v1/entities', { name: 'abc\u202Eexe.txt', entity_type: 't' }), 400, 'VALIDATION_ERROR').details).toMatchObject({ reason: 'BIDI_CONTROL' });
    expect(errorOf(await req(a, 'PUT', `/v1/entities/${e1.id}`, { name: 'abc\u202Eexe.txt' }), 400, 'VALIDATION_ERROR').details).toMatchObject({ reason: 'BIDI_CONTROL' });
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

  it('only the author edits a comment; an admin may delete it but not edit it', async () => {
    const m = await memberOf(t.app, a, 'member');
    const asM = { ...a, auth: m.auth };
    const doc = (await req(a, 'POST', '/v1/documents', { title: 'Reviewed' })).json().data;
    const mine = (await req(a, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'By the owner' })).json().data;
    const theirs = (await req(asM, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'By a member' })).json().data;
    expect(errorOf(await req(asM, 'PUT', `/v1/comments/${mine.id}`, { body: 'x' }), 403, 'PERMISSION_DENIED').details).toMatchObject({ permission: 'comment.author' });
    expect(errorOf(await req(asM, 'DELETE', `/v1/comments/${mine.id}`), 403, 'PERMISSION_DENIED').details).toMatchObject({ permission: 'org.manage_members' });
    expect(errorOf(await req(a, 'PUT', `/v1/comments/${theirs.id}`, { body: 'x' }), 403, 'PERMISSION_DENIED').details).toMatchObject({ permission: 'comment.author' });
    expect((await req(a, 'GET', `/v1/comments?target_type=document&target_id=${doc.id}`)).json().data.map((x: { body: string }) => x.body)).toEqual(['By the owner', 'By a member']);
    expect((await req(a, 'DELETE', `/v1/comments/${theirs.id}`)).json().data).toEqual({ id: theirs.id, deleted: true });
    expect((await req(asM, 'PUT', `/v1/comments/${mine.id}`, { body: 'x' })).statusCode).toBe(403);
  });

  it('a page past the end keeps the exact total (entities, relationships, comments)', async () => {
    const c = await newTenant(t.app);
    const e1 = (await req(c, 'POST', '/v1/entities', { name: 'One', entity_type: 'thing' })).json().data;
    const e2 = (await req(c, 'POST', '/v1/entities', { name: 'Two', entity_type: 'thing' })).json().data;
    await req(c, 'POST', '/v1/relationships', { source_entity_id: e1.id, target_entity_id: e2.id, relationship_type: 'links' });
    const doc = (await req(c, 'POST', '/v1/documents', { title: 'Talked about' })).json().data;
    await req(c, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'First' });
    const past = async (url: string) => { const r = (await req(c, 'GET', url)).json(); return { n: r.data.length, ...r.pagination }; };
    expect(await past('/v1/entities?offset=5&limit=2')).toEqual({ n: 0, total: 2, limit: 2, offset: 5, has_more: false });
    expect(await past('/v1/entities?entity_type=none&offset=5')).toMatchObject({ n: 0, total: 0 });
    expect(await past('/v1/relationships?offset=3')).toMatchObject({ n: 0, total: 1 });
    expect(await past(`/v1/relationships?entity_id=${e2.id}&offset=1`)).toMatchObject({ n: 0, total: 1 });
    expect(await past(`/v1/comments?target_type=document&target_id=${doc.id}&offset=1`)).toMatchObject({ n: 0, total: 1 });
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
    // An altered cursor of the right shape: its values are checked before they reach a statement.
    const issued = JSON.parse(Buffer.from(page.next_cursor, 'base64url').toString());
    for (const altered of [{ a: 'x' }, { b: 1e300 }, { a: -1 }, { t: 1.5 }, { s: '0' }, { b: null }]) {
      const forged = Buffer.from(JSON.stringify({ ...issued, ...altered })).toString('base64url');
      errorOf(await req(c, 'GET', `/v1/sync/entities?cursor=${forged}`), 400, 'INVALID_PARAMETER');
    }
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
    const projects = (await req(c, 'GET', '/v1/sync/projects')).json().data.items;
    expect(projects.map((x: { id: string }) => x.id)).toEqual([project.id]);
    // Records carry org_id as their REST records do (spec 2.2 for a project).
    expect(projects[0]).toMatchObject({ org_id: c.orgId, name: (await req(c, 'GET', `/v1/projects/${project.id}`)).json().data.name });
    // A soft-deleted project is hidden from listings (spec part 3), the bulk download included; a delta carries the
    // delete as an update (the row stays), and an archived one stays in the bulk.
    const gone = (await req(c, 'POST', '/v1/projects', { name: 'Deleted project' })).json().data;
    const archived = (await req(c, 'POST', '/v1/projects', { name: 'Archived project' })).json().data;
    const beforeDelete = (await req(c, 'GET', '/v1/sync/projects')).json().data.server_time;
    expect((await req(c, 'DELETE', `/v1/projects/${gone.id}`)).statusCode).toBe(200);
    expect((await req(c, 'PUT', `/v1/projects/${archived.id}`, { is_active: false })).statusCode).toBe(200);
    expect((await req(c, 'GET', '/v1/sync/projects')).json().data.items.map((x: { id: string }) => x.id).sort()).toEqual([project.id, archived.id].sort());
    const delta = (await req(c, 'GET', `/v1/sync/projects?since=${beforeDelete}`)).json().data;
    expect(delta.items.find((x: { id: string }) => x.id === gone.id)).toMatchObject({ is_active: false, deleted_at: expect.any(String) });
    expect(delta.deleted).toEqual([]);
    const tasks = (await req(c, 'GET', '/v1/sync/tasks')).json().data.items;
    expect(tasks.map((x: { title: string }) => x.title)).toEqual(['Sync task']);
    // A task names its status like spec 2.3 and GET /v1/tasks/{id}; a status change comes as a delta.
    expect(tasks[0]).toMatchObject({ id: task.json().data, status_key: 'todo', status_name: 'To do' });
    expect(tasks[0].org_id).toBeUndefined(); // as GET /v1/tasks/{id} (spec 2.3 has none)
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

  it('a page of documents ends once its records weigh 32 MiB; the cursor goes on from there, nothing skipped or repeated', async () => {
    const c = await newTenant(t.app);
    const ids: string[] = [];
    for (const title of ['Heavy 1', 'Heavy 2', 'Heavy 3', 'Heavy 4', 'Light 5']) ids.push((await req(c, 'POST', '/v1/documents', { title })).json().data.id);
    // No indexing job may rewrite a row (and move it in change order) after this: queued ones go, running ones end.
    await t.platform.db.sys.exec(`DELETE FROM jobs WHERE org_id = $1 AND status = 'pending'`, [c.orgId]);
    await until(async () => Number((await t.platform.db.sys.one<{ n: string }>(`SELECT count(*) AS n FROM jobs WHERE org_id = $1 AND status = 'running'`, [c.orgId]))!.n) === 0, 20_000);
    // 17 MiB each (more than the API takes, as a restored database may hold): the third starts past 32 MiB.
    // One statement each, in order: one UPDATE of all four would give them change numbers in the order it met the rows
    // on disk, which the indexing job's earlier rewrites may have shuffled.
    for (const title of ['Heavy 1', 'Heavy 2', 'Heavy 3', 'Heavy 4']) {
      await t.platform.db.sys.exec(`UPDATE documents SET content = repeat('s', 17 * 1048576) WHERE org_id = $1 AND title = $2`, [c.orgId, title]);
    }
    const pages: Array<{ titles: string[]; lengths: number[]; has_more: boolean }> = [];
    let cursor: string | undefined;
    do {
      const d = (await req(c, 'GET', `/v1/sync/documents${cursor ? `?cursor=${cursor}` : ''}`)).json().data;
      pages.push({ titles: d.items.map((x: { title: string }) => x.title), lengths: d.items.map((x: { content: string }) => x.content.length), has_more: d.has_more });
      cursor = d.next_cursor ?? undefined;
    } while (cursor);
    const mib17 = 17 * 1048576;
    // Updated last, the heavy ones come after Light 5 in change order.
    expect(pages).toEqual([
      { titles: ['Light 5', 'Heavy 1', 'Heavy 2'], lengths: [0, mib17, mib17], has_more: true },
      { titles: ['Heavy 3', 'Heavy 4'], lengths: [mib17, mib17], has_more: false },
    ]);
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
    // Every pull pass (one paging run: first page without cursor, then its next_cursor chain) as the ids it delivered.
    const passes: Array<{ pages: number; seen: string[] }> = [];
    const pass = async (since?: number) => { const r = await pullAll(c, 'entities', state, since, 4); passes.push(r); return r.since; };
    let since = await pass();
    // Keep pulling until the writer has really interleaved a dozen writes (however fast this machine is).
    for (let round = 0; (round < 5 || n < 12) && round < 500; round++) since = await pass(since);
    writing = false;
    await writer;
    since = await pass(since);
    const server = (await t.platform.db.sys.query<{ id: string; name: string; updated_at: string }>(`SELECT id, name, updated_at FROM entities WHERE org_id = $1`, [c.orgId]));
    expect(n).toBeGreaterThanOrEqual(12);
    expect([...state.keys()].sort()).toEqual(server.map((r) => r.id).sort());
    for (const r of server) expect(state.get(r.id)!.name).toBe(r.name);
    // No change repeated across the pages of one pass, and this holds without exception, even for a record the
    // writer rewrites (PUT, DELETE) between two pages of the pass: sync_changes keeps ONE row per record (primary key
    // org, type, id) whose change_seq every write replaces with a new, higher number. A pass pins `bound` at its first
    // page and serves disjoint keyset ranges (cursor, bound] in change_seq order, and every write after the barrier
    // draws a number above `bound`. So a record delivered on page k that is written again moves out of this pass (it
    // comes in the next one, which a later pass may legitimately deliver again), and can never show up on page k+j.
    // Hence: within one pass every id (items and tombstones together) appears exactly once. Across passes repeats are
    // expected and not checked. Here the check guards every page boundary of every pass under concurrent writes (the
    // bulk pass alone has several pages). How many writes land inside a multi-page pass depends on timing (on a fast
    // machine the bulk pass may end before the writer's first commit, and delta passes are mostly one page), so the
    // rewrite-between-pages case is pinned deterministically by the next test.
    expect(passes[0]!.pages).toBeGreaterThanOrEqual(3);
    for (const p of passes) {
      const counts = new Map<string, number>();
      for (const id of p.seen) counts.set(id, (counts.get(id) ?? 0) + 1);
      expect([...counts].filter(([, k]) => k !== 1)).toEqual([]);
    }
  });

  it('a pull includes every change committed before it, even one rewritten while the pull runs', async () => {
    const c = await newTenant(t.app);
    const misses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const since = Date.now() - 1;
      const id = (await req(c, 'POST', '/v1/entities', { name: `W${i}`, entity_type: 'w' })).json().data.id as string;
      // The record is rewritten while the pull runs (as the documents' indexing job does right after a write).
      const [pulled] = await Promise.all([req(c, 'GET', `/v1/sync/entities?since=${since}`), req(c, 'PUT', `/v1/entities/${id}`, { name: `W${i} again` })]);
      if (!pulled.json().data.items.some((x: { id: string }) => x.id === id)) misses.push(i);
    }
    expect(misses).toEqual([]);
  });

  it('a record written again between two pages of a pull is not repeated in that pull; the next pull brings it', async () => {
    const c = await newTenant(t.app);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await req(c, 'POST', '/v1/entities', { name: `P${i}`, entity_type: 'p' })).json().data.id);
    await new Promise((r) => setTimeout(r, 5)); // no seed shares the millisecond of server_time (it could come once more)
    const get = async (qs: string) => { const r = await req(c, 'GET', `/v1/sync/entities?${qs}`); expect(r.statusCode).toBe(200); return r.json().data; };
    const ofPage = (d: { items: Array<{ id: string }>; deleted: Array<{ id: string }> }) => [...d.items.map((x) => x.id), ...d.deleted.map((x) => x.id)];
    const p1 = await get('limit=2');
    expect(ofPage(p1)).toEqual([ids[0], ids[1]]); // change order = creation order
    // Between pages: rewrite and delete records already delivered, rewrite one not yet delivered, add one.
    expect((await req(c, 'PUT', `/v1/entities/${ids[0]}`, { name: 'P0 again' })).statusCode).toBe(200);
    expect((await req(c, 'DELETE', `/v1/entities/${ids[1]}`)).statusCode).toBe(200);
    expect((await req(c, 'PUT', `/v1/entities/${ids[4]}`, { name: 'P4 again' })).statusCode).toBe(200);
    const added = (await req(c, 'POST', '/v1/entities', { name: 'P6', entity_type: 'p' })).json().data.id;
    const seen = ofPage(p1);
    let page = p1;
    while (page.has_more) { page = await get(`limit=2&cursor=${encodeURIComponent(page.next_cursor)}`); seen.push(...ofPage(page)); expect(page.server_time).toBe(p1.server_time); }
    // The pass keeps the change set its first page pinned: each id once; P4 (rewritten before it was served) and P6
    // (new) moved past the pass's bound and are left to the next pull.
    expect(seen).toEqual([ids[0], ids[1], ids[2], ids[3], ids[5]]);
    const next = await get(`since=${p1.server_time}`);
    expect(next).toMatchObject({ mode: 'delta', has_more: false, next_cursor: null });
    expect(next.items.map((x: { id: string; name: string }) => [x.id, x.name])).toEqual([[ids[0], 'P0 again'], [ids[4], 'P4 again'], [added, 'P6']]);
    expect(next.deleted.map((x: { id: string }) => x.id)).toEqual([ids[1]]);
  });

  it('GET /v1/sync/relationships: bulk, delta, tombstones (direct and by entity delete), isolation', async () => {
    const c = await newTenant(t.app);
    const d = await newTenant(t.app);
    type Rec = Record<string, unknown> & { id: string };
    const entity = async (who: Tenant, name: string) => {
      const r = await req(who, 'POST', '/v1/entities', { name, entity_type: 'system' });
      expect(r.statusCode).toBe(201);
      return r.json().data.id as string;
    };
    const relate = async (who: Tenant, body: Record<string, unknown>) => {
      const r = await req(who, 'POST', '/v1/relationships', body);
      expect(r.statusCode).toBe(201);
      return r.json().data as Rec;
    };
    // A synced relationship is exactly its REST record (org_id included).
    const synced = (rest: Rec) => { expect(rest.org_id).toBe(c.orgId); return rest; };
    const restOf = async (who: Tenant, id: string) => (await req(who, 'GET', `/v1/relationships/${id}`)).json().data as Rec;
    const sync = async (who: Tenant, qs = '') => {
      const r = await req(who, 'GET', `/v1/sync/relationships${qs ? `?${qs}` : ''}`);
      expect(r.statusCode).toBe(200);
      return r.json().data;
    };
    const ids = (list: Array<{ id: string }>) => list.map((x) => x.id);

    const [e1, e2, e3] = [await entity(c, 'Billing'), await entity(c, 'Ledger'), await entity(c, 'Mailer')];
    const r1 = await relate(c, { source_entity_id: e1, target_entity_id: e2, relationship_type: 'writes_to', properties: { weight: 1, tags: ['hot'] } });
    const r2 = await relate(c, { source_entity_id: e2, target_entity_id: e3, relationship_type: 'notifies' });
    const r3 = await relate(c, { source_entity_id: e1, target_entity_id: e3, relationship_type: 'calls' });
    expect(r1).toMatchObject({ org_id: c.orgId, source_entity_id: e1, target_entity_id: e2, relationship_type: 'writes_to', properties: { weight: 1, tags: ['hot'] }, created_by: c.userId });
    // Another organization's graph, written alongside.
    const [f1, f2] = [await entity(d, 'Other A'), await entity(d, 'Other B')];
    const other = await relate(d, { source_entity_id: f1, target_entity_id: f2, relationship_type: 'writes_to' });
    await new Promise((r) => setTimeout(r, 5)); // nothing shares the millisecond of the next server_time

    // Bulk: every live relationship, in change order, with exactly the record's fields.
    const bulk = await sync(c);
    expect(bulk).toMatchObject({ resource_type: 'relationships', mode: 'bulk', deleted: [], has_more: false, next_cursor: null });
    expect(typeof bulk.server_time).toBe('number');
    expect(bulk.items).toEqual([synced(r1), synced(r2), synced(r3)]);
    expect(Object.keys(bulk.items[0]).sort()).toEqual(['created_at', 'created_by', 'id', 'org_id', 'properties', 'relationship_type', 'source_entity_id', 'target_entity_id', 'updated_at']);
    expect(bulk.items[0].created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Paged bulk: same records, none twice.
    const paged = new Map<string, Record<string, unknown>>();
    const run = await pullAll(c, 'relationships', paged, undefined, 2);
    expect(run.pages).toBe(2);
    expect(run.seen).toEqual([r1.id, r2.id, r3.id]);
    // Isolation: each organization sees only its own.
    expect(ids((await sync(d)).items)).toEqual([other.id]);
    expect(ids((await sync(d, 'since=0')).items)).toEqual([other.id]);

    // Delta: an update, a direct delete, a delete by cascade (entity e3 takes r3 with it), a new edge.
    const since = bulk.server_time;
    expect((await req(c, 'PUT', `/v1/relationships/${r1.id}`, { relationship_type: 'reads_from', properties: { weight: 2 } })).statusCode).toBe(200);
    expect((await req(c, 'DELETE', `/v1/relationships/${r2.id}`)).json().data).toEqual({ id: r2.id, deleted: true });
    expect((await req(c, 'DELETE', `/v1/entities/${e3}`)).json().data).toEqual({ id: e3, deleted: true });
    errorOf(await req(c, 'GET', `/v1/relationships/${r3.id}`), 404, 'NOT_FOUND');
    const r4 = await relate(c, { source_entity_id: e2, target_entity_id: e1, relationship_type: 'pays' });
    // The other organization deletes its edge meanwhile: none of it reaches c.
    expect((await req(d, 'DELETE', `/v1/relationships/${other.id}`)).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 5)); // the pulls below take their server_time after every write's millisecond
    const delta = await sync(c, `since=${since}`);
    expect(delta).toMatchObject({ resource_type: 'relationships', mode: 'delta', has_more: false, next_cursor: null });
    expect(delta.items).toEqual([synced(await restOf(c, r1.id)), synced(r4)]);
    expect(delta.items[0]).toMatchObject({ relationship_type: 'reads_from', properties: { weight: 2 } });
    expect(ids(delta.deleted)).toEqual([r2.id, r3.id]); // only relationships: the entity's own tombstone is under entities
    for (const del of delta.deleted) {
      expect(Object.keys(del).sort()).toEqual(['deleted_at', 'id']);
      expect(del.deleted_at).toMatch(/Z$/);
      expect(Date.parse(del.deleted_at)).toBeGreaterThanOrEqual(since); // changed_at > since, shown to the millisecond
    }
    // The same delta paged one change per page: change order, each once.
    const pagedDelta = await pullAll(c, 'relationships', new Map(), since, 1);
    expect(pagedDelta.pages).toBe(4);
    expect(pagedDelta.seen).toEqual([r1.id, r2.id, r3.id, r4.id]);
    // Deleting the entity is a tombstone of its own type, too.
    expect(ids((await req(c, 'GET', `/v1/sync/entities?since=${since}`)).json().data.deleted)).toEqual([e3]);
    // Bulk now: live edges only, never tombstones.
    expect(await sync(c)).toMatchObject({ mode: 'bulk', items: [synced(await restOf(c, r1.id)), synced(r4)], deleted: [] });
    // Caught up: nothing more.
    const caught = await sync(c, `since=${pagedDelta.since}`);
    expect([caught.items, caught.deleted]).toEqual([[], []]);

    // Isolation in delta and tombstones: c never sees d's deletion, d never sees c's changes or tombstones.
    const mine = [r1.id, r2.id, r3.id, r4.id];
    expect([...ids(delta.items), ...ids(delta.deleted)]).not.toContain(other.id);
    const dDelta = await sync(d, 'since=0');
    expect([ids(dDelta.items), ids(dDelta.deleted)]).toEqual([[], [other.id]]);
    expect((await sync(d)).items).toEqual([]);
    // Not even through c's cursor: the organization comes from the caller, never from the cursor.
    const cPage = await sync(c, `since=${since}&limit=1`);
    expect(cPage.has_more).toBe(true);
    const viaCursor = await req(d, 'GET', `/v1/sync/relationships?since=${since}&limit=1&cursor=${encodeURIComponent(cPage.next_cursor)}`);
    expect(viaCursor.statusCode).toBe(200);
    const leaked = [...ids(viaCursor.json().data.items), ...ids(viaCursor.json().data.deleted)].filter((id) => mine.includes(id));
    expect(leaked).toEqual([]);
    // Relationships need projects:read.
    const ro = await c.apiKey(['documents:read']);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/sync/relationships', headers: { authorization: `Bearer ${ro}` } }), 403, 'FORBIDDEN');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/sync/relationships' }), 401, 'AUTH_REQUIRED');
  });
});
