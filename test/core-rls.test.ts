/** Tenancy in the database: every tenant table has forced row-level security, and the app role sees one organization only. */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { buildTestApp, newTenant, type TestApp, type Tenant } from './helpers.js';
import { APP_ROLE } from '../src/core/db/database.js';
import { uuidv7 } from '../src/core/ids.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;
/** Tables of schema public with an org_id column, plus organizations (keyed by id). */
let tenantTables: Array<{ name: string; col: string }>;

beforeAll(async () => {
  t = await buildTestApp();
  [a, b] = await Promise.all([newTenant(t.app, { name: 'rls-a' }), newTenant(t.app, { name: 'rls-b' })]);
  // Give each organization a few rows in the core tables.
  await Promise.all([a, b].map((x) => x.apiKey(['projects:read'])));
  const rows = await t.platform.db.sys.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
        AND EXISTS (SELECT 1 FROM pg_attribute at WHERE at.attrelid = c.oid AND at.attname = 'org_id' AND NOT at.attisdropped)
      ORDER BY 1`);
  tenantTables = [{ name: 'organizations', col: 'id' }, ...rows.map((r) => ({ name: r.name, col: 'org_id' }))];
});
afterAll(async () => { await t.close(); });

describe('schema', () => {
  it('every tenant table has row-level security enabled and forced, with the tenant_isolation policy', async () => {
    expect(tenantTables.length).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const { name, col } of tenantTables) {
      const c = await t.platform.db.sys.one<{ relrowsecurity: boolean; relforcerowsecurity: boolean }>(
        `SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = $1::regclass`, [`public.${name}`]);
      if (!c?.relrowsecurity) problems.push(`${name}: row level security not enabled`);
      if (!c?.relforcerowsecurity) problems.push(`${name}: row level security not forced`);
      const p = await t.platform.db.sys.one<{ roles: string[]; qual: string | null; with_check: string | null; permissive: string; cmd: string }>(
        `SELECT roles::text[] AS roles, qual, with_check, permissive, cmd FROM pg_policies WHERE schemaname = 'public' AND tablename = $1 AND policyname = 'tenant_isolation'`, [name]);
      if (!p) { problems.push(`${name}: no tenant_isolation policy`); continue; }
      if (!p.roles.includes(APP_ROLE)) problems.push(`${name}: tenant_isolation is not for ${APP_ROLE} (${p.roles.join(',')})`);
      if (!p.qual?.includes(col) || !p.qual.includes('app_current_org()')) problems.push(`${name}: tenant_isolation USING is ${p.qual}`);
      if (p.cmd === 'ALL' && (!p.with_check?.includes(col) || !p.with_check.includes('app_current_org()'))) problems.push(`${name}: tenant_isolation WITH CHECK is ${p.with_check}`);
      // No other policy may widen what the app role sees (permissive policies are OR-ed together).
      const wider = await t.platform.db.sys.query<{ policyname: string }>(
        `SELECT policyname FROM pg_policies WHERE schemaname = 'public' AND tablename = $1 AND policyname <> 'tenant_isolation'
            AND permissive = 'PERMISSIVE' AND ($2 = ANY (roles) OR 'public' = ANY (roles))`, [name, APP_ROLE]);
      for (const w of wider) problems.push(`${name}: policy ${w.policyname} also applies to ${APP_ROLE}`);
    }
    expect(problems).toEqual([]);
  });

  it('every tenant table has org_id as the first column of its primary key (design: shardable by organization)', async () => {
    const rows = await t.platform.db.sys.query<{ name: string; first: string | null }>(
      `SELECT c.relname AS name, (SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
          WHERE i.indrelid = c.oid AND i.indisprimary) AS first
        FROM pg_class c WHERE c.oid = ANY ($1::regclass[])`, [tenantTables.filter((x) => x.col === 'org_id').map((x) => `public.${x.name}`)]);
    expect(rows.length).toBe(tenantTables.length - 1);
    expect(rows.filter((r) => r.first !== 'org_id').map((r) => `${r.name}: ${r.first ?? 'no primary key'}`)).toEqual([]);
  });

  it(`the app role ${APP_ROLE} is not a superuser and cannot bypass RLS`, async () => {
    const r = await t.platform.db.sys.one<{ rolsuper: boolean; rolbypassrls: boolean; rolcanlogin: boolean }>(
      `SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = $1`, [APP_ROLE]);
    expect(r).toEqual({ rolsuper: false, rolbypassrls: false, rolcanlogin: false });
  });

  it('the app role owns no table (owners bypass unforced RLS and can alter policies)', async () => {
    const owned = await t.platform.db.sys.query<{ relname: string }>(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_roles r ON r.oid = c.relowner
        WHERE n.nspname = 'public' AND r.rolname = $1`, [APP_ROLE]);
    expect(owned).toEqual([]);
  });

  it('views the app role may read run with the caller\'s rights (security_invoker), so RLS still applies', async () => {
    const views = await t.platform.db.sys.query<{ relname: string; reloptions: string[] | null; can_read: boolean }>(
      `SELECT c.relname, c.reloptions, has_table_privilege($1, c.oid, 'SELECT') AS can_read
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('v', 'm')`, [APP_ROLE]);
    const unsafe = views.filter((v) => v.can_read && !(v.reloptions ?? []).some((o) => /^security_invoker=(true|on|1)$/i.test(o))).map((v) => v.relname);
    expect(unsafe).toEqual([]);
  });
});

describe('queries as the app role', () => {
  it('a request connection runs as the app role', async () => {
    const who = await t.platform.db.tenant(a.orgId, (sql) => sql.one<{ u: string; org: string }>(`SELECT current_user AS u, current_setting('app.org_id') AS org`));
    expect(who).toEqual({ u: APP_ROLE, org: a.orgId });
  });

  it("with org A bound, no table shows a row of another organization, even without a WHERE", async () => {
    const leaks: string[] = [];
    let otherRowsSeenByOwner = 0;
    for (const { name, col } of tenantTables) {
      const total = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}" WHERE ${col} <> $1::uuid`, [a.orgId]);
      otherRowsSeenByOwner += total?.n ?? 0;
      try {
        const seen = await t.platform.db.tenant(a.orgId, (sql) => sql.query<{ c: string }>(`SELECT ${col}::text AS c FROM "${name}"`));
        const foreign = seen.filter((r) => r.c !== a.orgId);
        if (foreign.length) leaks.push(`${name}: ${foreign.length} rows of other organizations`);
      } catch (err) {
        // Not readable by the app role at all is just as safe.
        if ((err as { code?: string }).code !== '42501') throw err;
      }
    }
    expect(otherRowsSeenByOwner).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
  });

  it('the tenant policy is an index condition of its own, not a per-row gate over the scan', async () => {
    // With `org_id = app_current_org()` next to the statement's own `org_id = $1`, PostgreSQL merged the two into a
    // one-time filter on a Result node that every scanned row passed through (migration 0046).
    const plan = await t.platform.db.tenant(a.orgId, async (sql) => {
      await sql.query('SET enable_seqscan = off'); // a test database is tiny; the plan shape of a real one is the point
      try {
        return (await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT count(*) FROM memberships WHERE org_id = '${a.orgId}'`)).map((r) => r['QUERY PLAN']).join('\n');
      } finally { await sql.query('RESET enable_seqscan'); }
    });
    expect(plan).not.toContain('One-Time Filter');
    expect(plan).toMatch(/Index (Only )?Scan/);
    expect(plan).toMatch(/Index Cond: .*ANY \(ARRAY\[.*current_setting\('app\.org_id'/);
  });

  it('A sees its own rows (the policy is not simply "nothing")', async () => {
    const orgs = await t.platform.db.tenant(a.orgId, (sql) => sql.query<{ id: string }>(`SELECT id FROM organizations`));
    expect(orgs.map((o) => o.id)).toEqual([a.orgId]);
    const members = await t.platform.db.tenant(a.orgId, (sql) => sql.query<{ org_id: string; user_id: string }>(`SELECT org_id, user_id FROM memberships`));
    expect(members).toEqual([{ org_id: a.orgId, user_id: a.userId }]);
  });

  it("writes to another organization's rows are refused or touch nothing", async () => {
    const insert = t.platform.db.tenant(a.orgId, (sql) => sql.exec(
      `INSERT INTO audit_log (org_id, id, credential_kind, action, target_type) VALUES ($1, $2, 'system', 'rls.test', 'test')`, [b.orgId, uuidv7()]));
    await expect(insert).rejects.toMatchObject({ code: '42501' });
    const updated = await t.platform.db.tenant(a.orgId, (sql) => sql.exec(`UPDATE api_keys SET name = 'hijacked' WHERE org_id = $1`, [b.orgId]));
    expect(updated).toBe(0);
    const deleted = await t.platform.db.tenant(a.orgId, (sql) => sql.exec(`DELETE FROM memberships WHERE org_id = $1`, [b.orgId]));
    expect(deleted).toBe(0);
    // Moving an own row into another organization is refused by WITH CHECK.
    const moved = t.platform.db.tenant(a.orgId, (sql) => sql.exec(`UPDATE api_keys SET org_id = $1 WHERE org_id = $2`, [b.orgId, a.orgId]));
    await expect(moved).rejects.toMatchObject({ code: expect.stringMatching(/^(42501|23503|23505)$/) });
    const intact = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM memberships WHERE org_id = $1`, [b.orgId]);
    expect(intact?.n).toBe(1);
  });

  it('a connection with no organization bound sees no tenant rows', async () => {
    const client = new pg.Client({ connectionString: inject('databaseUrl') });
    await client.connect();
    try {
      await client.query(`SET ROLE ${APP_ROLE}`);
      for (const { name } of tenantTables) {
        try {
          const r = await client.query(`SELECT count(*)::int AS n FROM "${name}"`);
          expect(r.rows[0].n, name).toBe(0);
        } catch (err) {
          if ((err as { code?: string }).code !== '42501') throw err;
        }
      }
    } finally { await client.end(); }
  });
});
