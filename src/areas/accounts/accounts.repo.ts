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
  /** Whether the user is a super-admin of the root organization and no other active account is. */
  isLastRootSuperAdmin: async (sql: Sql, userId: string) =>
    (await sql.one<{ last: boolean }>(`SELECT EXISTS (SELECT 1 FROM memberships m JOIN organizations o ON o.id = m.org_id AND o.is_root
        WHERE m.user_id = $1 AND m.role = 'super_admin')
      AND NOT EXISTS (SELECT 1 FROM memberships m JOIN organizations o ON o.id = m.org_id AND o.is_root JOIN users u ON u.id = m.user_id
        WHERE m.role = 'super_admin' AND m.user_id <> $1 AND u.is_active) AS last`, [userId]))!.last,
  /** Sets whether the account may be used; the row (id, email) when that changed it, undefined when it was so already. */
  setUserActive: (sql: Sql, userId: string, active: boolean) =>
    sql.one<{ id: string; email: string }>(`UPDATE users SET is_active = $2, updated_at = now() WHERE id = $1 AND is_active <> $2 RETURNING id, email`, [userId, active]),
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
  /** Revokes every live session of the user in every organization; returns how many. */
  revokeUserSessions: (sql: Sql, userId: string) =>
    sql.exec(`UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, [userId]),
  /** Revokes every live session of the organization; returns how many. */
  revokeOrgSessions: (sql: Sql, orgId: string) =>
    sql.exec(`UPDATE sessions SET revoked_at = now() WHERE org_id = $1 AND revoked_at IS NULL`, [orgId]),
  /** Marks the session as having passed MFA now; returns its new mfa_at, undefined when there is no such session. */
  markSessionMfa: (sql: Sql, sessionId: string | undefined) =>
    sql.one<{ mfa_at: string }>(`UPDATE sessions SET mfa_at = now() WHERE id = $1 RETURNING mfa_at`, [sessionId]),
  /** The refresh token with this hash and its session, the token's row locked for update; undefined when unknown. */
  refreshTokenForUpdate: (sql: Sql, hash: string) =>
    sql.one<{ org_id: string; session_id: string; used_at: string | null; revoked_at: string | null; expires_at: string; user_id: string }>(
      `SELECT r.org_id, r.session_id, r.used_at, s.revoked_at, s.expires_at, s.user_id
         FROM refresh_tokens r JOIN sessions s ON s.org_id = r.org_id AND s.id = r.session_id
        WHERE r.token_hash = $1 FOR UPDATE OF r`, [hash]),
  /** Marks a refresh token as used; returns how many rows changed. */
  spendRefresh: (sql: Sql, hash: string) =>
    sql.exec(`UPDATE refresh_tokens SET used_at = now() WHERE token_hash = $1`, [hash]),
  /** Deletes the spent MFA challenges that have expired; returns how many. */
  deleteExpiredMfaChallenges: (sql: Sql) =>
    sql.exec(`DELETE FROM mfa_challenges_spent WHERE expires_at < now()`),
  /** Records an MFA challenge as spent; returns 1, or 0 when it was spent already. */
  spendMfaChallenge: (sql: Sql, jti: string, userId: string, expiresAtEpoch: number) =>
    sql.exec(`INSERT INTO mfa_challenges_spent (jti, user_id, expires_at) VALUES ($1, $2, to_timestamp($3))
      ON CONFLICT (jti) DO NOTHING`, [jti, userId, expiresAtEpoch]),
  /** Sets a user's password hash (sessions stay); returns how many rows changed. */
  setPasswordHash: (sql: Sql, userId: string, passwordHash: string) =>
    sql.exec(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [userId, passwordHash]),
  /** Sets a user's password hash and bumps token_version (their tokens stop working); returns how many rows changed. */
  resetPasswordHash: (sql: Sql, userId: string, passwordHash: string) =>
    sql.exec(`UPDATE users SET password_hash = $2, token_version = token_version + 1, updated_at = now() WHERE id = $1`, [userId, passwordHash]),
  /** Stores a new sealed TOTP secret, with no time step used yet; returns how many rows changed. */
  setTotpSecret: (sql: Sql, userId: string, sealedSecret: string) =>
    sql.exec(`UPDATE users SET mfa_totp_secret_sealed = $2, mfa_totp_login_step = NULL, mfa_totp_step_up_step = NULL, updated_at = now() WHERE id = $1`, [userId, sealedSecret]),
  /** Turns MFA on for a user; returns how many rows changed. */
  enableMfa: (sql: Sql, userId: string) =>
    sql.exec(`UPDATE users SET mfa_enabled = true, updated_at = now() WHERE id = $1`, [userId]),
  /** The platform root organization's id; undefined before the first start made it. */
  rootOrg: (sql: Sql) => sql.one<{ id: string }>(`SELECT id FROM organizations WHERE is_root`),
  /** One page of the live organizations, oldest first. */
  orgsPage: (sql: Sql, limit: number, offset: number) =>
    sql.query<OrgRow>(`SELECT ${ORG_COLS} FROM organizations o WHERE o.deleted_at IS NULL ORDER BY o.created_at, o.id LIMIT $1 OFFSET $2`, [limit, offset]),
  /** How many live organizations there are. */
  countOrgs: async (sql: Sql) => (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM organizations WHERE deleted_at IS NULL`))!.n,
  /** Whether a live organization has this id. */
  orgExists: async (sql: Sql, id: string) => !!(await sql.one(`SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL`, [id])),
  /** A live organization by id (`byId`, the text cast to uuid) or by slug; undefined when there is none. */
  orgByIdOrSlug: (sql: Sql, idOrSlug: string, byId: boolean) =>
    sql.one<OrgRow>(`SELECT ${ORG_COLS} FROM organizations o WHERE ${byId ? 'o.id = $1::uuid' : 'o.slug = $1'} AND o.deleted_at IS NULL`, [idOrSlug]),
  /** Applies the given name, settings and session duration (null keeps one) and returns the organization; undefined when deleted. */
  updateOrg: (sql: Sql, orgId: string, f: { name: string | null; settings: unknown; sessionDurationDays: number | null }) =>
    sql.one<OrgRow>(`UPDATE organizations AS o SET name = COALESCE($2, name), settings = COALESCE($3, settings),
        session_duration_days = COALESCE($4, session_duration_days), updated_at = now()
      WHERE id = $1 AND deleted_at IS NULL
      RETURNING ${ORG_COLS}`,
    [orgId, f.name, f.settings, f.sessionDurationDays]),
  /** Applies the given plan tier, subscription status and features (null keeps one) and returns the organization; undefined when none is live. */
  setEntitlements: (sql: Sql, orgId: string, e: { planTier: string | null; subscriptionStatus: string | null; features: string[] | null }) =>
    sql.one<OrgRow>(`UPDATE organizations AS o SET plan_tier = COALESCE($2, plan_tier), subscription_status = COALESCE($3, subscription_status),
        features = COALESCE($4, features), updated_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING ${ORG_COLS}`,
    [orgId, e.planTier, e.subscriptionStatus, e.features]),
  /** Marks the organization deleted; returns how many rows changed. */
  softDeleteOrg: (sql: Sql, orgId: string) =>
    sql.exec(`UPDATE organizations SET deleted_at = now(), updated_at = now() WHERE id = $1`, [orgId]),
  /** Stores a SCIM token of the organization by its hash and returns its id, name and creation time. */
  insertScimToken: async (sql: Sql, orgId: string, t: { id: string; name: string; prefix: string; hash: string; createdBy: string | null }) =>
    (await sql.one<{ id: string; name: string; created_at: string }>(`INSERT INTO scim_tokens (org_id, id, name, prefix, token_hash, created_by_user_id)
      VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, name, created_at`, [orgId, t.id, t.name, t.prefix, t.hash, t.createdBy]))!,
};
