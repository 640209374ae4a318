import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { assertIndexed, explainAsTenant, plansOn, recorder, seedOthers, statementsOfRoute as statementsOf, type Plans, type Statement } from '../../../test/explain-support.js';
import { accountsRepo } from './accounts.repo.js';

/**
 * The list queries of accounts (organization members, the caller's organizations, API keys) must be answered from an
 * index: the tables are seeded with rows across organizations and users, analyzed, and the statements the services
 * really run are explained, as the role that runs them (src/areas/projects/explain.test.ts).
 */
let t: TestApp;
let c: Tenant;

beforeAll(async () => {
  t = await buildTestApp();
  c = await newTenant(t.app);
  const sys = t.platform.db.sys;
  const { others, people } = await seedOthers(sys, 'ExplainAcc', 60, 1000);
  // 400 members here, 300 in each other organization; the caller belongs to all 60 others too.
  await sys.exec(`INSERT INTO memberships (org_id, user_id, role) SELECT $1, u.id, 'member' FROM ${people} u WHERE u.n <= 400`, [c.orgId]);
  await sys.exec(`INSERT INTO memberships (org_id, user_id, role) SELECT o.id, u.id, 'member' FROM ${others} o, ${people} u WHERE u.n <= 300`);
  await sys.exec(`INSERT INTO memberships (org_id, user_id, role) SELECT o.id, $1, 'member' FROM ${others} o`, [c.userId]);
  // API keys: 500 of the caller and 500 of colleagues here, 300 in each other organization.
  const key = (org: string, user: string) => `INSERT INTO api_keys (org_id, id, prefix, key_hash, name, expires_at, created_by_user_id)
    SELECT ${org}, app_uuidv7(), 'ex' || md5(random()::text), md5(random()::text), 'K' || g, now() + interval '1 day', ${user}`;
  await sys.exec(`${key('$1::uuid', '$2::uuid')} FROM generate_series(1, 500) g`, [c.orgId, c.userId]);
  await sys.exec(`${key('$1::uuid', 'u.id')} FROM ${people} u, generate_series(1, 5) g WHERE u.n <= 100`, [c.orgId]);
  await sys.exec(`${key('o.id', 'u.id')} FROM ${others} o, ${people} u, generate_series(1, 3) g WHERE u.n <= 100`);
  for (const table of ['users', 'organizations', 'memberships', 'api_keys']) await sys.exec(`ANALYZE ${table}`);
}, 120_000);
afterAll(async () => { await t.close(); });

/**
 * As the request role in the caller's organization (tenant statements), or as the owner role (`sys` statements;
 * its pool keeps the default plan_cache_mode, so the generic plan is forced for this transaction only).
 */
async function explain(text: string, params: unknown[], as: 'tenant' | 'sys' = 'tenant'): Promise<Plans> {
  if (as === 'tenant') return explainAsTenant(t, c.orgId, text, params);
  return t.platform.db.systemTx(async (sql) => {
    await sql.exec(`SET LOCAL plan_cache_mode = force_generic_plan`);
    return plansOn(sql, text, params);
  });
}
/** The tenant statements a real request runs (the list statements are written inline in the services). */
const statementsOfRoute = (url: string): Promise<Statement[]> => statementsOf(t, c.auth, url);
async function listStatementOf(url: string, table: string): Promise<Statement> {
  const list = (await statementsOfRoute(url)).filter((s) => new RegExp(`FROM ${table}\\b`).test(s.text) && /LIMIT/.test(s.text));
  expect(list).toHaveLength(1);
  return list[0];
}

describe('accounts list queries use indexes (EXPLAIN)', () => {
  it('the tables are big enough to matter', async () => {
    const n = await t.platform.db.sys.one<{ m: number; k: number }>(`SELECT (SELECT count(*)::int FROM memberships) AS m, (SELECT count(*)::int FROM api_keys) AS k`);
    expect(n!.m).toBeGreaterThanOrEqual(18_000);
    expect(n!.k).toBeGreaterThanOrEqual(19_000);
  });

  it('GET /v1/organizations/current/members', async () => {
    const q = await listStatementOf('/v1/organizations/current/members?limit=50', 'memberships');
    assertIndexed(await explain(q.text, q.params), 'memberships');
  });

  it('GET /v1/organizations (owner role, by user)', async () => {
    const out: Statement[] = [];
    await accountsRepo.orgsOfUser(recorder(t.platform.db.sys, out), c.userId);
    expect(out).toHaveLength(1);
    assertIndexed(await explain(out[0].text, out[0].params, 'sys'), 'memberships');
  });

  it('GET /v1/api-keys (all of the organization, with org.manage_api_keys)', async () => {
    const q = await listStatementOf('/v1/api-keys?limit=50', 'api_keys');
    expect(q.params.slice(0, 3)).toEqual([c.orgId, true, c.userId]);
    assertIndexed(await explain(q.text, q.params), 'api_keys');
  });

  it("GET /v1/api-keys (the caller's own, without org.manage_api_keys)", async () => {
    const q = await listStatementOf('/v1/api-keys?limit=50', 'api_keys');
    assertIndexed(await explain(q.text, [c.orgId, false, c.userId, 50, 0]), 'api_keys');
  });

  it('the real routes answer with the seeded rows', async () => {
    const m = await t.app.inject({ method: 'GET', url: '/v1/organizations/current/members?limit=10', headers: c.auth });
    expect(m.json().pagination.total).toBe(401);
    const o = await t.app.inject({ method: 'GET', url: '/v1/organizations?limit=10', headers: c.auth });
    expect(o.json().pagination.total).toBe(61);
    const k = await t.app.inject({ method: 'GET', url: '/v1/api-keys?limit=10', headers: c.auth });
    expect(k.json().pagination.total).toBe(1000);
  });
});
