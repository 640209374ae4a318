/** Simple task creations that arrive together are written in batches: each keeps its own rows, answer and errors. */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, errorOf, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import type { Sql } from '../../core/db/database.js';
import { taskInserts } from './task-inserts.js';
import { tasksRepo } from './tasks.repo.js';
import { batchedTask } from './projects.fixtures.js';

let t: TestApp;
let a: Tenant;
beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
});
afterAll(async () => { await t?.close(); });
afterEach(() => { vi.restoreAllMocks(); });

const newProject = async (tenant = a) => (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: tenant.auth, payload: { name: `P ${randomUUID()}` } })).json().data.id as string;
const createTask = (projectId: string, title: string, requestId: string, tenant = a) =>
  t.app.inject({ method: 'POST', url: `/v1/projects/${projectId}/tasks`, headers: { ...tenant.auth, 'x-request-id': requestId }, payload: { title } });

describe('simple task creations written together', () => {
  it('forty creations at once: batches of several, each task with its own activity row, audit row and request id', async () => {
    const project = await newProject();
    expect((await createTask(project, 'first', 'req-first')).statusCode).toBe(201); // the project's starting status is now known
    const sizes: number[] = [];
    const batchWrite = tasksRepo.insertWithStatusBatch;
    vi.spyOn(tasksRepo, 'insertWithStatusBatch').mockImplementation((sql, orgId, tasks) => { sizes.push(tasks.length); return batchWrite(sql, orgId, tasks); });
    const res = await Promise.all(Array.from({ length: 40 }, (_, i) => createTask(project, `task ${i}`, `req-batch-${i}`)));
    expect(res.map((r) => r.statusCode)).toEqual(Array(40).fill(201));
    expect(sizes.reduce((n, s) => n + s, 0)).toBe(40);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    const ids = res.map((r) => r.json().data as string);
    const rows = await t.platform.db.tenant(a.orgId, (sql) => sql.query<{ id: string; title: string; status_key: string; activity: number; new_title: string; audits: number; request_id: string; actor: string }>(
      `SELECT t.id, t.title, s.key AS status_key,
          (SELECT count(*)::int FROM task_activity x WHERE x.org_id = t.org_id AND x.task_id = t.id AND x.action = 'created') AS activity,
          (SELECT x.new_value->>'title' FROM task_activity x WHERE x.org_id = t.org_id AND x.task_id = t.id) AS new_title,
          (SELECT count(*)::int FROM audit_log l WHERE l.org_id = t.org_id AND l.target_id = t.id::text AND l.action = 'task.created') AS audits,
          (SELECT l.request_id FROM audit_log l WHERE l.org_id = t.org_id AND l.target_id = t.id::text) AS request_id,
          (SELECT l.actor_user_id::text FROM audit_log l WHERE l.org_id = t.org_id AND l.target_id = t.id::text) AS actor
        FROM tasks t JOIN task_statuses s ON s.org_id = t.org_id AND s.id = t.status_id WHERE t.org_id = $1 AND t.id = ANY($2::uuid[])`, [a.orgId, ids]));
    expect(rows).toHaveLength(40);
    for (const r of rows) {
      const i = ids.indexOf(r.id);
      expect(r).toEqual({ id: ids[i], title: `task ${i}`, status_key: 'todo', activity: 1, new_title: `task ${i}`, audits: 1, request_id: `req-batch-${i}`, actor: a.userId });
    }
    const feed = (await t.app.inject({ method: 'GET', url: `/v1/tasks/${ids[7]}/activity`, headers: a.auth })).json().data;
    expect(feed).toMatchObject([{ action: 'created', field: null, new_value: { title: 'task 7', status: 'todo', priority: 'medium' } }]);
  });

  it('a task for a project archived meanwhile gets 409 CONFLICT (PROJECT_ARCHIVED) and is not written; the others in its batch are', async () => {
    const [open, archived] = [await newProject(), await newProject()];
    for (const p of [open, archived]) expect((await createTask(p, 'warm', `req-warm-${p}`)).statusCode).toBe(201);
    expect((await t.app.inject({ method: 'PUT', url: `/v1/projects/${archived}`, headers: a.auth, payload: { is_active: false } })).statusCode).toBe(200);
    const sizes: number[] = [];
    const batchWrite = tasksRepo.insertWithStatusBatch;
    vi.spyOn(tasksRepo, 'insertWithStatusBatch').mockImplementation((sql, orgId, tasks) => { sizes.push(tasks.length); return batchWrite(sql, orgId, tasks); });
    const res = await Promise.all(Array.from({ length: 12 }, (_, i) => createTask(i === 6 ? archived : open, `mixed ${i}`, `req-mixed-${i}`)));
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    res.forEach((r, i) => { if (i !== 6) expect(r.statusCode).toBe(201); });
    expect(errorOf(res[6]!, 409, 'CONFLICT').details).toEqual({ code: 'PROJECT_ARCHIVED' });
    const titles = await t.platform.db.tenant(a.orgId, (sql) => sql.query<{ title: string }>(`SELECT title FROM tasks WHERE org_id = $1 AND title LIKE 'mixed %'`, [a.orgId]));
    expect(titles.map((r) => r.title).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `mixed ${i}`).filter((x) => x !== 'mixed 6').sort());
  });

  it('a task whose status no longer exists fails alone: the batch is written again item by item', async () => {
    const project = await newProject();
    const status = await t.platform.db.tenant(a.orgId, (sql) => sql.one<{ id: string }>(`SELECT id FROM task_statuses WHERE org_id = $1 AND key = 'todo' AND project_id IS NULL`, [a.orgId]));
    const item = (title: string, statusId: string) => batchedTask(a, project, statusId, title);
    const batcher = taskInserts(t.platform.db);
    const items = [item('direct 0', status!.id), item('direct 1', status!.id), item('direct 2', randomUUID()), item('direct 3', status!.id)];
    const out = await Promise.all(items.map((i) => batcher.submit(a.orgId, i).then((w) => ({ w }), (err: { code?: string }) => ({ code: err.code }))));
    expect(out).toEqual([{ w: true }, { w: true }, { code: '23503' }, { w: true }]);
    const written = await t.platform.db.tenant(a.orgId, (sql) => sql.query<{ title: string }>(`SELECT title FROM tasks WHERE org_id = $1 AND project_id = $2 ORDER BY title`, [a.orgId, project]));
    expect(written.map((r) => r.title)).toEqual(['direct 0', 'direct 1', 'direct 3']);
  });

  it('two batches on connections sharing a task counter stripe, with projects in opposite orders, do not deadlock', async () => {
    const [p1, p2] = [await newProject(), await newProject()];
    const status = await t.platform.db.tenant(a.orgId, (sql) => sql.one<{ id: string }>(`SELECT id FROM task_statuses WHERE org_id = $1 AND key = 'todo' AND project_id IS NULL`, [a.orgId]));
    const item = (projectId: string) => batchedTask(a, projectId, status!.id, 'striped');
    // Two app connections whose backends update the same counter rows (pg_backend_pid() % 64, migration 0053).
    const stripe = async (c: pg.PoolClient) => Number((await c.query('SELECT pg_backend_pid() % 64 AS s')).rows[0].s);
    const first = await t.platform.db.app.connect();
    let second: pg.PoolClient | undefined;
    for (let i = 0; i < 400 && !second; i++) {
      const c = await t.platform.db.app.connect();
      if ((await stripe(c)) === (await stripe(first))) second = c;
      else c.release(true);
    }
    try {
      expect(second).toBeDefined();
      const sqlOf = (c: pg.PoolClient) => ({ query: async (q: string, params?: unknown[]) => (await c.query(q, params)).rows }) as unknown as Sql;
      for (const c of [first, second!]) await c.query(`SELECT set_config('app.org_id', $1, false)`, [a.orgId]);
      for (let round = 0; round < 5; round++) {
        const one = Array.from({ length: 40 }, (_, k) => item(k < 20 ? p1 : p2));
        const other = Array.from({ length: 40 }, (_, k) => item(k < 20 ? p2 : p1));
        const written = await Promise.all([tasksRepo.insertWithStatusBatch(sqlOf(first), a.orgId, one), tasksRepo.insertWithStatusBatch(sqlOf(second!), a.orgId, other)]);
        expect(written.flat()).toEqual(Array(80).fill(true));
      }
    } finally {
      first.release();
      second?.release();
    }
  }, 60_000);

  it("a batch of one organization cannot write into another's project: the task is not written", async () => {
    const b = await newTenant(t.app);
    const theirs = await newProject(b);
    const status = await t.platform.db.tenant(a.orgId, (sql) => sql.one<{ id: string }>(`SELECT id FROM task_statuses WHERE org_id = $1 AND key = 'todo' AND project_id IS NULL`, [a.orgId]));
    const intruder = batchedTask(a, theirs, status!.id, 'intruder');
    const written = await taskInserts(t.platform.db).submit(a.orgId, intruder);
    expect(written).toBe(false);
    expect(await t.platform.db.sys.one(`SELECT 1 FROM tasks WHERE id = $1`, [intruder.id])).toBeUndefined();
  });
});
