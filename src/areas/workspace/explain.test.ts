import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import type { Sql } from '../../core/db/database.js';
import { assertIndexed, explainAsTenant, seedOthers, statementOf as statementIn, statementsOfRoute as statementsOf, type Plans, type Statement } from '../../../test/explain-support.js';
import { notificationsRepo } from './notifications/notifications.repo.js';
import type { ListQueryInput } from './notifications/notifications.schemas.js';
import { alertRulesRepo } from './alert-rules/alert-rules.repo.js';

/**
 * Every list query of the workspace (notifications, alert rules and their deliveries, saved views) must be answered
 * from an index with org_id first: the tables are seeded with rows across organizations and users, analyzed, and
 * the statements the repositories and services really run are explained (src/areas/projects/explain.test.ts).
 */
let t: TestApp;
let c: Tenant;
let ruleId: string;

beforeAll(async () => {
  t = await buildTestApp();
  c = await newTenant(t.app);
  const sys = t.platform.db.sys;
  const { others, people: colleagues } = await seedOthers(sys, 'ExplainWs', 40, 50);
  // Notifications: 3,000 of the caller (mixed read/archived/type/channel), 200 of each of 50 colleagues, 500 in each other organization.
  const notif = (org: string, user: string) => `INSERT INTO notifications (org_id, id, user_id, notification_type, title, channel, is_read, is_archived)
    SELECT ${org}, app_uuidv7(), ${user}, (ARRAY['info','success','warning','error','action_required'])[1 + g % 5], 'N' || g,
      (ARRAY['in_app','email','push','slack'])[1 + g % 4], g % 3 <> 0, g % 10 = 0`;
  await sys.exec(`${notif('$1::uuid', '$2::uuid')} FROM generate_series(1, 3000) g`, [c.orgId, c.userId]);
  await sys.exec(`${notif('$1::uuid', 'u.id')} FROM ${colleagues} u, generate_series(1, 200) g`, [c.orgId]);
  await sys.exec(`${notif('o.id', '$1::uuid')} FROM ${others} o, generate_series(1, 500) g`, [c.userId]);

  // Alert rules: 500 here, 200 in each other organization; 2,000 deliveries of one rule, 5 of every other.
  await sys.exec(`INSERT INTO alert_rules (org_id, id, name, event_type) SELECT $1, app_uuidv7(), 'R' || g, 'task.created' FROM generate_series(1, 500) g`, [c.orgId]);
  await sys.exec(`INSERT INTO alert_rules (org_id, id, name, event_type) SELECT o.id, app_uuidv7(), 'R' || g, 'task.created' FROM ${others} o, generate_series(1, 200) g`);
  ruleId = (await sys.one<{ id: string }>(`SELECT id FROM alert_rules WHERE org_id = $1 ORDER BY id LIMIT 1`, [c.orgId]))!.id;
  await sys.exec(`INSERT INTO alert_deliveries (org_id, id, alert_rule_id, event_type, channel, event)
    SELECT r.org_id, app_uuidv7(), r.id, 'task.created', 'in_app', '{}' FROM alert_rules r, generate_series(1, 2000) g
    WHERE (r.org_id = $1 OR r.org_id IN ${others}) AND g <= CASE WHEN r.id = $2 THEN 2000 ELSE 5 END`, [c.orgId, ruleId]);

  // Saved views: 100 of the caller (the most a user may have), 100 of each colleague, 100 in each other organization.
  const view = `INSERT INTO saved_views (org_id, id, user_id, name, resource) SELECT`;
  await sys.exec(`${view} $1, app_uuidv7(), $2, 'V' || g, 'tasks' FROM generate_series(1, 100) g`, [c.orgId, c.userId]);
  await sys.exec(`${view} $1, app_uuidv7(), u.id, 'V' || g, 'tasks' FROM ${colleagues} u, generate_series(1, 100) g`, [c.orgId]);
  await sys.exec(`${view} o.id, app_uuidv7(), $1, 'V' || g, 'tasks' FROM ${others} o, generate_series(1, 100) g`, [c.userId]);

  for (const table of ['notifications', 'alert_rules', 'alert_deliveries', 'saved_views']) await sys.exec(`ANALYZE ${table}`);
}, 120_000);
afterAll(async () => { await t.close(); });

const explain = (text: string, params: unknown[]): Promise<Plans> => explainAsTenant(t, c.orgId, text, params);
const statementOf = (run: (sql: Sql) => Promise<unknown>): Promise<Statement> => statementIn(t, c.orgId, run);
/** The tenant statements a real request runs (for statements written inline in a service). */
const statementsOfRoute = (url: string): Promise<Statement[]> => statementsOf(t, c.auth, url);

describe('workspace list queries use indexes (EXPLAIN)', () => {
  it('the tables are big enough to matter', async () => {
    const n = await t.platform.db.sys.one<{ n: number; r: number; d: number; v: number }>(`SELECT (SELECT count(*)::int FROM notifications) AS n,
      (SELECT count(*)::int FROM alert_rules) AS r, (SELECT count(*)::int FROM alert_deliveries) AS d, (SELECT count(*)::int FROM saved_views) AS v`);
    expect(n!.n).toBeGreaterThanOrEqual(33_000);
    expect(n!.r).toBeGreaterThanOrEqual(8_500);
    expect(n!.d).toBeGreaterThanOrEqual(44_000);
    expect(n!.v).toBeGreaterThanOrEqual(9_100);
  });

  const filters: Array<[string, Omit<ListQueryInput, 'limit' | 'offset'>]> = [
    ['no filter', {}],
    ['is_read=false', { is_read: false }],
    ['is_read=true', { is_read: true }],
    ['is_archived=true', { is_archived: true }],
    ['is_archived=false', { is_archived: false }],
    ['notification_type', { notification_type: 'warning' }],
    ['channel', { channel: 'email' }],
    ['all filters', { is_read: false, is_archived: false, notification_type: 'info', channel: 'in_app' }],
  ];
  for (const [name, f] of filters) {
    it(`GET /v1/notifications with ${name}`, async () => {
      const q = await statementOf((sql) => notificationsRepo.list(sql, c.orgId, c.userId, { ...f, limit: 25, offset: 0 }));
      assertIndexed(await explain(q.text, q.params), 'notifications');
    });
  }

  it('GET /v1/alert-rules', async () => {
    const q = await statementOf((sql) => alertRulesRepo.list(sql, c.orgId, { limit: 50, offset: 0 }));
    assertIndexed(await explain(q.text, q.params), 'alert_rules');
  });

  it('GET /v1/alert-rules/{id}/deliveries', async () => {
    const q = await statementOf((sql) => alertRulesRepo.deliveries(sql, c.orgId, ruleId, { limit: 50, offset: 0 }));
    assertIndexed(await explain(q.text, q.params), 'alert_deliveries');
  });

  it('GET /v1/settings/views', async () => {
    const ran = await statementsOfRoute('/v1/settings/views?limit=100');
    const list = ran.filter((s) => /FROM saved_views/.test(s.text) && /LIMIT/.test(s.text));
    expect(list).toHaveLength(1);
    assertIndexed(await explain(list[0].text, list[0].params), 'saved_views');
  });

  it('the real routes answer with the seeded rows', async () => {
    const n = await t.app.inject({ method: 'GET', url: '/v1/notifications?limit=10', headers: c.auth });
    expect(n.json().pagination.total).toBe(3000);
    const r = await t.app.inject({ method: 'GET', url: '/v1/alert-rules?limit=10', headers: c.auth });
    expect(r.json().pagination.total).toBe(500);
    const d = await t.app.inject({ method: 'GET', url: `/v1/alert-rules/${ruleId}/deliveries?limit=10`, headers: c.auth });
    expect(d.json().pagination.total).toBe(2000);
    const v = await t.app.inject({ method: 'GET', url: '/v1/settings/views?limit=10', headers: c.auth });
    expect(v.json().pagination.total).toBe(100);
  });
});
