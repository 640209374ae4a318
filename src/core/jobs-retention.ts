import type { Sql } from './db/database.js';
import { purge } from './retention.js';

/** Days a finished job is kept: done or superseded ones a week, failed ones (kept to be looked into) a month. */
export const DONE_JOB_DAYS = 7;
export const FAILED_JOB_DAYS = 30;

/** Deletes the jobs that finished longer ago than above; returns how many. */
export async function purgeFinishedJobs(sys: Sql): Promise<number> {
  return await purge(sys, 'jobs', `status IN ('done', 'superseded') AND updated_at < now() - make_interval(days => $2)`, [DONE_JOB_DAYS])
    + await purge(sys, 'jobs', `status = 'failed' AND updated_at < now() - make_interval(days => $2)`, [FAILED_JOB_DAYS]);
}
