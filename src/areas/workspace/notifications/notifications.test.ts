import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp, type Tenant } from '../../../../test/helpers.js';
import { createProject, createTask, memberOf, waitFor } from '../test-support.js';
import { notificationsRepo, type NewNotification } from './notifications.repo.js';
import { scanOverdueTasks } from './overdue.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

type Auth = { auth: Record<string, string> };
const list = (who: Auth, qs = '') => t.app.inject({ method: 'GET', url: `/v1/notifications${qs}`, headers: who.auth });
const seed = (owner: Tenant, n: Partial<NewNotification> & { title: string }, userId = owner.userId) =>
  t.platform.db.tenant(owner.orgId, (sql) => notificationsRepo.insert(sql, owner.orgId, { userId, ...n }));
const past = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('notifications created by the platform', () => {
  it('a task assigned to a user notifies them (not the actor assigning themselves)', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    const p = await createProject(t.app, a);
    const taskId = await createTask(t.app, a, p.id, { title: 'Write the report', assignee_id: m.userId });
    const n = await waitFor(async () => (await list(m)).json().data.notifications[0]);
    expect(n).toMatchObject({ notification_type: 'action_required', channel: 'in_app', is_read: false, is_archived: false, event_type: 'task.assigned',
      target_type: 'task', target_id: taskId, action_url: `/v1/tasks/${taskId}` });
    expect(n.title).toContain('Write the report');
    await createTask(t.app, a, p.id, { title: 'Mine', assignee_id: a.userId });
    await new Promise((r) => setTimeout(r, 300));
    expect((await list(a)).json().data.notifications).toEqual([]);
  });

  it('a mention notifies the mentioned member, unless they turned mentionAlerts off', async () => {
    const a = await newTenant(t.app);
    const m1 = await memberOf(t.app, a);
    const m2 = await memberOf(t.app, a);
    await t.app.inject({ method: 'PUT', url: '/v1/settings/personalization', headers: m2.auth, payload: { themeMode: 'light', language: 'en', notifications: { mentionAlerts: false } } });
    const p = await createProject(t.app, a);
    await createTask(t.app, a, p.id, { title: 'Review', description: `Please look @${m1.email} and @${m2.email}` });
    const n = await waitFor(async () => (await list(m1)).json().data.notifications[0]);
    expect(n).toMatchObject({ event_type: 'task.mentioned', notification_type: 'info', title: 'You were mentioned in task "Review"' });
    await new Promise((r) => setTimeout(r, 300));
    expect((await list(m2)).json().data.notifications).toEqual([]);
  });

  it('an overdue task notifies its assignee once, at once when written with a past due date; done tasks and future due dates do not', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    const p = await createProject(t.app, a);
    const put = (id: string, payload: object) => t.app.inject({ method: 'PUT', url: `/v1/tasks/${id}`, headers: a.auth, payload });
    const done = await createTask(t.app, a, p.id, { title: 'Done one', assignee_id: m.userId });
    expect((await put(done, { status: 'done' })).statusCode).toBe(200);
    expect((await put(done, { due_date: past(3_600_000) })).statusCode).toBe(200);
    await createTask(t.app, a, p.id, { title: 'Future one', assignee_id: m.userId, due_date: new Date(Date.now() + 86_400_000).toISOString() });
    // The periodic scan runs once a minute; this notice comes from the check made right after the write.
    const late = await createTask(t.app, a, p.id, { title: 'Late one', assignee_id: m.userId, due_date: past(3_600_000) });
    const n = await waitFor(async () => (await list(m, '?notification_type=warning')).json().data.notifications[0], 5_000, 20);
    expect(n).toMatchObject({ event_type: 'task.overdue', target_id: late, action_url: `/v1/tasks/${late}` });
    expect(n.title).toContain('Late one');
    await scanOverdueTasks(t.platform);
    await new Promise((r) => setTimeout(r, 300));
    expect((await list(m, '?notification_type=warning')).json().pagination.total).toBe(1);
    const notices = await t.platform.db.sys.query(`SELECT task_id FROM task_overdue_notices WHERE org_id = $1`, [a.orgId]);
    expect(notices).toEqual([{ task_id: late }]);

    // Reopening the done task (its due date is past) and moving a future one into the past announce them at once.
    const soon = await createTask(t.app, a, p.id, { title: 'Soon one', assignee_id: m.userId, due_date: new Date(Date.now() + 86_400_000).toISOString() });
    expect((await put(done, { status: 'todo' })).statusCode).toBe(200);
    expect((await put(soon, { due_date: past(60_000) })).statusCode).toBe(200);
    await waitFor(async () => (await list(m, '?notification_type=warning')).json().pagination.total === 3, 5_000, 20);
    const titles = (await list(m, '?notification_type=warning')).json().data.notifications.map((x: { title: string }) => x.title).join(' | ');
    expect(titles).toMatch(/Done one/);
    expect(titles).toMatch(/Soon one/);
  });
});

describe('GET /v1/notifications', () => {
  it('lists the caller\'s notifications newest first with offset pagination (default 25, max 100)', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    for (let i = 0; i < 30; i++) await seed(a, { title: `n${i}`, type: i % 3 === 0 ? 'warning' : 'info', channel: i % 5 === 0 ? 'email' : 'in_app' });
    await seed(a, { title: 'for the member' }, m.userId);
    const r = await list(a);
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.data.notifications).toHaveLength(25);
    expect(body.data.notifications[0].title).toBe('n29');
    expect(body.data.unread_count).toBe(30);
    expect(body.pagination).toEqual({ total: 30, limit: 25, offset: 0, has_more: true });
    const p2 = (await list(a, '?offset=25')).json();
    expect(p2.data.notifications.map((n: { title: string }) => n.title)).toEqual(['n4', 'n3', 'n2', 'n1', 'n0']);
    expect(p2.pagination).toEqual({ total: 30, limit: 25, offset: 25, has_more: false });
    expect((await list(a, '?limit=100')).json().data.notifications).toHaveLength(30);
    const beyond = (await list(a, '?offset=40')).json();
    expect(beyond.data.notifications).toEqual([]);
    expect(beyond.pagination).toMatchObject({ total: 30, has_more: false });
    expect((await list(a, '?notification_type=warning')).json().pagination.total).toBe(10);
    expect((await list(a, '?channel=email')).json().pagination.total).toBe(6);
    expect((await list(m)).json().data.notifications.map((n: { title: string }) => n.title)).toEqual(['for the member']);
  });

  it('filters by is_read and is_archived after updates', async () => {
    const a = await newTenant(t.app);
    const n1 = await seed(a, { title: 'one' });
    const n2 = await seed(a, { title: 'two' });
    await seed(a, { title: 'three' });
    await t.app.inject({ method: 'PUT', url: `/v1/notifications/${n1.id}`, headers: a.auth, payload: { is_read: true } });
    await t.app.inject({ method: 'PUT', url: `/v1/notifications/${n2.id}`, headers: a.auth, payload: { is_archived: true, is_read: true } });
    expect((await list(a, '?is_read=true')).json().pagination.total).toBe(2);
    expect((await list(a, '?is_read=false')).json().data.notifications.map((n: { title: string }) => n.title)).toEqual(['three']);
    expect((await list(a, '?is_archived=true')).json().data.notifications.map((n: { title: string }) => n.title)).toEqual(['two']);
    expect((await list(a, '?is_archived=false&is_read=true')).json().data.notifications.map((n: { title: string }) => n.title)).toEqual(['one']);
    expect((await list(a)).json().data.unread_count).toBe(1);
  });

  it('400 INVALID_PARAMETER for bad query values; 401 without a credential; 403 for a key without the scope', async () => {
    const a = await newTenant(t.app);
    for (const qs of ['?limit=0', '?limit=101', '?offset=-1', '?is_read=maybe', '?notification_type=urgent', '?channel=sms', '?limit=abc']) {
      errorOf(await list(a, qs), 400, 'INVALID_PARAMETER');
    }
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/notifications' }), 401, 'AUTH_REQUIRED');
    const k = await a.apiKey(['projects:read']);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/notifications', headers: bearer(k) }), 403, 'FORBIDDEN');
    const ok = await a.apiKey(['notifications:read']);
    expect((await t.app.inject({ method: 'GET', url: '/v1/notifications', headers: bearer(ok) })).statusCode).toBe(200);
  });
});

describe('PUT and DELETE /v1/notifications/{id}', () => {
  it('marks read and archived, and deletes', async () => {
    const a = await newTenant(t.app);
    const n = await seed(a, { title: 'x' });
    const r = await t.app.inject({ method: 'PUT', url: `/v1/notifications/${n.id}`, headers: a.auth, payload: { is_read: true } });
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ id: n.id, is_read: true, is_archived: false });
    const r2 = await t.app.inject({ method: 'PUT', url: `/v1/notifications/${n.id}`, headers: a.auth, payload: { is_archived: true, is_read: false } });
    expect(r2.json().data).toMatchObject({ is_read: false, is_archived: true });
    const d = await t.app.inject({ method: 'DELETE', url: `/v1/notifications/${n.id}`, headers: a.auth });
    expect(d.statusCode).toBe(200);
    expect(d.json().data).toEqual({ id: n.id, deleted: true });
    errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/notifications/${n.id}`, headers: a.auth }), 404, 'NOT_FOUND');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/notifications/${n.id}`, headers: a.auth, payload: { is_read: true } }), 404, 'NOT_FOUND');
  });

  it('validates the body and the id', async () => {
    const a = await newTenant(t.app);
    const n = await seed(a, { title: 'x' });
    for (const bad of [{}, { is_read: 'yes' }, { title: 'new' }, { is_read: true, id: n.id }]) {
      errorOf(await t.app.inject({ method: 'PUT', url: `/v1/notifications/${n.id}`, headers: a.auth, payload: bad }), 400, 'VALIDATION_ERROR');
    }
    errorOf(await t.app.inject({ method: 'PUT', url: '/v1/notifications/123', headers: a.auth, payload: { is_read: true } }), 400, 'INVALID_ID_FORMAT');
    errorOf(await t.app.inject({ method: 'DELETE', url: '/v1/notifications/123', headers: a.auth }), 400, 'INVALID_ID_FORMAT');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/notifications/${n.id}`, payload: { is_read: true } }), 401, 'AUTH_REQUIRED');
    errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/notifications/${n.id}` }), 401, 'AUTH_REQUIRED');
  });

  it("another organization's or another member's notification is 404, identical to a random id", async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    const n = await seed(a, { title: 'private' });
    for (const method of ['PUT', 'DELETE'] as const) {
      const payload = method === 'PUT' ? { is_read: true } : undefined;
      const random = errorOf(await t.app.inject({ method, url: `/v1/notifications/${randomUUID()}`, headers: b.auth, payload }), 404, 'NOT_FOUND');
      const cross = errorOf(await t.app.inject({ method, url: `/v1/notifications/${n.id}`, headers: b.auth, payload }), 404, 'NOT_FOUND');
      expect(cross).toEqual(random);
      errorOf(await t.app.inject({ method, url: `/v1/notifications/${n.id}`, headers: m.auth, payload }), 404, 'NOT_FOUND');
    }
    expect((await list(a)).json().data.notifications[0]).toMatchObject({ id: n.id, is_read: false });
  });
});
