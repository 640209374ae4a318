import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { listProjectsSql } from './projects.repo.js';
import { listTasksSql, tasksRepo } from './tasks.repo.js';
import { batchedTask } from './projects.fixtures.js';
import { partsRepo } from './project-parts.repo.js';
import type { Sql } from '../../core/db/database.js';
import { assertIndexed, explainAsTenant, statementOf as statementIn, type Plans, type Statement } from '../../../test/explain-support.js';
import { PROJECT_STATUSES } from './projects.schemas.js';
import type { ListTasksFilter } from './tasks.schemas.js';

/**
 * Every list query must be answered from an index with org_id first. No planner tricks: the tables are
 * seeded with enough rows across organizations, analyzed, and the real statements are explained.
 */
let t: TestApp;
let c: Tenant;
let projectId: string;
let specId: string;
let taskId: string;

beforeAll(async () => {
  t = await buildTestApp();
  c = await newTenant(t.app);
  const sys = t.platform.db.sys;
  // 60 other organizations with 200 projects each, and 40 projects with 500 tasks each in the tested one.
  await sys.exec(`INSERT INTO organizations (id, name, slug) SELECT app_uuidv7(), 'Explain ' || g, 'explain-' || g || '-' || substr(md5(random()::text), 1, 8) FROM generate_series(1, 60) g`);
  await sys.exec(`INSERT INTO projects (org_id, id, name, slug, is_active)
    SELECT o.id, app_uuidv7(), 'P' || g, 'p-' || g, g % 7 <> 0 FROM organizations o, generate_series(1, 200) g WHERE o.name LIKE 'Explain %'`);
  await sys.exec(`INSERT INTO projects (org_id, id, name, slug, is_active, created_by_user_id)
    SELECT $1, app_uuidv7(), 'Mine ' || g, 'mine-' || g, g % 5 <> 0, $2 FROM generate_series(1, 40) g`, [c.orgId, c.userId]);
  projectId = (await sys.one<{ id: string }>(`SELECT id FROM projects WHERE org_id = $1 ORDER BY id LIMIT 1`, [c.orgId]))!.id;
  specId = (await sys.one<{ id: string }>(`INSERT INTO specs (org_id, id, project_id, title) VALUES ($1, app_uuidv7(), $2, 'S') RETURNING id`, [c.orgId, projectId]))!.id;
  await sys.exec(`INSERT INTO tasks (org_id, id, project_id, spec_id, title, status_id, priority, assigned_to)
    SELECT p.org_id, app_uuidv7(), p.id, CASE WHEN p.id = $3 AND g % 50 = 0 THEN $3::uuid END, 'T' || g,
      (SELECT s.id FROM task_statuses s WHERE s.org_id = p.org_id AND s.project_id IS NULL ORDER BY s.sort_order OFFSET g % 5 LIMIT 1),
      'medium', CASE WHEN g % 20 = 0 THEN $2::uuid END
    FROM projects p, generate_series(1, 500) g WHERE p.org_id = $1`, [c.orgId, c.userId, specId]);
  await sys.exec(`UPDATE tasks SET spec_id = $2 WHERE org_id = $1 AND project_id = $3 AND title LIKE '%0'`, [c.orgId, specId, projectId]);
  // Sub-resources of projects: many rows in every organization's projects, a full page and more in the tested one.
  await sys.exec(`INSERT INTO users (id, email, name) SELECT app_uuidv7(), 'explain-pm-' || g || '-' || md5(random()::text) || '@example.test', 'PM ' || g
    FROM generate_series(1, 300) g`);
  const users = `(SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE email LIKE 'explain-pm-%')`;
  // Only this file's organizations: the test database is shared with the other test files running meanwhile, whose
  // tenants must not gain rows (the route-wide safety tests count them).
  const ours = `(p.org_id = $1 OR p.org_id IN (SELECT id FROM organizations WHERE name LIKE 'Explain %'))`;
  await sys.exec(`INSERT INTO project_members (org_id, project_id, user_id, role)
    SELECT p.org_id, p.id, u.id, 'member' FROM projects p JOIN ${users} u ON u.n <= CASE WHEN p.org_id = $1 THEN 300 ELSE 2 END
    WHERE ${ours} ON CONFLICT DO NOTHING`, [c.orgId]);
  for (const [table, cols, vals] of [
    ['project_categories', 'name', `'C' || g`],
    ['project_phases', 'name, sort_order', `'Ph' || g, g`],
    ['specs', 'title', `'S' || g`],
  ] as const) {
    await sys.exec(`INSERT INTO ${table} (org_id, id, project_id, ${cols})
      SELECT p.org_id, app_uuidv7(), p.id, ${vals} FROM projects p, generate_series(1, 300) g WHERE ${ours} AND g <= CASE WHEN p.org_id = $1 THEN 300 ELSE 2 END`, [c.orgId]);
  }
  taskId = (await sys.one<{ id: string }>(`SELECT id FROM tasks WHERE org_id = $1 AND project_id = $2 ORDER BY id LIMIT 1`, [c.orgId, projectId]))!.id;
  // Two activity rows for each task of the organization, 300 for the tested task.
  await sys.exec(`INSERT INTO task_activity (org_id, id, task_id, action, field, actor_user_id, actor_kind)
    SELECT t.org_id, app_uuidv7(), t.id, 'updated', 'title', $2, 'user' FROM tasks t, generate_series(1, 300) g
    WHERE t.org_id = $1 AND g <= CASE WHEN t.id = $3 THEN 300 ELSE 2 END`, [c.orgId, c.userId, taskId]);
  for (const table of ['users', 'project_members', 'project_categories', 'project_phases', 'specs', 'task_activity']) await sys.exec(`ANALYZE ${table}`);
  await sys.exec('ANALYZE projects');
  await sys.exec('ANALYZE tasks');
  await sys.exec('ANALYZE task_statuses');
}, 120_000);
afterAll(async () => { await t.close(); });

const explain = (text: string, params: unknown[]): Promise<Plans> => explainAsTenant(t, c.orgId, text, params);
/** The one statement a repository function runs, recorded on the way through to the real connection. */
const statementOf = (run: (sql: Sql) => Promise<unknown>): Promise<Statement> => statementIn(t, c.orgId, run);

describe('list queries use indexes (EXPLAIN)', () => {
  it('the tables are big enough to matter', async () => {
    const n = await t.platform.db.sys.one<{ p: number; t: number }>(`SELECT (SELECT count(*)::int FROM projects) AS p, (SELECT count(*)::int FROM tasks) AS t`);
    expect(n!.p).toBeGreaterThanOrEqual(12_000);
    expect(n!.t).toBeGreaterThanOrEqual(20_000);
  });

  for (const status of PROJECT_STATUSES) {
    it(`GET /v1/projects?status=${status}`, async () => {
      assertIndexed(await explain(listProjectsSql(status), [c.orgId, 50, 0]), 'projects');
    });
  }

  const filters: Array<[string, () => ListTasksFilter]> = [
    ['no filter', () => ({})],
    ['status', () => ({ status: 'todo' })],
    ['assignee_id', () => ({ assignee_id: c.userId })],
    ['spec_id', () => ({ spec_id: specId })],
    ['all filters', () => ({ spec_id: specId, status: 'done', assignee_id: c.userId })],
  ];
  for (const [name, f] of filters) {
    it(`GET /v1/projects/{id}/tasks with ${name}`, async () => {
      const q = listTasksSql(f());
      assertIndexed(await explain(q.text, q.params({ orgId: c.orgId, projectId, limit: 50, offset: 0, ...f() })), 'tasks');
    });
  }

  it('POST /v1/projects/{id}/tasks, written in a batch: each task\'s project read through its index', async () => {
    const status = (await t.platform.db.sys.one<{ id: string }>(`SELECT id FROM task_statuses WHERE org_id = $1 AND project_id IS NULL ORDER BY sort_order LIMIT 1`, [c.orgId]))!.id;
    const task = (title: string) => batchedTask(c, projectId, status, title);
    let text = ''; // the statement only, not run: the seeded tasks stay as the other tests count them
    await tasksRepo.insertWithStatusBatch({ query: async (q: string) => { text = q; return []; } } as unknown as Sql, c.orgId, [task('explained 1'), task('explained 2')]);
    assertIndexed(await explain(text, [c.orgId, JSON.stringify([])]), 'projects');
  });

  const parts: Array<[string, (sql: Sql, orgId: string, projectId: string, limit: number, offset: number) => Promise<unknown>, string]> = [
    ['members', partsRepo.members, 'project_members'],
    ['categories', partsRepo.categories, 'project_categories'],
    ['phases', partsRepo.phases, 'project_phases'],
    ['specs', partsRepo.specs, 'specs'],
  ];
  for (const [name, list, table] of parts) {
    it(`GET /v1/projects/{id}/${name}`, async () => {
      const q = await statementOf((sql) => list(sql, c.orgId, projectId, 50, 0));
      assertIndexed(await explain(q.text, q.params), table);
    });
  }

  it('GET /v1/tasks/{id}/activity', async () => {
    const q = await statementOf((sql) => tasksRepo.activity(sql, c.orgId, taskId, 50, 0));
    assertIndexed(await explain(q.text, q.params), 'task_activity');
  });

  it('the sub-resource routes answer with the seeded rows', async () => {
    for (const name of ['members', 'categories', 'phases', 'specs']) {
      const r = await t.app.inject({ method: 'GET', url: `/v1/projects/${projectId}/${name}?limit=10`, headers: c.auth });
      expect(r.json().pagination, name).toMatchObject({ total: 300 + (name === 'specs' ? 1 : 0) });
    }
    const a = await t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}/activity?limit=10`, headers: c.auth });
    expect(a.json().pagination.total).toBeGreaterThanOrEqual(300);
  });

  it('the real route answers with the seeded rows', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/v1/projects/${projectId}/tasks?limit=100`, headers: c.auth });
    expect(r.json().pagination).toMatchObject({ total: 500, has_more: true });
    const p = await t.app.inject({ method: 'GET', url: '/v1/projects?status=all', headers: c.auth });
    expect(p.json().pagination.total).toBe(40);
  });
});
