import type { Sql } from '../../core/db/database.js';
import { purge } from '../../core/retention.js';

/** Days a read notification is kept, and any notification, read or not. */
export const READ_NOTIFICATION_DAYS = 90;
export const NOTIFICATION_DAYS = 365;
/** Days a delivered or failed alert delivery (with its attempts) is kept: its recent history shows failures. */
export const FINISHED_DELIVERY_DAYS = 90;

/**
 * Deletes old notifications and finished alert deliveries, and the overdue notices that no longer stand for a task's
 * due date (the task was deleted, or its due date moved: such a notice could never stop a second notice again).
 * Returns how many rows.
 */
export async function purgeWorkspace(sys: Sql): Promise<number> {
  let total = 0;
  total += await purge(sys, 'notifications', `created_at < now() - make_interval(days => $2)
    AND (is_read OR created_at < now() - make_interval(days => $3))`, [READ_NOTIFICATION_DAYS, NOTIFICATION_DAYS]);
  total += await purge(sys, 'alert_deliveries', `status IN ('delivered', 'failed') AND updated_at < now() - make_interval(days => $2)`, [FINISHED_DELIVERY_DAYS]);
  total += await purge(sys, 'task_overdue_notices', `notified_at < now() - interval '1 day' AND NOT EXISTS (SELECT 1 FROM tasks t
    WHERE t.org_id = task_overdue_notices.org_id AND t.id = task_overdue_notices.task_id AND t.due_date = task_overdue_notices.due_date)`);
  return total;
}
