import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../test/helpers.js';
import { purgeFinishedJobs } from './jobs-retention.js';

let t: TestApp;
let a: Tenant;
beforeAll(async () => { t = await buildTestApp(); a = await newTenant(t.app); });
afterAll(async () => { await t?.close(); });

describe('retention of jobs', () => {
  it('deletes done and superseded jobs finished over 7 days ago and failed ones over 30 days ago; pending and running stay', async () => {
    const jobs: Array<[name: string, status: string, daysAgo: number]> = [
      ['done-8', 'done', 8], ['done-6', 'done', 6], ['superseded-8', 'superseded', 8], ['failed-31', 'failed', 31],
      ['failed-29', 'failed', 29], ['pending-100', 'pending', 100], ['running-100', 'running', 100],
    ];
    for (const [name, status, daysAgo] of jobs) {
      await t.platform.db.sys.exec(`INSERT INTO jobs (org_id, id, kind, status, run_at, updated_at, dedupe_key)
        VALUES ($1, app_uuidv7(), 'retention.test', $2, now() + interval '1 day', now() - make_interval(days => $3), $4)`, [a.orgId, status, daysAgo, name]);
    }
    await purgeFinishedJobs(t.platform.db.sys);
    const left = await t.platform.db.sys.query<{ dedupe_key: string }>(`SELECT dedupe_key FROM jobs WHERE org_id = $1 AND kind = 'retention.test' ORDER BY dedupe_key`, [a.orgId]);
    expect(left.map((r) => r.dedupe_key)).toEqual(['done-6', 'failed-29', 'pending-100', 'running-100']);
  });
});
