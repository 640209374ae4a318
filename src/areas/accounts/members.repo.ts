import type { Sql } from '../../core/db/database.js';

export interface MemberRow { user_id: string; email: string; name: string; role: string; created_at: string }

export const membersRepo = {
  /** One page of the organization's members, oldest first. */
  page: (sql: Sql, orgId: string, limit: number, offset: number) =>
    sql.query<MemberRow>(`SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.org_id = $1 ORDER BY m.created_at, m.user_id LIMIT $2 OFFSET $3`, [orgId, limit, offset]),
  /** How many members the organization has. */
  count: async (sql: Sql, orgId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM memberships WHERE org_id = $1`, [orgId]))!.n,
  /** One member with their user's e-mail and name; undefined when the user is not a member. */
  member: (sql: Sql, orgId: string, userId: string) =>
    sql.one<MemberRow>(`SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 AND m.user_id = $2`, [orgId, userId]),
  /** The user's role here (deleted organizations included), the membership held against removal with `keep`; undefined when none. */
  role: (sql: Sql, orgId: string, userId: string, opts: { keep?: boolean } = {}) =>
    sql.one<{ role: string }>(`SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2${opts.keep ? ' FOR KEY SHARE' : ''}`, [orgId, userId]),
  /** The user's role here, the membership row locked for update; undefined when none. */
  roleForUpdate: (sql: Sql, orgId: string, userId: string) =>
    sql.one<{ role: string }>(`SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2 FOR UPDATE`, [orgId, userId]),
  /** The user's role and whether the organization is the root one; undefined when not a member of a live organization. */
  roleInLiveOrg: (sql: Sql, orgId: string, userId: string) =>
    sql.one<{ role: string; is_root: boolean }>(`SELECT m.role, o.is_root FROM memberships m JOIN organizations o ON o.id = m.org_id
        WHERE m.org_id = $1 AND m.user_id = $2 AND o.deleted_at IS NULL`, [orgId, userId]),
  /** How many members of owner rank (owner, super-admin) the organization has besides the user. */
  countOwnersExcept: async (sql: Sql, orgId: string, userId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND role IN ('owner','super_admin') AND user_id <> $2`, [orgId, userId]))!.n,
  /** How many super-admins the organization has besides the user. */
  countSuperAdminsExcept: async (sql: Sql, orgId: string, userId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND role = 'super_admin' AND user_id <> $2`, [orgId, userId]))!.n,
  /** The organization's first super-admin (by membership age); undefined when it has none. */
  firstSuperAdmin: (sql: Sql, orgId: string) =>
    sql.one<{ user_id: string }>(`SELECT user_id FROM memberships WHERE org_id = $1 AND role = 'super_admin' ORDER BY created_at LIMIT 1`, [orgId]),
  /** Sets a member's role; returns how many rows changed (0 or 1). */
  setRole: (sql: Sql, orgId: string, userId: string, role: string) =>
    sql.exec(`UPDATE memberships SET role = $3, updated_at = now() WHERE org_id = $1 AND user_id = $2`, [orgId, userId, role]),
  /** Deletes a membership; returns how many rows went (0 or 1). */
  remove: (sql: Sql, orgId: string, userId: string) =>
    sql.exec(`DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, [orgId, userId]),
};
