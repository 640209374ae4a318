import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { createProject, memberOf } from './projects.fixtures.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;
beforeAll(async () => { t = await buildTestApp(); a = await newTenant(t.app); b = await newTenant(t.app); });
afterAll(async () => { await t.close(); });

const RANDOM = '0190a5b4-0000-7000-8000-000000000000';
const get = (url: string, who: Tenant | { auth: Record<string, string> } = a) => t.app.inject({ method: 'GET', url, headers: who.auth });
const post = (url: string, payload: unknown, who: Tenant | { auth: Record<string, string> } = a) => t.app.inject({ method: 'POST', url, headers: who.auth, payload: payload as object });

async function crossTenant404(path: string, body: unknown) {
  const p = await createProject(t.app, a);
  for (const send of [() => get(`/v1/projects/${p.id}/${path}`, b), () => post(`/v1/projects/${p.id}/${path}`, body, b)]) {
    const other = errorOf(await send(), 404, 'NOT_FOUND');
    expect(other.message).toBe('Project not found');
  }
  errorOf(await get(`/v1/projects/${RANDOM}/${path}`), 404, 'NOT_FOUND');
  errorOf(await post(`/v1/projects/${RANDOM}/${path}`, body), 404, 'NOT_FOUND');
  errorOf(await get(`/v1/projects/nope/${path}`), 400, 'INVALID_ID_FORMAT');
}

describe('project members', () => {
  it('adds an organization member (201) and lists with pagination', async () => {
    const p = await createProject(t.app, a);
    const m = await memberOf(t.app, a, 'member');
    const r = await post(`/v1/projects/${p.id}/members`, { user_id: m.userId, role: 'editor' });
    expect(r.statusCode).toBe(201);
    expect(r.json().data).toMatchObject({ user_id: m.userId, role: 'editor', email: m.email });
    const l = (await get(`/v1/projects/${p.id}/members?limit=1`)).json();
    expect(l.pagination).toEqual({ total: 2, limit: 1, offset: 0, has_more: true });
    expect(l.data[0].user_id).toBe(a.userId);
    const l2 = (await get(`/v1/projects/${p.id}/members?limit=1&offset=1`)).json();
    expect(l2.pagination.has_more).toBe(false);
    expect(l2.data[0].user_id).toBe(m.userId);
    errorOf(await post(`/v1/projects/${p.id}/members`, { user_id: m.userId, role: 'editor' }), 409, 'CONFLICT');
  });

  it('404 for a user outside the organization; 400 for missing fields; 403 without project.manage_members', async () => {
    const p = await createProject(t.app, a);
    expect(errorOf(await post(`/v1/projects/${p.id}/members`, { user_id: b.userId, role: 'member' }), 404, 'NOT_FOUND').details).toMatchObject({ field: 'user_id' });
    errorOf(await post(`/v1/projects/${p.id}/members`, { user_id: RANDOM, role: 'member' }), 404, 'NOT_FOUND');
    errorOf(await post(`/v1/projects/${p.id}/members`, { user_id: b.userId }), 400, 'VALIDATION_ERROR');
    errorOf(await post(`/v1/projects/${p.id}/members`, { role: 'member' }), 400, 'VALIDATION_ERROR');
    const m = await memberOf(t.app, a, 'member');
    errorOf(await post(`/v1/projects/${p.id}/members`, { user_id: m.userId, role: 'member' }, m), 403, 'PERMISSION_DENIED');
  });

  it('a user removed from the organization leaves its projects\' member lists (migration 0058)', async () => {
    const p = await createProject(t.app, a);
    const m = await memberOf(t.app, a, 'member');
    const stays = await memberOf(t.app, a, 'member');
    for (const who of [m, stays]) expect((await post(`/v1/projects/${p.id}/members`, { user_id: who.userId, role: 'editor' })).statusCode).toBe(201);
    const removed = await t.app.inject({ method: 'DELETE', url: `/v1/organizations/current/members/${m.userId}`, headers: a.auth });
    expect(removed.statusCode).toBe(200);
    const members = (await get(`/v1/projects/${p.id}/members`)).json();
    expect(members.data.map((x: { user_id: string }) => x.user_id).sort()).toEqual([a.userId, stays.userId].sort());
    expect(members.pagination.total).toBe(2);
  });

  it('cross-tenant 404', () => crossTenant404('members', { user_id: RANDOM, role: 'member' }));
});

describe('categories', () => {
  it('creates nested categories of the same project', async () => {
    const p = await createProject(t.app, a);
    const top = await post(`/v1/projects/${p.id}/categories`, { name: 'Hardware', description: 'hw' });
    expect(top.statusCode).toBe(201);
    expect(top.json().data).toMatchObject({ project_id: p.id, name: 'Hardware', description: 'hw', parent_id: null, color: null });
    const parent = top.json().data.category_id;
    const child = await post(`/v1/projects/${p.id}/categories`, { name: 'Wheels', parent_id: parent, color: '#aabbcc' });
    expect(child.json().data).toMatchObject({ parent_id: parent, color: '#aabbcc' });
    const l = (await get(`/v1/projects/${p.id}/categories`)).json();
    expect(l.data.map((c: { name: string }) => c.name)).toEqual(['Hardware', 'Wheels']);
    expect(l.pagination).toEqual({ total: 2, limit: 50, offset: 0, has_more: false });
    errorOf(await post(`/v1/projects/${p.id}/categories`, { name: 'hardware' }), 409, 'CONFLICT');
    const q = await createProject(t.app, a);
    expect(errorOf(await post(`/v1/projects/${q.id}/categories`, { name: 'X', parent_id: parent }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'parent_id' });
    errorOf(await post(`/v1/projects/${q.id}/categories`, { name: 'X', parent_id: RANDOM }), 404, 'NOT_FOUND');
    errorOf(await post(`/v1/projects/${p.id}/categories`, {}), 400, 'VALIDATION_ERROR');
    errorOf(await post(`/v1/projects/${p.id}/categories`, { name: 'x', id: RANDOM }), 400, 'VALIDATION_ERROR');
  });

  it('needs project.update to create, project.view to list', async () => {
    const p = await createProject(t.app, a);
    const v = await memberOf(t.app, a, 'viewer');
    errorOf(await post(`/v1/projects/${p.id}/categories`, { name: 'x' }, v), 403, 'PERMISSION_DENIED');
    expect((await get(`/v1/projects/${p.id}/categories`, v)).statusCode).toBe(200);
  });

  it('cross-tenant 404', () => crossTenant404('categories', { name: 'x' }));
});

describe('phases', () => {
  it('lists ordered by sort_order; default sort_order goes last', async () => {
    const p = await createProject(t.app, a);
    const first = (await post(`/v1/projects/${p.id}/phases`, { name: 'Build' })).json().data;
    expect(first).toMatchObject({ name: 'Build', sort_order: 1, project_id: p.id, description: null });
    expect(first.phase_id).toBeTruthy();
    await post(`/v1/projects/${p.id}/phases`, { name: 'Design', sort_order: 0, description: 'first' });
    await post(`/v1/projects/${p.id}/phases`, { name: 'Ship' });
    const l = (await get(`/v1/projects/${p.id}/phases`)).json();
    expect(l.data.map((x: { name: string; sort_order: number }) => [x.name, x.sort_order])).toEqual([['Design', 0], ['Build', 1], ['Ship', 2]]);
    errorOf(await post(`/v1/projects/${p.id}/phases`, { name: 'x', sort_order: 'one' }), 400, 'VALIDATION_ERROR');
    // After the largest sort_order a client may send, a default one stays a value the client could send back.
    expect((await post(`/v1/projects/${p.id}/phases`, { name: 'Max', sort_order: 1_000_000 })).statusCode).toBe(201);
    const after = (await post(`/v1/projects/${p.id}/phases`, { name: 'After max' })).json().data;
    expect(after.sort_order).toBe(1_000_000);
    errorOf(await post(`/v1/projects/${p.id}/phases`, { name: 'Over', sort_order: 1_000_001 }), 400, 'VALIDATION_ERROR');
  });

  it('phases created at once without sort_order get distinct places, one after another', async () => {
    const p = await createProject(t.app, a);
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`/v1/projects/${p.id}/phases`, { name: `Phase ${i}` })));
    expect(made.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(made.map((r) => r.json().data.sort_order).sort((x: number, y: number) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('cross-tenant 404', () => crossTenant404('phases', { name: 'x' }));
});

describe('specs', () => {
  it('creates and lists specs; archived projects refuse new content', async () => {
    const p = await createProject(t.app, a);
    const s = await post(`/v1/projects/${p.id}/specs`, { title: 'Landing', content: '# Spec' });
    expect(s.statusCode).toBe(201);
    expect(s.json().data).toMatchObject({ project_id: p.id, title: 'Landing', content: '# Spec' });
    expect(s.json().data.spec_id).toBeTruthy();
    const l = (await get(`/v1/projects/${p.id}/specs`)).json();
    expect(l.data).toEqual([s.json().data]);
    errorOf(await post(`/v1/projects/${p.id}/specs`, { content: 'no title' }), 400, 'VALIDATION_ERROR');
    await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { is_active: false } });
    errorOf(await post(`/v1/projects/${p.id}/specs`, { title: 'late' }), 409, 'CONFLICT');
    expect((await get(`/v1/projects/${p.id}/specs`)).json().data).toHaveLength(1);
  });

  it('cross-tenant 404', () => crossTenant404('specs', { title: 'x' }));
});

describe('task statuses', () => {
  it('every organization has the default workflow, ordered', async () => {
    const p = await createProject(t.app, a);
    const r = await get(`/v1/projects/${p.id}/task-statuses`);
    expect(r.statusCode).toBe(200);
    expect(r.json().data.map((s: { key: string; is_done: boolean }) => [s.key, s.is_done])).toEqual([
      ['todo', false], ['in_progress', false], ['in_review', false], ['done', true], ['cancelled', true],
    ]);
    expect(r.json().data[0]).toMatchObject({ name: 'To do', project_id: null });
  });

  it('is a list: pagination, limit and offset (spec 2.1)', async () => {
    const p = await createProject(t.app, a);
    const all = (await get(`/v1/projects/${p.id}/task-statuses`)).json();
    expect(all.pagination).toEqual({ total: 5, limit: 100, offset: 0, has_more: false });
    const keys = all.data.map((s: { key: string }) => s.key);
    const first = (await get(`/v1/projects/${p.id}/task-statuses?limit=2`)).json();
    expect(first.data.map((s: { key: string }) => s.key)).toEqual(keys.slice(0, 2));
    expect(first.data[0]).toEqual(all.data[0]);
    expect(first.pagination).toEqual({ total: 5, limit: 2, offset: 0, has_more: true });
    const next = (await get(`/v1/projects/${p.id}/task-statuses?limit=2&offset=2`)).json();
    expect(next.data.map((s: { key: string }) => s.key)).toEqual(keys.slice(2, 4));
    expect(next.pagination).toEqual({ total: 5, limit: 2, offset: 2, has_more: true });
    const past = (await get(`/v1/projects/${p.id}/task-statuses?offset=5`)).json();
    expect(past).toEqual({ success: true, data: [], pagination: { total: 5, limit: 100, offset: 5, has_more: false } });
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'offset=-1']) {
      const e = errorOf(await get(`/v1/projects/${p.id}/task-statuses?${q}`), 400, 'INVALID_PARAMETER');
      expect(e.details?.field).toBe(q.split('=')[0]);
    }
  });

  it('a project-scoped status overrides or extends the organization workflow', async () => {
    const p = await createProject(t.app, a);
    await t.platform.db.sys.exec(`INSERT INTO task_statuses (org_id, id, project_id, key, name, sort_order, is_done)
      VALUES ($1, gen_random_uuid(), $2, 'todo', 'Backlog', 5, false), ($1, gen_random_uuid(), $2, 'qa', 'QA', 35, false)`, [a.orgId, p.id]);
    const keys = (await get(`/v1/projects/${p.id}/task-statuses`)).json().data.map((s: { key: string; name: string }) => `${s.key}:${s.name}`);
    expect(keys).toEqual(['todo:Backlog', 'in_progress:In progress', 'in_review:In review', 'qa:QA', 'done:Done', 'cancelled:Cancelled']);
    const other = await createProject(t.app, a);
    expect((await get(`/v1/projects/${other.id}/task-statuses`)).json().data).toHaveLength(5);
  });

  it('OpenAPI documents limit, offset and the list envelope', async () => {
    const op = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json().paths['/v1/projects/{projectId}/task-statuses'].get;
    expect(op.parameters.filter((x: { in: string }) => x.in === 'query').map((x: { name: string }) => x.name).sort()).toEqual(['limit', 'offset']);
    const schema = op.responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['success', 'data', 'pagination']));
    expect(Object.keys(schema.properties.pagination.properties).sort()).toEqual(['has_more', 'limit', 'offset', 'total']);
    expect(schema.properties.data.type).toBe('array');
  });

  it('cross-tenant 404', async () => {
    const p = await createProject(t.app, a);
    errorOf(await get(`/v1/projects/${p.id}/task-statuses`, b), 404, 'NOT_FOUND');
    errorOf(await get(`/v1/projects/${RANDOM}/task-statuses`), 404, 'NOT_FOUND');
  });
});
