import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { buildTestApp, newTenant, errorOf, type TestApp } from '../../../../test/helpers.js';
import { memberOf } from '../test-support.js';
import { workspaceFixtures } from '../workspace.fixtures.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

describe('saved views', () => {
  it('refuses a name with nothing visible (blank, or only zero-width characters): 400 VALIDATION_ERROR, nothing saved', async () => {
    const a = await newTenant(t.app);
    for (const name of ['   \t ', '\u200B\u200B']) {
      const e = errorOf(await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name, resource: 'tasks' } }), 400, 'VALIDATION_ERROR');
      expect(e.details).toMatchObject({ field: 'name', reason: 'BLANK' });
    }
    expect((await t.app.inject({ method: 'GET', url: '/v1/settings/views', headers: a.auth })).json().pagination.total).toBe(0);
  });

  it('creates, lists with pagination and deletes views', async () => {
    const a = await newTenant(t.app);
    const c = await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name: 'My open tasks', resource: 'tasks', filters: { status: ['todo', 'in_progress'], assignee_id: a.userId }, sort: { field: 'due_date', direction: 'asc' }, columns: ['title', 'due_date'], is_default: true } });
    expect(c.statusCode).toBe(201);
    const v = c.json().data;
    expect(v).toMatchObject({ name: 'My open tasks', resource: 'tasks', filters: { status: ['todo', 'in_progress'] }, sort: { field: 'due_date' }, columns: ['title', 'due_date'], is_default: true });
    for (let i = 0; i < 2; i++) await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name: `v${i}`, resource: 'projects' } });
    const p1 = await t.app.inject({ method: 'GET', url: '/v1/settings/views?limit=2', headers: a.auth });
    expect(p1.json().pagination).toEqual({ total: 3, limit: 2, offset: 0, has_more: true });
    expect(p1.json().data.map((x: { id: string }) => x.id)[0]).toBe(v.id);
    const p2 = await t.app.inject({ method: 'GET', url: '/v1/settings/views?limit=2&offset=2', headers: a.auth });
    expect(p2.json().pagination).toEqual({ total: 3, limit: 2, offset: 2, has_more: false });
    expect(p2.json().data).toHaveLength(1);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/settings/views?limit=101', headers: a.auth }), 400, 'INVALID_PARAMETER');
    const d = await t.app.inject({ method: 'DELETE', url: `/v1/settings/views/${v.id}`, headers: a.auth });
    expect(d.statusCode).toBe(200);
    expect(d.json().data).toEqual({ id: v.id, deleted: true });
    errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/settings/views/${v.id}`, headers: a.auth }), 404, 'NOT_FOUND');
    errorOf(await t.app.inject({ method: 'DELETE', url: '/v1/settings/views/not-a-uuid', headers: a.auth }), 400, 'INVALID_ID_FORMAT');
  });

  it('a second default view of the same resource replaces the first', async () => {
    const a = await newTenant(t.app);
    const one = (await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name: 'a', resource: 'tasks', is_default: true } })).json().data;
    await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name: 'b', resource: 'tasks', is_default: true } });
    const list = (await t.app.inject({ method: 'GET', url: '/v1/settings/views', headers: a.auth })).json().data;
    expect(list.find((x: { id: string }) => x.id === one.id).is_default).toBe(false);
  });

  it('refuses the 101st view with 409 CONFLICT', async () => {
    const a = await newTenant(t.app);
    await t.platform.db.tenant(a.orgId, (sql) => sql.exec(`INSERT INTO saved_views (org_id, id, user_id, name, resource)
      SELECT $1, gen_random_uuid(), $2, 'v' || g, 'tasks' FROM generate_series(1, 99) g`, [a.orgId, a.userId]));
    expect((await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name: 'the 100th', resource: 'tasks' } })).statusCode).toBe(201);
    const e = errorOf(await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name: 'the 101st', resource: 'tasks' } }), 409, 'CONFLICT');
    expect(e.details).toMatchObject({ limit: 100 });
    // Another member has their own budget.
    const m = await memberOf(t.app, a);
    expect((await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: m.auth, payload: { name: 'mine', resource: 'tasks' } })).statusCode).toBe(201);
  });

  it('validates the body', async () => {
    const a = await newTenant(t.app);
    for (const bad of [{}, { name: '', resource: 'tasks' }, { name: 'x' }, { name: 'x', resource: 'Bad Resource' }, { name: 'x', resource: 'tasks', id: randomUUID() },
      { name: 'x', resource: 'tasks', filters: 'x' }, { name: 'x', resource: 'tasks', user_id: a.userId }]) {
      errorOf(await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: bad }), 400, 'VALIDATION_ERROR');
    }
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/settings/views', headers: a.auth, payload: { name: 'x', resource: 'tasks', filters: { q: 'x'.repeat(17_000) } } }), 413, 'PAYLOAD_TOO_LARGE');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/settings/views', payload: { name: 'x', resource: 'tasks' } }), 401, 'AUTH_REQUIRED');
  });

  it("another user's or another organization's view is 404, like a random id", async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    const { viewId } = await workspaceFixtures.saved_view(t.app, a);
    const random = errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/settings/views/${randomUUID()}`, headers: b.auth }), 404, 'NOT_FOUND');
    const cross = errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/settings/views/${viewId}`, headers: b.auth }), 404, 'NOT_FOUND');
    expect(cross).toEqual(random);
    errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/settings/views/${viewId}`, headers: m.auth }), 404, 'NOT_FOUND');
    expect((await t.app.inject({ method: 'GET', url: '/v1/settings/views', headers: m.auth })).json().data).toEqual([]);
  });
});
