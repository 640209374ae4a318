import type { Database } from '../../core/db/database.js';
import { NotifiedOrgCache } from '../../core/db/notified-cache.js';

/** Announced by migration 0056's trigger on every change to task_statuses: the organization id, or `*`. */
export const TASK_STATUSES_CHANNEL = 'task_statuses_changed';

/** A project's first open status, or null when it has none. */
export type StartStatus = { id: string; key: string } | null;

const byDb = new WeakMap<Database, NotifiedOrgCache<StartStatus>>();

/**
 * The status each project's new tasks start in, per organization and project, kept in memory until a change to the
 * organization's statuses is announced (by any process): creating a task then needs no status lookup. The
 * platform's one instance per database (one LISTEN subscription).
 */
export function firstOpenStatuses(db: Database): NotifiedOrgCache<StartStatus> {
  let c = byDb.get(db);
  if (!c) { c = new NotifiedOrgCache<StartStatus>(db, TASK_STATUSES_CHANNEL); byDb.set(db, c); }
  return c;
}
