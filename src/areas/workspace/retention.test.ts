import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { createProject, createTask } from './test-support.js';
import { purgeWorkspace } from './retention.js';

let t: TestApp;
let a: Tenant;
beforeAll(async () => { t = await buildTestApp(); a = await newTenant(t.app); });
afterAll(async () => { await t?.close(); });

describe('retention of notifications, alert deliveries and overdue notices', () => {
  it('deletes read notifications over 90 days old and any over 365 days old', async () => {
    const sys = t.platform.db.sys;
    const rows: Array<[title: string, read: boolean, daysAgo: number]> = [
      ['read-91', true, 91], ['read-89', true, 89], ['unread-91', false, 91], ['unread-366', false, 366], ['unread-364', false, 364],
    ];
    for (const [title, read, daysAgo] of rows) {
      await sys.exec(`INSERT INTO notifications (org_id, id, user_id, title, is_read, created_at) VALUES ($1, app_uuidv7(), $2, $3, $4, now() - make_interval(days => $5))`,
        [a.orgId, a.userId, title, read, daysAgo]);
    }
    await purgeWorkspace(sys);
    const left = await sys.query<{ title: string }>(`SELECT title FROM notifications WHERE org_id = $1 ORDER BY title`, [a.orgId]);
    expect(left.map((r) => r.title)).toEqual(['read-89', 'unread-364', 'unread-91']);
  });

  it('deletes delivered and failed alert deliveries (and their attempts) over 90 days old; pending and retrying ones stay', async () => {
    const sys = t.platform.db.sys;
    const rule = (await sys.one<{ id: string }>(`INSERT INTO alert_rules (org_id, id, name, event_type) VALUES ($1, app_uuidv7(), 'retention', 'task.created') RETURNING id`, [a.orgId]))!.id;
    const rows: Array<[target: string, status: string, daysAgo: number]> = [
      ['delivered-91', 'delivered', 91], ['failed-91', 'failed', 91], ['delivered-89', 'delivered', 89], ['pending-91', 'pending', 91], ['retrying-91', 'retrying', 91],
    ];
    for (const [target, status, daysAgo] of rows) {
      const id = (await sys.one<{ id: string }>(`INSERT INTO alert_deliveries (org_id, id, alert_rule_id, event_type, target_id, channel, status, event, updated_at)
        VALUES ($1, app_uuidv7(), $2, 'task.created', $3, 'in_app', $4, '{}', now() - make_interval(days => $5)) RETURNING id`, [a.orgId, rule, target, status, daysAgo]))!.id;
      await sys.exec(`INSERT INTO alert_delivery_attempts (org_id, delivery_id, attempt, outcome) VALUES ($1, $2, 1, 'failed')`, [a.orgId, id]);
    }
    await purgeWorkspace(sys);
    const left = await sys.query<{ target_id: string; attempts: number }>(`SELECT d.target_id, (SELECT count(*)::int FROM alert_delivery_attempts x
      WHERE x.org_id = d.org_id AND x.delivery_id = d.id) AS attempts FROM alert_deliveries d WHERE d.org_id = $1 ORDER BY d.target_id`, [a.orgId]);
    expect(left).toEqual([{ target_id: 'delivered-89', attempts: 1 }, { target_id: 'pending-91', attempts: 1 }, { target_id: 'retrying-91', attempts: 1 }]);
    expect(await sys.query(`SELECT 1 FROM alert_delivery_attempts WHERE org_id = $1`, [a.orgId])).toHaveLength(3);
  });

  it('deletes overdue notices whose task was deleted or whose due date moved; the notice of a task still due then stays', async () => {
    const sys = t.platform.db.sys;
    const projectId = (await createProject(t.app, a)).id;
    const due = '2020-01-01T00:00:00.000Z';
    const task = (title: string) => createTask(t.app, a, projectId, { title, due_date: due });
    const [kept, moved, deleted, recent] = [await task('kept'), await task('moved'), await task('deleted'), await task('recent')];
    for (const id of [kept, moved, deleted, recent]) {
      await sys.exec(`INSERT INTO task_overdue_notices (org_id, task_id, due_date, notified_at) VALUES ($1, $2, $3, now() - interval '2 days')
        ON CONFLICT (org_id, task_id, due_date) DO UPDATE SET notified_at = excluded.notified_at`, [a.orgId, id, due]);
    }
    await sys.exec(`UPDATE tasks SET due_date = '2020-02-01' WHERE org_id = $1 AND id = ANY($2::uuid[])`, [a.orgId, [moved, recent]]);
    await sys.exec(`DELETE FROM tasks WHERE org_id = $1 AND id = $2`, [a.orgId, deleted]);
    await sys.exec(`UPDATE task_overdue_notices SET notified_at = now() WHERE org_id = $1 AND task_id = $2`, [a.orgId, recent]); // under a day: kept
    await purgeWorkspace(sys);
    const left = await sys.query<{ task_id: string }>(`SELECT task_id FROM task_overdue_notices WHERE org_id = $1`, [a.orgId]);
    expect(left.map((r) => r.task_id).sort()).toEqual([kept, recent].sort());
  });
});
