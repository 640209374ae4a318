import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { uuidv7 } from '../../core/ids.js';
import { waitFor } from '../workspace/test-support.js';
import { createProject, createTask } from './projects.fixtures.js';
import { firstOpenStatuses, TASK_STATUSES_CHANNEL } from './first-open-status.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
  await waitFor(async () => t.platform.db.listener.isLive(TASK_STATUSES_CHANNEL));
});
afterAll(async () => { await t.close(); });

const statusOf = async (a: Tenant, id: string) =>
  (await t.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: a.auth })).json().data.status_key as string;
/** A project-scoped open status ahead of the organization's `todo`; `announce: false` writes it as another process would without the trigger. */
const addBacklog = (a: Tenant, projectId: string, announce: boolean) => t.platform.db.systemTx(async (sql) => {
  if (!announce) await sql.exec(`SET LOCAL session_replication_role = replica`);
  await sql.exec(`INSERT INTO task_statuses (org_id, id, project_id, key, name, sort_order, is_done) VALUES ($1, $2, $3, 'backlog', 'Backlog', 5, false)`,
    [a.orgId, uuidv7(), projectId]);
});

describe('the status new tasks start in, kept in memory (first-open-status.ts)', () => {
  it('is looked up once per project, then kept until a change to the statuses is announced', async () => {
    const a = await newTenant(t.app);
    const p = await createProject(t.app, a);
    expect(await statusOf(a, await createTask(t.app, a, p.id))).toBe('todo');
    await addBacklog(a, p.id, false); // unannounced: the memory still answers
    expect(await statusOf(a, await createTask(t.app, a, p.id))).toBe('todo');
    await t.platform.db.sys.exec(`UPDATE task_statuses SET name = 'Backlog items' WHERE org_id = $1 AND key = 'backlog'`, [a.orgId]); // announced
    await waitFor(async () => (await statusOf(a, await createTask(t.app, a, p.id))) === 'backlog', 5_000, 10);
    const other = await createProject(t.app, a); // the project-scoped status is its project's only
    expect(await statusOf(a, await createTask(t.app, a, other.id))).toBe('todo');
  });

  it('a kept status that no longer exists: the task is created in the status the lookup finds, which replaces the entry', async () => {
    const a = await newTenant(t.app);
    const p = await createProject(t.app, a);
    const statuses = firstOpenStatuses(t.platform.db);
    await statuses.get(a.orgId, p.id, async () => ({ id: uuidv7(), key: 'gone' }));
    const id = await createTask(t.app, a, p.id);
    expect(await statusOf(a, id)).toBe('todo');
    const act = await t.platform.db.sys.one<{ new_value: { status: string } }>(`SELECT new_value FROM task_activity WHERE org_id = $1 AND task_id = $2`, [a.orgId, id]);
    expect(act!.new_value.status).toBe('todo');
    expect(await statuses.get(a.orgId, p.id, async () => undefined)).toMatchObject({ key: 'todo' }); // 'gone' forgotten, the lookup's status kept
  });

  it('with the status kept, an archived project still refuses (409 PROJECT_ARCHIVED) and an unknown one is 404, writing nothing', async () => {
    const a = await newTenant(t.app);
    const p = await createProject(t.app, a);
    await createTask(t.app, a, p.id);
    const archive = await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { is_active: false } });
    expect(archive.statusCode).toBe(200);
    const r = await t.app.inject({ method: 'POST', url: `/v1/projects/${p.id}/tasks`, headers: a.auth, payload: { title: 'late' } });
    expect(r.statusCode).toBe(409);
    expect(r.json().error).toMatchObject({ code: 'CONFLICT', details: { code: 'PROJECT_ARCHIVED' } });
    const unknown = uuidv7();
    await firstOpenStatuses(t.platform.db).get(a.orgId, unknown, async () => ({ id: uuidv7(), key: 'todo' }));
    const u = await t.app.inject({ method: 'POST', url: `/v1/projects/${unknown}/tasks`, headers: a.auth, payload: { title: 'x' } });
    expect(u.statusCode).toBe(404);
    expect(u.json().error.code).toBe('NOT_FOUND');
    const n = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE org_id = $1`, [a.orgId]);
    expect(n!.n).toBe(1);
    const audits = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE org_id = $1 AND action = 'task.created'`, [a.orgId]);
    expect(audits!.n).toBe(1);
  });
});
