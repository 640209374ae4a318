import type { Sql } from '../../../core/db/database.js';
import { uuidv7 } from '../../../core/ids.js';
import type { Channel, ListQueryInput, NotificationType, NotificationView } from './notifications.schemas.js';

export const NOTIFICATION_COLS = `id, notification_type, title, body, channel, is_read, is_archived, action_url, event_type,
  target_type, target_id, alert_rule_id, created_at, updated_at`;

export interface NewNotification {
  userId: string; type?: NotificationType; title: string; body?: string | null; channel?: Channel; actionUrl?: string | null;
  eventType?: string | null; targetType?: string | null; targetId?: string | null; alertRuleId?: string | null;
}

export const notificationsRepo = {
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
