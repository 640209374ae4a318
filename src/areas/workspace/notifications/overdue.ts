import type { Platform } from '../../../core/context.js';
import type { PlatformEvent } from '../../../core/events.js';

export const OVERDUE_SCAN_MS = 60_000;

interface DueRow { org_id: string; id: string; project_id: string; title: string; assigned_to: string | null; due_date: string }

/**
 * Finds tasks past their due date whose status is not done (in active projects), remembers each
 * (task, due date) in task_overdue_notices and publishes `task.overdue` once for it, to the assignee.
 * Moving the due date and missing it again announces the task again. Runs across organizations as the
 * owner role, on one node at a time (platform.jobs.every). Returns the number of events published.
 */
export async function scanOverdueTasks(platform: Platform, limit = 500): Promise<number> {
  return announce(platform, await platform.db.sys.query<DueRow>(overdueSql(''), [limit]));
}

/**
 * The scan for one task, right after a write that may have made it overdue (created or moved with a due date
 * already past, reopened): its notice need not wait for the next periodic scan. Same rules and records, so the
 * periodic scan never announces it a second time.
 */
export async function scanOverdueTask(platform: Platform, orgId: string, taskId: string): Promise<number> {
  return announce(platform, await platform.db.sys.query<DueRow>(overdueSql('AND t.org_id = $2 AND t.id = $3'), [1, orgId, taskId]));
}

const overdueSql = (only: string) => `WITH due AS (
      SELECT t.org_id, t.id, t.project_id, t.title, t.assigned_to, t.due_date FROM tasks t
        JOIN task_statuses s ON s.org_id = t.org_id AND s.id = t.status_id
        JOIN projects p ON p.org_id = t.org_id AND p.id = t.project_id
      WHERE t.due_date IS NOT NULL AND t.due_date < now() AND NOT s.is_done AND p.is_active ${only}
        AND NOT EXISTS (SELECT 1 FROM task_overdue_notices n WHERE n.org_id = t.org_id AND n.task_id = t.id AND n.due_date = t.due_date)
      ORDER BY t.due_date LIMIT $1),
    ins AS (INSERT INTO task_overdue_notices (org_id, task_id, due_date, assigned_to)
      SELECT org_id, id, due_date, assigned_to FROM due ON CONFLICT DO NOTHING RETURNING org_id, task_id)
    SELECT due.* FROM due JOIN ins ON ins.org_id = due.org_id AND ins.task_id = due.id`;

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
