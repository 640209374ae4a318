import type { Sql } from '../../../core/db/database.js';

export interface RuleRow {
  id: string; org_id: string; name: string; description: string | null; event_type: string; conditions: Record<string, unknown>;
  channels: string[]; slack_webhook_url_sealed: string | null; is_enabled: boolean; created_by: string | null; created_at: string; updated_at: string;
}
export const RULE_COLS = 'id, org_id, name, description, event_type, conditions, channels, slack_webhook_url_sealed, is_enabled, created_by, created_at, updated_at';
export const DELIVERY_COLS = 'id, alert_rule_id, event_type, channel, status, attempts, last_error, target_type, target_id, delivered_at, created_at, updated_at';

export const ruleView = ({ slack_webhook_url_sealed, ...r }: RuleRow) => ({ ...r, trigger_type: r.event_type, slack_webhook_configured: !!slack_webhook_url_sealed });

export const alertRulesRepo = {
  insert: (sql: Sql, r: Omit<RuleRow, 'created_at' | 'updated_at'>) =>
    sql.one<RuleRow>(`INSERT INTO alert_rules (org_id, id, name, description, event_type, conditions, channels, slack_webhook_url_sealed, is_enabled, created_by)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${RULE_COLS}`,
      [r.org_id, r.id, r.name, r.description, r.event_type, r.conditions, r.channels, r.slack_webhook_url_sealed, r.is_enabled, r.created_by]) as Promise<RuleRow>,
  list: (sql: Sql, orgId: string, page: { limit: number; offset: number }) =>
    sql.query<RuleRow & { total: number }>(`SELECT ${RULE_COLS}, count(*) OVER ()::int AS total FROM alert_rules WHERE org_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`,
      [orgId, page.limit, page.offset]),
  count: async (sql: Sql, orgId: string) => (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM alert_rules WHERE org_id = $1`, [orgId]))!.n,
  byId: (sql: Sql, orgId: string, id: string) => sql.one<RuleRow>(`SELECT ${RULE_COLS} FROM alert_rules WHERE org_id = $1 AND id = $2`, [orgId, id]),
  enabledEventTypes: async (sql: Sql, orgId: string) =>
    (await sql.query<{ event_type: string }>(`SELECT DISTINCT event_type FROM alert_rules WHERE org_id = $1 AND is_enabled`, [orgId])).map((r) => r.event_type),

  /**
   * The enabled rules for an event type (read as event-types.ts matchableEventType reads names: `task_overdue` and
   * `task-overdue` name `task.overdue`) or for every type (`*`), whose creator is still a member of the organization:
   * a rule sends its creator (and the creator's e-mail and Slack webhook) the organization's events, which a removed
   * member must no longer receive.
   */
  enabledFor: (sql: Sql, orgId: string, eventType: string) =>
    sql.query<RuleRow>(`SELECT ${RULE_COLS} FROM alert_rules r WHERE r.org_id = $1 AND r.is_enabled
      AND (r.event_type IN ($2, '*') OR lower(translate(r.event_type, '_:-', '...')) = lower(translate($2, '_:-', '...')))
      AND EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = r.org_id AND m.user_id = r.created_by) ORDER BY r.id`, [orgId, eventType]),

  deliveries: (sql: Sql, orgId: string, ruleId: string, page: { limit: number; offset: number }) =>
    sql.query<Record<string, unknown> & { total: number }>(`SELECT ${DELIVERY_COLS}, count(*) OVER ()::int AS total FROM alert_deliveries
      WHERE org_id = $1 AND alert_rule_id = $2 ORDER BY id DESC LIMIT $3 OFFSET $4`, [orgId, ruleId, page.limit, page.offset]),
  countDeliveries: async (sql: Sql, orgId: string, ruleId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM alert_deliveries WHERE org_id = $1 AND alert_rule_id = $2`, [orgId, ruleId]))!.n,
  insertDelivery: (sql: Sql, d: { orgId: string; id: string; ruleId: string; eventType: string; targetType: string | null; targetId: string | null; channel: string; event: unknown; failedWith?: string }) =>
    sql.exec(`INSERT INTO alert_deliveries (org_id, id, alert_rule_id, event_type, target_type, target_id, channel, event, status, last_error)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [d.orgId, d.id, d.ruleId, d.eventType, d.targetType, d.targetId, d.channel, d.event, d.failedWith ? 'failed' : 'pending', d.failedWith ?? null]),
  delivery: (sql: Sql, orgId: string, id: string) =>
    sql.one<{ id: string; alert_rule_id: string; channel: string; status: string; event: Record<string, unknown> }>(
      `SELECT id, alert_rule_id, channel, status, event FROM alert_deliveries WHERE org_id = $1 AND id = $2`, [orgId, id]),
  /**
   * The e-mail address of a user (a rule's creator) and whether their account is active; undefined when there is none.
   * Only the columns the application role may read on a tenant connection (accountsRepo.userById reads them all).
   */
  userContact: (sql: Sql, userId: string) =>
    sql.one<{ email: string; is_active: boolean }>(`SELECT email, is_active FROM users WHERE id = $1`, [userId]),
  /** Records one attempt and moves the delivery to its new status, in one statement. */
  recordAttempt: (sql: Sql, orgId: string, id: string, attempt: number, outcome: 'delivered' | 'failed', status: string, error: string | null) =>
    sql.exec(`WITH a AS (INSERT INTO alert_delivery_attempts (org_id, delivery_id, attempt, outcome, error) VALUES ($1, $2, $3, $4, $6)
        ON CONFLICT (org_id, delivery_id, attempt) DO UPDATE SET outcome = EXCLUDED.outcome, error = EXCLUDED.error, at = now())
      UPDATE alert_deliveries SET status = $5, attempts = GREATEST(attempts, $3), last_error = $6,
        delivered_at = CASE WHEN $5 = 'delivered' THEN now() ELSE delivered_at END, updated_at = now()
      WHERE org_id = $1 AND id = $2`, [orgId, id, attempt, outcome, status, error]),
};
