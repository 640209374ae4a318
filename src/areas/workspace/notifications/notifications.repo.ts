import type { Sql } from '../../../core/db/database.js';
import { uuidv7 } from '../../../core/ids.js';
import type { Channel, ListQueryInput, NotificationType, NotificationView } from './notifications.schemas.js';

export const NOTIFICATION_COLS = `id, notification_type, title, body, channel, is_read, is_archived, action_url, event_type,
  target_type, target_id, alert_rule_id, created_at, updated_at`;

export interface NewNotification {
  userId: string; type?: NotificationType; title: string; body?: string | null; channel?: Channel; actionUrl?: string | null;
  eventType?: string | null; targetType?: string | null; targetId?: string | null; alertRuleId?: string | null;
}

/** A task past its due date, newly noticed by claimOverdue. */
export interface DueRow { org_id: string; id: string; project_id: string; title: string; assigned_to: string | null; due_date: string }

// The scan's two statements (every task, or one) are built once: the text is the prepared statement's key.
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
const OVERDUE_ANY = overdueSql('');
const OVERDUE_ONE = overdueSql('AND t.org_id = $2 AND t.id = $3');

/**
 * Overdue tasks (past due, status not done, project active) not yet noticed at their current due date, up to `limit`
 * (of every organization, or the one task given; `sql` is the owner connection): each is recorded in
 * task_overdue_notices in the same statement, so it is returned once per due date.
 */
const claimOverdue = (sql: Sql, q: { limit: number; orgId?: string; taskId?: string }): Promise<DueRow[]> =>
  q.taskId ? sql.query<DueRow>(OVERDUE_ONE, [q.limit, q.orgId, q.taskId]) : sql.query<DueRow>(OVERDUE_ANY, [q.limit]);

export const notificationsRepo = {
  claimOverdue,
  insert: (sql: Sql, orgId: string, n: NewNotification) =>
    sql.one<NotificationView>(`INSERT INTO notifications (org_id, id, user_id, notification_type, title, body, channel, action_url, event_type, target_type, target_id, alert_rule_id)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${NOTIFICATION_COLS}`,
      [orgId, uuidv7(), n.userId, n.type ?? 'info', n.title.slice(0, 500), n.body?.slice(0, 4000) ?? null, n.channel ?? 'in_app',
        n.actionUrl ?? null, n.eventType ?? null, n.targetType ?? null, n.targetId ?? null, n.alertRuleId ?? null]) as Promise<NotificationView>,

  /** One page plus the filtered total and the unread count, in one round trip. */
  list: (sql: Sql, orgId: string, userId: string, q: ListQueryInput) =>
    sql.query<NotificationView & { total: number; unread: number }>(`WITH f AS (
        SELECT * FROM notifications WHERE org_id = $1 AND user_id = $2
          AND ($3::boolean IS NULL OR is_read = $3) AND ($4::boolean IS NULL OR is_archived = $4)
          AND ($5::text IS NULL OR notification_type = $5) AND ($6::text IS NULL OR channel = $6))
      SELECT ${NOTIFICATION_COLS}, t.total, u.unread FROM
        (SELECT count(*)::int AS total FROM f) t
        CROSS JOIN (SELECT count(*)::int AS unread FROM notifications WHERE org_id = $1 AND user_id = $2 AND NOT is_read AND NOT is_archived) u
        LEFT JOIN LATERAL (SELECT * FROM f ORDER BY id DESC LIMIT $7 OFFSET $8) page ON true
      ORDER BY page.id DESC`,
      [orgId, userId, q.is_read ?? null, q.is_archived ?? null, q.notification_type ?? null, q.channel ?? null, q.limit, q.offset]),

  update: (sql: Sql, orgId: string, userId: string, id: string, patch: { is_read?: boolean; is_archived?: boolean }) =>
    sql.one<NotificationView>(`UPDATE notifications SET is_read = COALESCE($4, is_read), is_archived = COALESCE($5, is_archived), updated_at = now()
      WHERE org_id = $1 AND user_id = $2 AND id = $3 RETURNING ${NOTIFICATION_COLS}`,
      [orgId, userId, id, patch.is_read ?? null, patch.is_archived ?? null]),

  remove: (sql: Sql, orgId: string, userId: string, id: string) =>
    sql.exec(`DELETE FROM notifications WHERE org_id = $1 AND user_id = $2 AND id = $3`, [orgId, userId, id]),

  /** Those of the users who are members of the organization. */
  membersAmong: async (sql: Sql, orgId: string, userIds: string[]) =>
    (await sql.query<{ user_id: string }>(`SELECT user_id FROM memberships WHERE org_id = $1 AND user_id = ANY($2::uuid[])`, [orgId, userIds])).map((r) => r.user_id),
  /** Those of the users who turned the notification preference `pref` off in their personalization. */
  optedOutAmong: async (sql: Sql, orgId: string, userIds: string[], pref: string) =>
    (await sql.query<{ user_id: string }>(`SELECT user_id FROM user_settings WHERE org_id = $1 AND kind = 'personalization'
      AND user_id = ANY($2::uuid[]) AND (value -> 'notifications' ->> $3) = 'false'`, [orgId, userIds, pref])).map((r) => r.user_id),
};
