import type { Sql } from '../../core/db/database.js';
import { lockNamed } from '../../core/db/locks.js';

export interface OrgRow {
  id: string; name: string; slug: string; plan_tier: string; subscription_status: string; features: string[];
  settings: Record<string, unknown>; session_duration_days: number; is_root: boolean; deleted_at: string | null;
  created_at: string; updated_at: string; role?: string;
}
export interface UserRow {
  id: string; email: string; name: string; password_hash: string | null; mfa_totp_secret_sealed: string | null;
  mfa_enabled: boolean; mfa_totp_login_step: number | null; mfa_totp_step_up_step: number | null; token_version: number; is_active: boolean;
}

const ORG_COLS = `o.id, o.name, o.slug, o.plan_tier, o.subscription_status, o.features, o.settings, o.session_duration_days, o.is_root, o.deleted_at, o.created_at, o.updated_at`;

export const orgView = (o: OrgRow) => ({
  id: o.id, name: o.name, slug: o.slug, plan_tier: o.plan_tier, subscription_status: o.subscription_status,
  features: o.features, settings: o.settings, session_duration_days: o.session_duration_days, is_root: o.is_root,
  created_at: o.created_at, updated_at: o.updated_at, ...(o.role ? { role: o.role } : {}),
});

/** What a TOTP code is spent on; each has its own last accepted step (migration 0055). */
export type TotpUse = 'login' | 'step_up';
const totpAccept = (col: string) => `UPDATE users SET ${col} = $2 WHERE id = $1 AND (${col} IS NULL OR ${col} < $2) RETURNING 1`;
const TOTP_ACCEPT: Record<TotpUse, string> = { login: totpAccept('mfa_totp_login_step'), step_up: totpAccept('mfa_totp_step_up_step') };
/** The last step accepted for a use, from a user row. */
export const lastTotpStep = (u: UserRow, use: TotpUse): number | null => (use === 'login' ? u.mfa_totp_login_step : u.mfa_totp_step_up_step);

export const accountsRepo = {
  userByEmail: (sql: Sql, email: string) =>
    sql.one<UserRow>(`SELECT id, email, name, password_hash, mfa_totp_secret_sealed, mfa_enabled, mfa_totp_login_step, mfa_totp_step_up_step, token_version, is_active FROM users WHERE lower(email) = lower($1)`, [email]),
  userById: (sql: Sql, id: string) =>
    sql.one<UserRow>(`SELECT id, email, name, password_hash, mfa_totp_secret_sealed, mfa_enabled, mfa_totp_login_step, mfa_totp_step_up_step, token_version, is_active FROM users WHERE id = $1`, [id]),
  /**
   * Records a TOTP time step as used for one purpose, only if it is later than the last one recorded for it (RFC 6238
   * §5.2: a code is good once; migration 0055 explains the two purposes). One conditional UPDATE, so of two requests
   * with the same code exactly one gets true; false is a replay. Owner pool (sys or a systemTx): the request role
   * cannot write users.
   */
  acceptTotpStep: async (sql: Sql, userId: string, use: TotpUse, step: number): Promise<boolean> =>
    !!(await sql.one(TOTP_ACCEPT[use], [userId, step])),
  insertUser: (sql: Sql, u: { id: string; email: string; name: string; passwordHash: string | null }) =>
    sql.exec(`INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)`, [u.id, u.email, u.name, u.passwordHash]),
  insertOrg: (sql: Sql, o: { id: string; name: string; slug: string; planTier: string; subscriptionStatus: string; features: string[]; isRoot?: boolean }) =>
    sql.one<OrgRow>(`INSERT INTO organizations AS o (id, name, slug, plan_tier, subscription_status, features, is_root)
      VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${ORG_COLS}`,
      [o.id, o.name, o.slug, o.planTier, o.subscriptionStatus, o.features, o.isRoot ?? false]) as Promise<OrgRow>,
  slugTaken: async (sql: Sql, slug: string) => !!(await sql.one(`SELECT 1 FROM organizations WHERE slug = $1`, [slug])),
  /** Serializes organization creations for one slug (or one generated slug's base) until the transaction ends. */
  /**
   * Serializes changes to an organization's owners (demotions, removals): each checks that another owner remains,
   * and two owners acting on each other at once would both see the other and leave none.
   */
  lockOwners: (sql: Sql, orgId: string) => lockNamed(sql, `org-owners:${orgId}`),
  lockSlug: (sql: Sql, slug: string) => lockNamed(sql, `org-slug:${slug}`),
  orgById: (sql: Sql, id: string) => sql.one<OrgRow>(`SELECT ${ORG_COLS} FROM organizations o WHERE o.id = $1 AND o.deleted_at IS NULL`, [id]),
  orgsOfUser: (sql: Sql, userId: string) =>
    sql.query<OrgRow>(`SELECT ${ORG_COLS}, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = $1 AND o.deleted_at IS NULL ORDER BY m.created_at, o.id`, [userId]),
  membership: (sql: Sql, orgId: string, userId: string) =>
    sql.one<{ role: string }>(`SELECT m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.org_id = $1 AND m.user_id = $2 AND o.deleted_at IS NULL`, [orgId, userId]),
  insertMembership: (sql: Sql, orgId: string, userId: string, role: string) =>
    sql.exec(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)`, [orgId, userId, role]),
  insertSession: (sql: Sql, s: { orgId: string; id: string; userId: string; mfaAt: string | null; expiresAt: string; ip: string | null; userAgent: string | null }) =>
    sql.exec(`INSERT INTO sessions (org_id, id, user_id, mfa_at, expires_at, ip, user_agent) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [s.orgId, s.id, s.userId, s.mfaAt, s.expiresAt, s.ip, s.userAgent]),
  insertRefresh: (sql: Sql, orgId: string, hash: string, sessionId: string) =>
    sql.exec(`INSERT INTO refresh_tokens (org_id, token_hash, session_id) VALUES ($1, $2, $3)`, [orgId, hash, sessionId]),
  revokeSession: (sql: Sql, sessionId: string) =>
    sql.exec(`UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [sessionId]),
  revokeUserSessionsInOrg: (sql: Sql, orgId: string, userId: string) =>
    sql.exec(`UPDATE sessions SET revoked_at = now() WHERE org_id = $1 AND user_id = $2 AND revoked_at IS NULL`, [orgId, userId]),
};
