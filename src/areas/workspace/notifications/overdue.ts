import type { Platform } from '../../../core/context.js';
import type { PlatformEvent } from '../../../core/events.js';
import { notificationsRepo, type DueRow } from './notifications.repo.js';

export const OVERDUE_SCAN_MS = 60_000;

/**
 * Finds tasks past their due date whose status is not done (in active projects), remembers each
 * (task, due date) in task_overdue_notices and publishes `task.overdue` once for it, to the assignee.
 * Moving the due date and missing it again announces the task again. Runs across organizations as the
 * owner role, on one node at a time (platform.jobs.every). Returns the number of events published.
 */
export async function scanOverdueTasks(platform: Platform, limit = 500): Promise<number> {
  return announce(platform, await notificationsRepo.claimOverdue(platform.db.sys, { limit }));
}

/**
 * The scan for one task, right after a write that may have made it overdue (created or moved with a due date
 * already past, reopened): its notice need not wait for the next periodic scan. Same rules and records, so the
 * periodic scan never announces it a second time.
 */
export async function scanOverdueTask(platform: Platform, orgId: string, taskId: string): Promise<number> {
  return announce(platform, await notificationsRepo.claimOverdue(platform.db.sys, { limit: 1, orgId, taskId }));
}

function announce(platform: Platform, rows: DueRow[]): number {
  const at = new Date().toISOString();
  for (const r of rows) {
    platform.events.publish({
      type: 'task.overdue', orgId: r.org_id, actorUserId: null, targetType: 'task', targetId: r.id,
      recipients: r.assigned_to ? [r.assigned_to] : [],
      data: { task_id: r.id, project_id: r.project_id, title: r.title, due_date: r.due_date, assigned_to: r.assigned_to }, at,
    });
  }
  return rows.length;
}

/**
 * Called for every bus event: a task created with a due date already past, or whose due date or status changed,
 * is checked at once (scanOverdueTask), so its notice comes within moments rather than at the next periodic scan.
 */
export async function checkOverdueAfter(platform: Platform, e: PlatformEvent): Promise<void> {
  const d = e.data as { due_date?: unknown; fields?: unknown };
  const mayBeOverdue = e.type === 'task.created'
    ? typeof d.due_date === 'string' && Date.parse(d.due_date) <= Date.now()
    : e.type === 'task.updated' && Array.isArray(d.fields) && (d.fields.includes('due_date') || d.fields.includes('status'));
  if (mayBeOverdue) await scanOverdueTask(platform, e.orgId, e.targetId);
}
