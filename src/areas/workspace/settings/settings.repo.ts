import type { Sql } from '../../../core/db/database.js';

export type UserSettingsKind = 'personalization' | 'preferences';
export interface DocRow { value: Record<string, unknown>; updated_at: string }

export const settingsRepo = {
  orgSettings: (sql: Sql, orgId: string) =>
    sql.one<{ settings: Record<string, unknown>; updated_at: string; session_duration_days: number }>(
      `SELECT settings, updated_at, session_duration_days FROM organizations WHERE id = $1 AND deleted_at IS NULL`, [orgId]),
  /** Row-locks the organization so concurrent merges do not lose each other's keys. */
  orgSettingsForUpdate: (sql: Sql, orgId: string) =>
    sql.one<{ settings: Record<string, unknown> }>(`SELECT settings FROM organizations WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, [orgId]),
  writeOrgSettings: (sql: Sql, orgId: string, settings: Record<string, unknown>) =>
    sql.one<{ settings: Record<string, unknown>; updated_at: string }>(
      `UPDATE organizations SET settings = $2, updated_at = now() WHERE id = $1 RETURNING settings, updated_at`, [orgId, settings]),

  userDoc: (sql: Sql, orgId: string, userId: string, kind: UserSettingsKind) =>
    sql.one<DocRow>(`SELECT value, updated_at FROM user_settings WHERE org_id = $1 AND user_id = $2 AND kind = $3`, [orgId, userId, kind]),
  userDocs: (sql: Sql, orgId: string, userId: string) =>
    sql.query<DocRow & { kind: UserSettingsKind }>(`SELECT kind, value, updated_at FROM user_settings WHERE org_id = $1 AND user_id = $2`, [orgId, userId]),
  /**
   * Row-locks the document so concurrent merges do not lose each other's keys. A missing row is created first (an
   * empty document, gone again if the transaction rolls back): FOR UPDATE alone locks nothing before the first
   * save, so two first PUTs each merged into {} and only the last one's keys were kept. A concurrent insert waits
   * on the first one's key, and the SELECT that follows (a new snapshot) sees its committed row.
   */
  userDocForUpdate: async (sql: Sql, orgId: string, userId: string, kind: UserSettingsKind) => {
    await sql.exec(`INSERT INTO user_settings (org_id, user_id, kind) VALUES ($1, $2, $3) ON CONFLICT (org_id, user_id, kind) DO NOTHING`, [orgId, userId, kind]);
    return sql.one<DocRow>(`SELECT value, updated_at FROM user_settings WHERE org_id = $1 AND user_id = $2 AND kind = $3 FOR UPDATE`, [orgId, userId, kind]);
  },
  writeUserDoc: (sql: Sql, orgId: string, userId: string, kind: UserSettingsKind, value: Record<string, unknown>) =>
    sql.one<DocRow>(`INSERT INTO user_settings (org_id, user_id, kind, value) VALUES ($1, $2, $3, $4)
      ON CONFLICT (org_id, user_id, kind) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
      RETURNING value, updated_at`, [orgId, userId, kind, value]) as Promise<DocRow>,
};

const VIEW_COLS = 'id, name, resource, filters, sort, columns, is_default, created_at, updated_at';
export interface ViewRow { id: string; name: string; resource: string; filters: Record<string, unknown>; sort: Record<string, unknown> | null; columns: string[] | null; is_default: boolean; created_at: string; updated_at: string }
export interface NewView { id: string; userId: string; name: string; resource: string; filters: object; sort: object | null; columns: string[] | null; isDefault: boolean }

export const viewsRepo = {
  /** One page of the user's saved views, oldest first, each row carrying the user's total (none on a page past the end). */
  page: (sql: Sql, orgId: string, userId: string, page: { limit: number; offset: number }) =>
    sql.query<ViewRow & { total: number }>(`SELECT ${VIEW_COLS}, count(*) OVER ()::int AS total FROM saved_views
      WHERE org_id = $1 AND user_id = $2 ORDER BY id LIMIT $3 OFFSET $4`, [orgId, userId, page.limit, page.offset]),
  /** How many saved views the user has in the organization. */
  count: async (sql: Sql, orgId: string, userId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM saved_views WHERE org_id = $1 AND user_id = $2`, [orgId, userId]))!.n,
  /** Unmarks the user's default view of a resource; rows changed (0 when there was none). */
  clearDefault: (sql: Sql, orgId: string, userId: string, resource: string) =>
    sql.exec(`UPDATE saved_views SET is_default = false, updated_at = now() WHERE org_id = $1 AND user_id = $2 AND resource = $3 AND is_default`, [orgId, userId, resource]),
  /** The view inserted. */
  insert: (sql: Sql, orgId: string, v: NewView) =>
    sql.one<ViewRow>(`INSERT INTO saved_views (org_id, id, user_id, name, resource, filters, sort, columns, is_default)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${VIEW_COLS}`,
    [orgId, v.id, v.userId, v.name, v.resource, v.filters, v.sort, v.columns, v.isDefault]) as Promise<ViewRow>,
  /** Rows deleted: 0 when the user has no such view. */
  remove: (sql: Sql, orgId: string, userId: string, id: string) =>
    sql.exec(`DELETE FROM saved_views WHERE org_id = $1 AND id = $2 AND user_id = $3`, [orgId, id, userId]),
};

export const accountRepo = {
  /** The user's own row (shared table), undefined when there is none. */
  user: (sql: Sql, userId: string) =>
    sql.one<{ id: string; email: string; name: string; created_at: string }>(
      `SELECT id, email, name, created_at FROM users WHERE id = $1`, [userId]),
  /** Whether the user has MFA on; `sql` must be the owner connection (the tenant role cannot read mfa_enabled). */
  mfaEnabled: (sql: Sql, userId: string) =>
    sql.one<{ mfa_enabled: boolean }>(`SELECT mfa_enabled FROM users WHERE id = $1`, [userId]),
  /** The user's live sessions and API keys in the organization, counted in one statement. */
  liveCredentialCounts: async (sql: Sql, orgId: string, userId: string) =>
    (await sql.one<{ sessions: number; keys: number }>(`SELECT
        (SELECT count(*)::int FROM sessions WHERE org_id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > now()) AS sessions,
        (SELECT count(*)::int FROM api_keys WHERE org_id = $1 AND created_by_user_id = $2 AND revoked_at IS NULL AND expires_at > now()) AS keys`,
    [orgId, userId]))!,
  /** A session's MFA time and lifetime, undefined when there is none. */
  session: (sql: Sql, orgId: string, sessionId: string) =>
    sql.one<{ id: string; mfa_at: string | null; created_at: string; expires_at: string }>(
      `SELECT id, mfa_at, created_at, expires_at FROM sessions WHERE org_id = $1 AND id = $2`, [orgId, sessionId]),
};
