import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { listProjectsSql } from './projects.repo.js';
import { listTasksSql } from './tasks.repo.js';
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
  await sys.exec('ANALYZE projects');
  await sys.exec('ANALYZE tasks');
  await sys.exec('ANALYZE task_statuses');
}, 120_000);
afterAll(async () => { await t.close(); });

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] }
function nodes(n: PlanNode): PlanNode[] { return [n, ...(n.Plans ?? []).flatMap(nodes)]; }

async function explain(text: string, params: unknown[]): Promise<PlanNode[]> {
  const rows = await t.platform.db.tenant(c.orgId, (sql) => sql.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, params));
  return nodes(rows[0]['QUERY PLAN'][0].Plan);
}

function assertIndexed(plan: PlanNode[], table: string) {
  const seq = plan.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === table);
  expect(seq, JSON.stringify(plan.map((n) => [n['Node Type'], n['Relation Name'], n['Index Name']]))).toEqual([]);
  const used = plan.filter((n) => /Index|Bitmap Heap/.test(n['Node Type']) && n['Relation Name'] === table);
  expect(used.length).toBeGreaterThan(0);
}

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

  it('the real route answers with the seeded rows', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/v1/projects/${projectId}/tasks?limit=100`, headers: c.auth });
    expect(r.json().pagination).toMatchObject({ total: 500, has_more: true });
    const p = await t.app.inject({ method: 'GET', url: '/v1/projects?status=all', headers: c.auth });
    expect(p.json().pagination.total).toBe(40);
  });
});
