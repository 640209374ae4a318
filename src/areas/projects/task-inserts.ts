import type { Database } from '../../core/db/database.js';
import { OrgBatcher } from '../../core/db/org-batcher.js';
import { tasksRepo, type BatchedTask } from './tasks.repo.js';

/**
 * Batches of one organization's simple task creations in the database at once. Two keep both of PostgreSQL's cores
 * of a small machine busy while the next batch gathers; more would only make each batch smaller.
 */
const MAX_IN_FLIGHT = 2;
/** A batch's size bound: its JSON parameter stays small (~1 KB per task), its statement short. */
const MAX_BATCH = 64;

const byDb = new WeakMap<Database, OrgBatcher<BatchedTask, boolean>>();

/**
 * Simple task creations whose starting status is known (tasks.service.ts), written together when several of one
 * organization arrive at once: one statement, one commit for all (docs/decisions.md, "Task creations are batched").
 * Answers whether the task was written (false: no such project, or archived).
 */
export function taskInserts(db: Database): OrgBatcher<BatchedTask, boolean> {
  let b = byDb.get(db);
  if (!b) {
    b = new OrgBatcher<BatchedTask, boolean>(db, (sql, orgId, tasks) => tasksRepo.insertWithStatusBatch(sql, orgId, tasks), { maxInFlight: MAX_IN_FLIGHT, maxBatch: MAX_BATCH });
    byDb.set(db, b);
  }
  return b;
}
