import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import type { Sql } from '../../core/db/database.js';
import { assertIndexed, explainAsTenant, recorder, seedOthers, statementOf, type Statement } from '../../../test/explain-support.js';
import * as repo from './sync.repo.js';

/**
 * The statements of a sync pull (the barrier's bound, where a delta starts, a page of changes) must read the change
 * log from an index: sync_changes is the largest table of an active organization (one row per synced record, of
 * every type), so it is seeded with changes of every type across organizations, analyzed, and the statements the
 * repository really runs are explained (src/areas/projects/explain.test.ts).
 */
let t: TestApp;
let c: Tenant;

beforeAll(async () => {
  t = await buildTestApp();
  c = await newTenant(t.app);
  const sys = t.platform.db.sys;
  const { others } = await seedOthers(sys, 'ExplainSync', 40, 1);
  // 5,000 changes of each type here (a tenth of them tombstones), 500 of each type in each other organization.
  const changes = (org: string, n: number) => `INSERT INTO sync_changes (org_id, resource_type, id, change_seq, changed_at, deleted)
    SELECT ${org}, ty, app_uuidv7(), nextval('sync_change_seq'), now() - make_interval(secs => ${n} - g), g % 10 = 0
    FROM unnest($1::text[]) ty, generate_series(1, ${n}) g`;
  await sys.exec(`${changes('$2::uuid', 5000)}`, [repo.SYNC_TYPES, c.orgId]);
  await sys.exec(`${changes('o.id', 500).replace('FROM unnest', `FROM ${others} o, unnest`)}`, [repo.SYNC_TYPES]);
  await sys.exec('ANALYZE sync_changes');
}, 120_000);
afterAll(async () => { await t.close(); });

const explain = (s: Statement) => explainAsTenant(t, c.orgId, s.text, s.params);

describe('sync pull queries use indexes (EXPLAIN)', () => {
  it('the change log is big enough to matter', async () => {
    const n = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM sync_changes`);
    expect(n!.n).toBeGreaterThanOrEqual(150_000);
  });

  it('the barrier reads the type\'s highest change number from an index', async () => {
    const out: Statement[] = [];
    await t.platform.db.tenantTx(c.orgId, (sql: Sql) => repo.barrier(recorder(sql, out), c.orgId, 'tasks'));
    const bound = out.filter((s) => /FROM sync_changes/.test(s.text));
    expect(bound).toHaveLength(1);
    assertIndexed(await explain(bound[0]), 'sync_changes');
  });

  it('where a delta pull starts is read from an index', async () => {
    const q = await statementOf(t, c.orgId, (sql) => repo.startAfter(sql, c.orgId, 'tasks', Date.now() - 60_000));
    assertIndexed(await explain(q), 'sync_changes');
  });

  for (const sinceMs of [null, 0]) {
    it(`a page of changes (${sinceMs === null ? 'bulk' : 'delta'}) is read from an index`, async () => {
      const q = await statementOf(t, c.orgId, (sql) => repo.changes(sql, c.orgId, 'tasks', { after: 0, bound: Number.MAX_SAFE_INTEGER, sinceMs, limit: 501 }));
      assertIndexed(await explain(q), 'sync_changes');
    });
  }

  it('the barrier bounds the pull by its own type: a later change of another type does not move it', async () => {
    const bound = () => t.platform.db.tenantTx(c.orgId, (sql) => repo.barrier(sql, c.orgId, 'tasks'));
    const before = await bound();
    await t.platform.db.sys.exec(`INSERT INTO sync_changes (org_id, resource_type, id, change_seq, changed_at, deleted)
      VALUES ($1, 'documents', app_uuidv7(), nextval('sync_change_seq'), now(), false)`, [c.orgId]);
    expect((await bound()).bound).toBe(before.bound);
    const top = await t.platform.db.sys.one<{ seq: string }>(`SELECT max(change_seq) AS seq FROM sync_changes WHERE org_id = $1 AND resource_type = 'tasks'`, [c.orgId]);
    expect(before.bound).toBe(Number(top!.seq));
  });
});
