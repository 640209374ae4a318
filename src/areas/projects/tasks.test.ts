import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import type { PlatformEvent } from '../../core/events.js';
import { createProject, createTask, memberOf } from './projects.fixtures.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;
const events: PlatformEvent[] = [];
beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
  b = await newTenant(t.app);
  t.platform.events.subscribe((e) => { events.push(e); });
});
afterAll(async () => { await t.close(); });

const RANDOM = '0190a5b4-0000-7000-8000-000000000000';
type Who = { auth: Record<string, string> };
const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, who: Who = a) =>
  t.app.inject({ method, url, headers: who.auth, payload: payload as object | undefined });
const task = async (id: string, who: Who = a) => (await req('GET', `/v1/tasks/${id}`, undefined, who)).json().data;
const settle = () => new Promise((res) => setTimeout(res, 15));

describe('POST /v1/projects/{projectId}/tasks', () => {
  it('201 with data = the new id; defaults; full single-task shape', async () => {
    const p = await createProject(t.app, a);
    const spec = (await req('POST', `/v1/projects/${p.id}/specs`, { title: 'S' })).json().data;
    const r = await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'Wire it', description: 'text', spec_id: spec.spec_id, priority: 'high', assignee_id: a.userId, due_date: '2030-01-02T03:04:05+02:00' });
    expect(r.statusCode).toBe(201);
    const id = r.json().data;
    expect(typeof id).toBe('string');
    expect(await task(id)).toMatchObject({
      id, project_id: p.id, spec_id: spec.spec_id, title: 'Wire it', description: 'text', status_key: 'todo', status_name: 'To do',
      priority: 'high', assigned_to: a.userId, due_date: '2030-01-02T01:04:05.000Z', parent_task_id: null, depends_on: [], created_by: a.userId,
    });
    const plain = await task(await createTask(t.app, a, p.id));
    expect(plain).toMatchObject({ priority: 'medium', assigned_to: null, due_date: null, spec_id: null, description: null, status_key: 'todo' });
    expect(plain.status_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('the one-statement path (no references) and the general path write the same rows; archived 409, no open status 409', async () => {
    const p = await createProject(t.app, a);
    const simple = await createTask(t.app, a, p.id, { title: ' Plain ', description: 'no mentions', priority: 'low', due_date: '2030-01-01T00:00:00Z' });
    const general = await createTask(t.app, a, p.id, { title: ' Plain ', description: 'no mentions', priority: 'low', due_date: '2030-01-01T00:00:00Z', assignee_id: a.userId });
    const sys = t.platform.db.sys;
    for (const id of [simple, general]) {
      const assigned_to = id === general ? a.userId : null; // an assignee takes the general path (membership check)
      expect(await task(id)).toMatchObject({ title: 'Plain', description: 'no mentions', priority: 'low', status_key: 'todo', due_date: '2030-01-01T00:00:00.000Z', created_by: a.userId, assigned_to });
      const act = await sys.query<{ action: string; new_value: unknown; actor_kind: string }>(`SELECT action, new_value, actor_kind FROM task_activity WHERE org_id = $1 AND task_id = $2`, [a.orgId, id]);
      expect(act).toEqual([{ action: 'created', actor_kind: 'user', new_value: {
        title: 'Plain', description: 'no mentions', status: 'todo', priority: 'low', assigned_to, due_date: '2030-01-01T00:00:00.000Z',
        spec_id: null, parent_task_id: null, depends_on: [] } }]);
      const aud = await sys.query(`SELECT action, target_type, credential_kind, details FROM audit_log WHERE org_id = $1 AND target_id = $2`, [a.orgId, id]);
      expect(aud).toEqual([{ action: 'task.created', target_type: 'task', credential_kind: 'user', details: { project_id: p.id, title: 'Plain' } }]);
    }
    const created = events.filter((e) => e.type === 'task.created' && [simple, general].includes(e.targetId!));
    expect(created.map((e) => e.data)).toEqual([simple, general].map((id) => ({ task_id: id, project_id: p.id, title: 'Plain', status_key: 'todo', priority: 'low', assigned_to: id === general ? a.userId : null, due_date: '2030-01-01T00:00:00.000Z' })));

    await req('PUT', `/v1/projects/${p.id}`, { is_active: false });
    const before = await sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE org_id = $1 AND project_id = $2`, [a.orgId, p.id]);
    const e = errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'late' }), 409, 'CONFLICT');
    expect(e.details).toMatchObject({ code: 'PROJECT_ARCHIVED' });
    expect(await sys.one(`SELECT count(*)::int AS n FROM tasks WHERE org_id = $1 AND project_id = $2`, [a.orgId, p.id])).toEqual(before);

    const c = await newTenant(t.app);
    const q = await createProject(t.app, c);
    await sys.exec(`UPDATE task_statuses SET is_done = true WHERE org_id = $1`, [c.orgId]);
    errorOf(await req('POST', `/v1/projects/${q.id}/tasks`, { title: 'x' }, c), 409, 'CONFLICT');
    expect(await sys.one(`SELECT count(*)::int AS n FROM tasks WHERE org_id = $1`, [c.orgId])).toEqual({ n: 0 });
  });

  it('404 for an unknown or foreign project; 400 for bad bodies; 403 for a viewer', async () => {
    const p = await createProject(t.app, a);
    errorOf(await req('POST', `/v1/projects/${RANDOM}/tasks`, { title: 'x' }), 404, 'NOT_FOUND');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x' }, b), 404, 'NOT_FOUND');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, {}), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', priority: 'urgent' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', status: 'done' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', id: RANDOM }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', due_date: 'tomorrow' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', depends_on: ['nope'] }), 400, 'INVALID_ID_FORMAT');
    expect(errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', assignee_id: b.userId }), 404, 'NOT_FOUND').details).toMatchObject({ field: 'assignee_id' });
    expect(errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', spec_id: RANDOM }), 404, 'NOT_FOUND').details).toMatchObject({ field: 'spec_id' });
    expect(errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', depends_on: [RANDOM] }), 404, 'NOT_FOUND').details).toMatchObject({ field: 'depends_on' });
    const v = await memberOf(t.app, a, 'viewer');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x' }, v), 403, 'PERMISSION_DENIED');
    const q = await createProject(t.app, a);
    const elsewhere = await createTask(t.app, a, q.id);
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', depends_on: [elsewhere] }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x', parent_task_id: elsewhere }), 400, 'VALIDATION_ERROR');
    // One id twice, in two cases: the same id (ids are used in lower case), so a duplicate like any other.
    const here = await createTask(t.app, a, p.id);
    for (const [method, url] of [['POST', `/v1/projects/${p.id}/tasks`], ['PUT', `/v1/tasks/${await createTask(t.app, a, p.id)}`]] as const) {
      const twice = errorOf(await req(method, url, { title: 'twice', depends_on: [here, here.toUpperCase()] }), 400, 'VALIDATION_ERROR');
      expect(twice.details).toMatchObject({ field: 'depends_on' });
    }
  });
});

describe('GET /v1/projects/{projectId}/tasks', () => {
  it('list items, filters (spec_id, status, assignee_id) and pagination', async () => {
    const p = await createProject(t.app, a);
    const m = await memberOf(t.app, a, 'member');
    const spec = (await req('POST', `/v1/projects/${p.id}/specs`, { title: 'S' })).json().data.spec_id;
    const t1 = await createTask(t.app, a, p.id, { title: 'one', spec_id: spec });
    const t2 = await createTask(t.app, a, p.id, { title: 'two', assignee_id: m.userId });
    const t3 = await createTask(t.app, a, p.id, { title: 'three' });
    await req('PUT', `/v1/tasks/${t3}`, { status: 'done' });
    const list = (await req('GET', `/v1/projects/${p.id}/tasks`)).json();
    expect(list.pagination).toEqual({ total: 3, limit: 50, offset: 0, has_more: false });
    expect(list.data.map((x: { id: string }) => x.id)).toEqual([t3, t2, t1]);
    expect(Object.keys(list.data[0]).sort()).toEqual(['assigned_to', 'created_at', 'due_date', 'id', 'priority', 'project_id', 'spec_id', 'status_key', 'status_name', 'title', 'updated_at']);
    expect(list.data[0]).toMatchObject({ status_key: 'done', status_name: 'Done' });
    const ids = async (q: string) => (await req('GET', `/v1/projects/${p.id}/tasks?${q}`)).json().data.map((x: { id: string }) => x.id);
    expect(await ids(`spec_id=${spec}`)).toEqual([t1]);
    expect(await ids(`assignee_id=${m.userId}`)).toEqual([t2]);
    expect(await ids('status=todo')).toEqual([t2, t1]);
    expect(await ids('status=done')).toEqual([t3]);
    expect(await ids(`status=todo&assignee_id=${m.userId}`)).toEqual([t2]);
    expect(await ids('status=nonexistent')).toEqual([]);
    const page = (await req('GET', `/v1/projects/${p.id}/tasks?limit=2&offset=2`)).json();
    expect(page.pagination).toEqual({ total: 3, limit: 2, offset: 2, has_more: false });
    expect(page.data.map((x: { id: string }) => x.id)).toEqual([t1]);
    const first = (await req('GET', `/v1/projects/${p.id}/tasks?limit=2`)).json();
    expect(first.pagination.has_more).toBe(true);
    const past = (await req('GET', `/v1/projects/${p.id}/tasks?limit=2&offset=6`)).json();
    expect(past.pagination).toEqual({ total: 3, limit: 2, offset: 6, has_more: false });
    errorOf(await req('GET', `/v1/projects/${p.id}/tasks?limit=101`), 400, 'INVALID_PARAMETER');
    errorOf(await req('GET', `/v1/projects/${p.id}/tasks?assignee_id=bob`), 400, 'INVALID_ID_FORMAT');
    errorOf(await req('GET', `/v1/projects/${p.id}/tasks`, undefined, b), 404, 'NOT_FOUND');
    errorOf(await req('GET', `/v1/projects/${RANDOM}/tasks`), 404, 'NOT_FOUND');
    expect((await req('GET', `/v1/projects/${(await createProject(t.app, a)).id}/tasks`)).json().data).toEqual([]);
  });
});

describe('PUT /v1/tasks/{taskId}', () => {
  it('changes status by key, priority, assignee, fields; null clears; activity records each change', async () => {
    const p = await createProject(t.app, a);
    const m = await memberOf(t.app, a, 'member');
    const id = await createTask(t.app, a, p.id, { title: 'T', description: 'd', due_date: '2030-01-01T00:00:00Z' });
    const r = await req('PUT', `/v1/tasks/${id}`, { status: 'in_progress', priority: 'critical', assignee_id: m.userId, title: 'T2', description: null, due_date: null });
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ status_key: 'in_progress', status_name: 'In progress', priority: 'critical', assigned_to: m.userId, title: 'T2', description: null, due_date: null });
    const byMember = await req('PUT', `/v1/tasks/${id}`, { assignee_id: null }, m);
    expect(byMember.json().data.assigned_to).toBeNull();
    const act = (await req('GET', `/v1/tasks/${id}/activity`)).json();
    expect(act.pagination).toMatchObject({ total: 8, offset: 0, has_more: false });
    const rows = act.data as Array<{ action: string; field: string | null; old_value: unknown; new_value: unknown; actor_user_id: string; created_at: string }>;
    expect(rows[0]).toMatchObject({ action: 'updated', field: 'assigned_to', old_value: m.userId, new_value: null, actor_user_id: m.userId, actor_kind: 'user' });
    const byField = Object.fromEntries(rows.filter((x) => x.actor_user_id === a.userId && x.action === 'updated').map((x) => [x.field, [x.old_value, x.new_value]]));
    expect(byField).toEqual({
      status: ['todo', 'in_progress'], priority: ['medium', 'critical'], assigned_to: [null, m.userId], title: ['T', 'T2'],
      description: ['d', null], due_date: ['2030-01-01T00:00:00.000Z', null],
    });
    expect(rows[rows.length - 1]).toMatchObject({ action: 'created', field: null, actor_user_id: a.userId });
    expect(Date.parse(rows[0].created_at)).not.toBeNaN();
    const page = (await req('GET', `/v1/tasks/${id}/activity?limit=3&offset=3`)).json();
    expect(page.pagination).toEqual({ total: 8, limit: 3, offset: 3, has_more: true });
    expect(page.data).toHaveLength(3);
  });

  it('activity records spec_id, parent_task_id and depends_on changes (set, change, clear) with field, old/new values, actor and time', async () => {
    const p = await createProject(t.app, a);
    const m = await memberOf(t.app, a, 'member');
    const s1 = (await req('POST', `/v1/projects/${p.id}/specs`, { title: 'S1' })).json().data.spec_id as string;
    const s2 = (await req('POST', `/v1/projects/${p.id}/specs`, { title: 'S2' })).json().data.spec_id as string;
    const p1 = await createTask(t.app, a, p.id, { title: 'parent 1' });
    const p2 = await createTask(t.app, a, p.id, { title: 'parent 2' });
    const x = await createTask(t.app, a, p.id, { title: 'dep x' });
    const y = await createTask(t.app, a, p.id, { title: 'dep y' });
    const id = await createTask(t.app, a, p.id, { title: 'T' });
    // y was made after x, so [y, x] is not the sorted order: the feed must record the sorted list, not the body's order.
    const sorted = [x, y].sort();
    expect([y, x]).not.toEqual(sorted);
    const start = Date.now();
    const steps: Array<[Who, Record<string, unknown>]> = [
      [a, { spec_id: s1 }], [a, { spec_id: s2 }], [m, { spec_id: null }],
      [a, { parent_task_id: p1 }], [m, { parent_task_id: p2 }], [a, { parent_task_id: null }],
      [a, { depends_on: [y, x] }],
      [a, { depends_on: [x, y] }], // the same set in another order: no change, no entry
      [m, { depends_on: [y] }], [a, { depends_on: [] }],
    ];
    for (const [who, body] of steps) expect((await req('PUT', `/v1/tasks/${id}`, body, who)).statusCode).toBe(200);
    const end = Date.now();
    expect(await task(id)).toMatchObject({ spec_id: null, parent_task_id: null, depends_on: [] });

    const act = (await req('GET', `/v1/tasks/${id}/activity`)).json();
    expect(act.pagination).toMatchObject({ total: 10, has_more: false });
    const rows = act.data as Array<{ task_id: string; action: string; field: string | null; old_value: unknown; new_value: unknown; actor_user_id: string | null; actor_kind: string; created_at: string }>;
    expect(rows[rows.length - 1]).toMatchObject({ action: 'created', field: null });
    const updates = rows.filter((r) => r.action === 'updated').reverse(); // oldest first
    expect(updates.map((r) => ({ field: r.field, old_value: r.old_value, new_value: r.new_value, actor_user_id: r.actor_user_id }))).toEqual([
      { field: 'spec_id', old_value: null, new_value: s1, actor_user_id: a.userId },
      { field: 'spec_id', old_value: s1, new_value: s2, actor_user_id: a.userId },
      { field: 'spec_id', old_value: s2, new_value: null, actor_user_id: m.userId },
      { field: 'parent_task_id', old_value: null, new_value: p1, actor_user_id: a.userId },
      { field: 'parent_task_id', old_value: p1, new_value: p2, actor_user_id: m.userId },
      { field: 'parent_task_id', old_value: p2, new_value: null, actor_user_id: a.userId },
      { field: 'depends_on', old_value: [], new_value: sorted, actor_user_id: a.userId },
      { field: 'depends_on', old_value: sorted, new_value: [y], actor_user_id: m.userId },
      { field: 'depends_on', old_value: [y], new_value: [], actor_user_id: a.userId },
    ]);
    for (const r of updates) {
      expect(r).toMatchObject({ task_id: id, actor_kind: 'user' });
      expect(r.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
      const at = Date.parse(r.created_at);
      expect(at).toBeGreaterThanOrEqual(start - 2000);
      expect(at).toBeLessThanOrEqual(end + 2000);
    }
    // Times never go backwards along the feed.
    const times = updates.map((r) => Date.parse(r.created_at));
    expect(times).toEqual([...times].sort((u, v) => u - v));
  });

  it("deleting a task is a change of its subtasks and dependents: parent_task_id and depends_on entries in their feeds, updated_at moved", async () => {
    const p = await createProject(t.app, a);
    const m = await memberOf(t.app, a, 'member');
    const doomed = await createTask(t.app, a, p.id, { title: 'doomed' });
    const other = await createTask(t.app, a, p.id, { title: 'other' });
    const child = await createTask(t.app, a, p.id, { title: 'child', parent_task_id: doomed });
    const dependent = await createTask(t.app, a, p.id, { title: 'dependent', depends_on: [doomed, other] });
    const both = await createTask(t.app, a, p.id, { title: 'both', parent_task_id: doomed, depends_on: [doomed] });
    const unrelated = await createTask(t.app, a, p.id, { title: 'unrelated', depends_on: [other] });
    const before = Object.fromEntries(await Promise.all([child, dependent, both, unrelated].map(async (id) => [id, (await task(id)).updated_at as string])));
    await new Promise((r) => setTimeout(r, 5));
    expect((await req('DELETE', `/v1/tasks/${doomed}`, undefined, m)).statusCode).toBe(200);
    const feed = async (id: string) => ((await req('GET', `/v1/tasks/${id}/activity`)).json().data as Array<Record<string, unknown>>)
      .filter((r) => r.action === 'updated').map((r) => ({ field: r.field, old_value: r.old_value, new_value: r.new_value, actor_user_id: r.actor_user_id }));
    expect(await feed(child)).toEqual([{ field: 'parent_task_id', old_value: doomed, new_value: null, actor_user_id: m.userId }]);
    expect(await feed(dependent)).toEqual([{ field: 'depends_on', old_value: [doomed, other].sort(), new_value: [other], actor_user_id: m.userId }]);
    expect((await feed(both)).sort((u, v) => String(u.field).localeCompare(String(v.field)))).toEqual([
      { field: 'depends_on', old_value: [doomed], new_value: [], actor_user_id: m.userId },
      { field: 'parent_task_id', old_value: doomed, new_value: null, actor_user_id: m.userId },
    ]);
    expect(await feed(unrelated)).toEqual([]);
    for (const id of [child, dependent, both]) expect(Date.parse((await task(id)).updated_at)).toBeGreaterThan(Date.parse(before[id]!));
    expect((await task(unrelated)).updated_at).toBe(before[unrelated]);
    expect(await task(dependent)).toMatchObject({ depends_on: [other] });
    expect(await task(child)).toMatchObject({ parent_task_id: null });
  });

  it('due_date takes a date-time or a date alone (midnight UTC); a bad date is VALIDATION_ERROR naming due_date', async () => {
    const p = await createProject(t.app, a);
    const id = await createTask(t.app, a, p.id, { title: 'Dated', due_date: '2030-05-06' });
    expect((await task(id)).due_date).toBe('2030-05-06T00:00:00.000Z');
    expect((await req('PUT', `/v1/tasks/${id}`, { due_date: '2031-01-02' })).statusCode).toBe(200);
    expect((await task(id)).due_date).toBe('2031-01-02T00:00:00.000Z');
    // The message names every form the field takes (not only the first branch's "must match format "date-time"").
    const forms = { message: 'Field "due_date" must be an RFC 3339 date-time, a YYYY-MM-DD date or null', details: { field: 'due_date', rule: 'format', formats: ['date-time', 'date'] } };
    for (const due_date of ['2031-13-01', '2031-02-30', '0000-01-01', '31-01-02', '2031-01-02T25:00:00Z', '03/01/2027']) {
      expect(errorOf(await req('PUT', `/v1/tasks/${id}`, { due_date }), 400, 'VALIDATION_ERROR'), due_date).toEqual({ code: 'VALIDATION_ERROR', ...forms });
    }
    expect(errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'US date', due_date: '03/01/2027' }), 400, 'VALIDATION_ERROR')).toEqual({ code: 'VALIDATION_ERROR', ...forms });
    expect((await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'ISO date', due_date: '2027-03-01' })).statusCode).toBe(201);
    // So does a value of another type (it was "must be string", though null is taken too).
    expect(errorOf(await req('PUT', `/v1/tasks/${id}`, { due_date: 5 }), 400, 'VALIDATION_ERROR')).toEqual({ code: 'VALIDATION_ERROR', ...forms });
    expect((await task(id)).due_date).toBe('2031-01-02T00:00:00.000Z');
  });

  it('undefined status key and empty body are VALIDATION_ERROR', async () => {
    const p = await createProject(t.app, a);
    const id = await createTask(t.app, a, p.id);
    const e = errorOf(await req('PUT', `/v1/tasks/${id}`, { status: 'shipped' }), 400, 'VALIDATION_ERROR');
    expect(e.message).toContain('shipped');
    expect(e.details).toMatchObject({ field: 'status' });
    expect(errorOf(await req('PUT', `/v1/tasks/${id}`, {}), 400, 'VALIDATION_ERROR')).toEqual({ code: 'VALIDATION_ERROR',
      message: 'Send at least one field to change: title, description, status, spec_id, priority, assignee_id, depends_on, parent_task_id, due_date',
      details: { rule: 'minProperties', limit: 1, fields: ['title', 'description', 'status', 'spec_id', 'priority', 'assignee_id', 'depends_on', 'parent_task_id', 'due_date'] } });
    errorOf(await req('PUT', `/v1/tasks/${id}`, { updated_at: '2030-01-01T00:00:00Z' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('PUT', `/v1/tasks/${id}`, { priority: 'urgent' }), 400, 'VALIDATION_ERROR');
  });

  it('depends_on links tasks of the same project and refuses cycles; parent_task_id makes subtasks', async () => {
    const p = await createProject(t.app, a);
    const x = await createTask(t.app, a, p.id, { title: 'x' });
    const y = await createTask(t.app, a, p.id, { title: 'y', depends_on: [x] });
    const z = await createTask(t.app, a, p.id, { title: 'z', depends_on: [y] });
    expect((await task(z)).depends_on).toEqual([y]);
    const cyc = errorOf(await req('PUT', `/v1/tasks/${x}`, { depends_on: [z] }), 400, 'VALIDATION_ERROR');
    expect(cyc.message).toMatch(/cycle/);
    expect(cyc.details).toMatchObject({ field: 'depends_on', reason: 'DEPENDENCY_CYCLE' });
    errorOf(await req('PUT', `/v1/tasks/${x}`, { depends_on: [x] }), 400, 'VALIDATION_ERROR');
    expect((await req('PUT', `/v1/tasks/${z}`, { depends_on: [x, y] })).json().data.depends_on.sort()).toEqual([x, y].sort());
    expect((await req('PUT', `/v1/tasks/${z}`, { depends_on: [] })).json().data.depends_on).toEqual([]);
    // Subtasks
    const sub = await createTask(t.app, a, p.id, { title: 'sub', parent_task_id: x });
    expect((await task(sub)).parent_task_id).toBe(x);
    const subsub = await createTask(t.app, a, p.id, { title: 'subsub', parent_task_id: sub });
    expect(errorOf(await req('PUT', `/v1/tasks/${x}`, { parent_task_id: subsub }), 400, 'VALIDATION_ERROR').details).toMatchObject({ reason: 'PARENT_CYCLE' });
    errorOf(await req('PUT', `/v1/tasks/${x}`, { parent_task_id: x }), 400, 'VALIDATION_ERROR');
    const q = await createProject(t.app, a);
    const other = await createTask(t.app, a, q.id);
    errorOf(await req('PUT', `/v1/tasks/${x}`, { depends_on: [other] }), 400, 'VALIDATION_ERROR');
    // Deleting a parent keeps its subtasks, without a parent.
    expect((await req('DELETE', `/v1/tasks/${sub}`)).statusCode).toBe(200);
    expect((await task(subsub)).parent_task_id).toBeNull();
  });
});

describe('concurrency', () => {
  it('two concurrent edits cannot close a dependency cycle', async () => {
    const p = await createProject(t.app, a);
    for (let i = 0; i < 5; i++) {
      const x = await createTask(t.app, a, p.id);
      const y = await createTask(t.app, a, p.id);
      const [r1, r2] = await Promise.all([req('PUT', `/v1/tasks/${x}`, { depends_on: [y] }), req('PUT', `/v1/tasks/${y}`, { depends_on: [x] })]);
      expect([r1.statusCode, r2.statusCode].sort()).toEqual([200, 400]);
    }
  });

  it('pagination.total of an unfiltered list stays exact under concurrent creation and deletion (kept, striped count)', async () => {
    const p = await createProject(t.app, a);
    const other = await createProject(t.app, a);
    const made = await Promise.all(Array.from({ length: 24 }, () => createTask(t.app, a, p.id)));
    await createTask(t.app, a, other.id);
    await Promise.all(made.slice(0, 7).map((id) => req('DELETE', `/v1/tasks/${id}`)));
    const list = (await req('GET', `/v1/projects/${p.id}/tasks?limit=5`)).json();
    expect(list.pagination).toMatchObject({ total: 17, has_more: true });
    const counted = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE org_id = $1 AND project_id = $2`, [a.orgId, p.id]);
    expect(counted!.n).toBe(17);
    // A filtered list counts its own matches; past the last page the total is still answered.
    expect((await req('GET', `/v1/projects/${p.id}/tasks?status=todo&limit=5`)).json().pagination.total).toBe(17);
    expect((await req('GET', `/v1/projects/${p.id}/tasks?offset=100`)).json().pagination).toMatchObject({ total: 17, has_more: false });
    expect((await req('GET', `/v1/projects/${other.id}/tasks`)).json().pagination.total).toBe(1);
  });
});

describe('DELETE and cross-tenant', () => {
  it('DELETE removes the task; 404 afterwards; member without task.delete is refused', async () => {
    const p = await createProject(t.app, a);
    const id = await createTask(t.app, a, p.id);
    const v = await memberOf(t.app, a, 'viewer');
    errorOf(await req('DELETE', `/v1/tasks/${id}`, undefined, v), 403, 'PERMISSION_DENIED');
    const d = await req('DELETE', `/v1/tasks/${id}`);
    expect(d.json()).toEqual({ success: true, data: { id, deleted: true } });
    errorOf(await req('GET', `/v1/tasks/${id}`), 404, 'NOT_FOUND');
    errorOf(await req('GET', `/v1/tasks/${id}/activity`), 404, 'NOT_FOUND');
    errorOf(await req('DELETE', `/v1/tasks/${id}`), 404, 'NOT_FOUND');
  });

  it('DELETE removes the task\'s activity rows with it, and only its own (trigger, migration 0057)', async () => {
    const p = await createProject(t.app, a);
    const id = await createTask(t.app, a, p.id);
    const kept = await createTask(t.app, a, p.id);
    expect((await req('PUT', `/v1/tasks/${id}`, { title: 'Renamed' })).statusCode).toBe(200);
    const rows = (taskId: string) => t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM task_activity WHERE org_id = $1 AND task_id = $2`, [a.orgId, taskId]);
    expect((await rows(id))!.n).toBe(2);
    expect((await req('DELETE', `/v1/tasks/${id}`)).statusCode).toBe(200);
    expect((await rows(id))!.n).toBe(0);
    expect((await rows(kept))!.n).toBe(1);
  });

  it('another organization gets the same 404 as a random id on every task route', async () => {
    const p = await createProject(t.app, a);
    const id = await createTask(t.app, a, p.id);
    for (const [method, suffix, body] of [['GET', '', undefined], ['PUT', '', { title: 'x' }], ['DELETE', '', undefined], ['GET', '/activity', undefined]] as const) {
      const other = errorOf(await req(method, `/v1/tasks/${id}${suffix}`, body, b), 404, 'NOT_FOUND');
      const random = errorOf(await req(method, `/v1/tasks/${RANDOM}${suffix}`, body, b), 404, 'NOT_FOUND');
      expect(other).toEqual(random);
    }
    errorOf(await req('GET', '/v1/tasks/123'), 400, 'INVALID_ID_FORMAT');
    expect((await task(id)).title).toBe('A task');
  });

  it('tasks of an archived project stay readable but refuse changes (409)', async () => {
    const p = await createProject(t.app, a);
    const id = await createTask(t.app, a, p.id);
    await req('PUT', `/v1/projects/${p.id}`, { is_active: false });
    expect((await req('GET', `/v1/tasks/${id}`)).statusCode).toBe(200);
    expect((await req('GET', `/v1/projects/${p.id}/tasks`)).json().data).toHaveLength(1);
    errorOf(await req('PUT', `/v1/tasks/${id}`, { title: 'x' }), 409, 'CONFLICT');
    errorOf(await req('POST', `/v1/projects/${p.id}/tasks`, { title: 'x' }), 409, 'CONFLICT');
  });
});

describe('events', () => {
  it('publishes created, assigned, status_changed, completed, updated, mentioned, deleted after commit', async () => {
    const p = await createProject(t.app, a);
    const m = await memberOf(t.app, a, 'member');
    events.length = 0;
    const id = await createTask(t.app, a, p.id, { title: 'E', assignee_id: m.userId, description: `ping @${m.email} and @nobody@example.test` });
    await settle();
    const mine = () => events.filter((e) => e.targetId === id);
    expect(mine().map((e) => e.type)).toEqual(['task.created', 'task.assigned', 'task.mentioned']);
    expect(mine()[1]).toMatchObject({ orgId: a.orgId, actorUserId: a.userId, targetType: 'task', recipients: [m.userId] });
    expect(mine()[2].recipients).toEqual([m.userId]);
    events.length = 0;
    await req('PUT', `/v1/tasks/${id}`, { status: 'in_review' });
    await req('PUT', `/v1/tasks/${id}`, { status: 'done' });
    await req('PUT', `/v1/tasks/${id}`, { status: 'done' }); // no change, no event
    await req('PUT', `/v1/tasks/${id}`, { description: `ping @${m.email} and @${a.email.toUpperCase()}` });
    await req('DELETE', `/v1/tasks/${id}`);
    await settle();
    expect(mine().map((e) => e.type)).toEqual([
      'task.updated', 'task.status_changed', 'task.updated', 'task.status_changed', 'task.completed', 'task.updated', 'task.mentioned', 'task.deleted',
    ]);
    expect(mine()[3].data).toEqual({ task_id: id, project_id: p.id, title: 'E', from: 'in_review', to: 'done', priority: 'medium', assigned_to: m.userId });
    expect(mine()[4].data).toEqual({ task_id: id, project_id: p.id, title: 'E', status_key: 'done', priority: 'medium', assigned_to: m.userId });
    expect(mine()[6].recipients).toEqual([a.userId]);
    const audit = await t.platform.db.sys.query<{ action: string }>(`SELECT action FROM audit_log WHERE org_id = $1 AND target_id = $2 ORDER BY id`, [a.orgId, id]);
    expect(audit.map((r) => r.action)).toEqual(['task.created', 'task.updated', 'task.updated', 'task.updated', 'task.deleted']);
  });

  it('task.completed: a cancelled task finished after all completes, each time it is', async () => {
    const p = await createProject(t.app, a);
    const id = await createTask(t.app, a, p.id, { title: 'Revived' });
    await settle();
    events.length = 0;
    const completions = () => events.filter((e) => e.targetId === id && e.type === 'task.completed').map((e) => (e.data as { status_key: string }).status_key);
    await req('PUT', `/v1/tasks/${id}`, { status: 'cancelled' });
    await settle();
    expect(completions()).toEqual([]);
    await req('PUT', `/v1/tasks/${id}`, { status: 'done' });
    await settle();
    expect(completions()).toEqual(['done']);
    await req('PUT', `/v1/tasks/${id}`, { status: 'cancelled' });
    await req('PUT', `/v1/tasks/${id}`, { status: 'done' });
    await settle();
    expect(completions()).toEqual(['done', 'done']);
  });
});
