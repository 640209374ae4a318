import { expect } from 'vitest';
import type { Sql } from '../src/core/db/database.js';
import type { TestApp } from './helpers.js';

/** EXPLAIN helpers shared by the area tests that check every list query is answered from an index. */
export interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] }
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

type Explained = { 'QUERY PLAN': Array<{ Plan: PlanNode }> };
/** Both plans must use the index: the one for these values, and the generic one of a prepared statement. */
export type Plans = { custom: PlanNode[]; generic: PlanNode[] };
const literal = (v: unknown) => v === null ? 'NULL' : typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(v);

/**
 * The plan for these parameter values, and the generic plan of the same statement prepared: request connections
 * run with plan_cache_mode=force_generic_plan (src/core/db/database.ts), so the generic plan is what requests use.
 */
export async function plansOn(sql: Sql, text: string, params: unknown[]): Promise<Plans> {
  const custom = await sql.query<Explained>(`EXPLAIN (FORMAT JSON) ${text}`, params);
  await sql.exec(`PREPARE explained AS ${text}`);
  try {
    const generic = await sql.query<Explained>(`EXPLAIN (FORMAT JSON) EXECUTE explained(${params.map(literal).join(', ')})`);
    return { custom: nodes(custom[0]['QUERY PLAN'][0].Plan), generic: nodes(generic[0]['QUERY PLAN'][0].Plan) };
  } finally {
    await sql.exec('DEALLOCATE explained');
  }
}

/** Both plans of a statement as the request role in the organization (the setting requests run with checked). */
export async function explainAsTenant(t: TestApp, orgId: string, text: string, params: unknown[]): Promise<Plans> {
  return t.platform.db.tenant(orgId, async (sql) => {
    expect((await sql.one<{ m: string }>(`SELECT current_setting('plan_cache_mode') AS m`))!.m).toBe('force_generic_plan');
    return plansOn(sql, text, params);
  });
}

/** No sequential scan of `table`, and an index (or bitmap) scan of it, in both plans. */
export function assertIndexed(plans: Plans, table: string): void {
  for (const [kind, plan] of Object.entries(plans)) {
    const shape = `${kind} plan: ${JSON.stringify(plan.map((n) => [n['Node Type'], n['Relation Name'], n['Index Name']]))}`;
    const seq = plan.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === table);
    expect(seq, shape).toEqual([]);
    const used = plan.filter((n) => /Index|Bitmap Heap/.test(n['Node Type']) && n['Relation Name'] === table);
    expect(used.length, shape).toBeGreaterThan(0);
  }
}

/** What a repository or service ran, recorded on the way through to the real connection. */
export interface Statement { text: string; params: unknown[] }
export function recorder(sql: Sql, out: Statement[]): Sql {
  const rec = (f: (text: string, params?: unknown[]) => Promise<unknown>) =>
    (text: string, params: unknown[] = []) => { out.push({ text, params }); return f(text, params); };
  return { query: rec(sql.query.bind(sql)), one: rec(sql.one.bind(sql)), exec: rec(sql.exec.bind(sql)) } as Sql;
}

/** The one statement a repository function runs in the organization. */
export async function statementOf(t: TestApp, orgId: string, run: (sql: Sql) => Promise<unknown>): Promise<Statement> {
  const out: Statement[] = [];
  await t.platform.db.tenant(orgId, (sql) => run(recorder(sql, out)));
  expect(out).toHaveLength(1);
  return out[0];
}

/** The tenant statements a real GET request runs (for statements written inline in a service). */
export async function statementsOfRoute(t: TestApp, auth: Record<string, string>, url: string): Promise<Statement[]> {
  const db = t.platform.db;
  const out: Statement[] = [];
  const original = db.tenant;
  db.tenant = ((orgId: string, fn: (sql: Sql) => Promise<unknown>) => original.call(db, orgId, (sql) => fn(recorder(sql, out)))) as typeof db.tenant;
  try {
    const r = await t.app.inject({ method: 'GET', url, headers: auth });
    expect(r.statusCode, r.body).toBe(200);
  } finally {
    db.tenant = original;
  }
  return out;
}

/**
 * Organizations and users that are not the caller's, for a test to fill tables with: `orgs` organizations named
 * `<tag> <n>` and `users` users with e-mails `<tag>-<n>-...`, so the test files sharing the database never pick up
 * each other's rows. Returns SQL subqueries selecting them (`people` numbers its users `n`, 1 to `users`).
 */
export async function seedOthers(sys: Sql, tag: string, orgs: number, users: number): Promise<{ others: string; people: string }> {
  const slug = tag.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  await sys.exec(`INSERT INTO organizations (id, name, slug) SELECT app_uuidv7(), $1 || ' ' || g, $2 || '-' || g || '-' || substr(md5(random()::text), 1, 8)
    FROM generate_series(1, $3::int) g`, [tag, slug, orgs]);
  await sys.exec(`INSERT INTO users (id, email, name) SELECT app_uuidv7(), $1 || '-' || g || '-' || md5(random()::text) || '@example.test', $2 || ' ' || g
    FROM generate_series(1, $3::int) g`, [slug, tag, users]);
  return {
    others: `(SELECT id FROM organizations WHERE name LIKE '${tag} %')`,
    people: `(SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE email LIKE '${slug}-%')`,
  };
}
