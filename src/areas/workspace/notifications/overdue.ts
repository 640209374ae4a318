import type { Platform } from '../../../core/context.js';

export const OVERDUE_SCAN_MS = 60_000;

interface DueRow { org_id: string; id: string; project_id: string; title: string; assigned_to: string | null; due_date: string }

/**
 * Finds tasks past their due date whose status is not done (in active projects), remembers each
 * (task, due date) in task_overdue_notices and publishes `task.overdue` once for it, to the assignee.
 * Moving the due date and missing it again announces the task again. Runs across organizations as the
 * owner role, on one node at a time (platform.jobs.every). Returns the number of events published.
 */
export async function scanOverdueTasks(platform: Platform, limit = 500): Promise<number> {
  const rows = await platform.db.sys.query<DueRow>(`WITH due AS (
      SELECT t.org_id, t.id, t.project_id, t.title, t.assigned_to, t.due_date FROM tasks t
        JOIN task_statuses s ON s.org_id = t.org_id AND s.id = t.status_id
        JOIN projects p ON p.org_id = t.org_id AND p.id = t.project_id
      WHERE t.due_date IS NOT NULL AND t.due_date < now() AND NOT s.is_done AND p.is_active
        AND NOT EXISTS (SELECT 1 FROM task_overdue_notices n WHERE n.org_id = t.org_id AND n.task_id = t.id AND n.due_date = t.due_date)
      ORDER BY t.due_date LIMIT $1),
    ins AS (INSERT INTO task_overdue_notices (org_id, task_id, due_date, assigned_to)
      SELECT org_id, id, due_date, assigned_to FROM due ON CONFLICT DO NOTHING RETURNING org_id, task_id)
    SELECT due.* FROM due JOIN ins ON ins.org_id = due.org_id AND ins.task_id = due.id`, [limit]);
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
