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
