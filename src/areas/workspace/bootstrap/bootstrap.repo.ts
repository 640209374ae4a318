import type { Sql } from '../../../core/db/database.js';

export interface OrgItem { id: string; name: string; slug: string; role: string; plan_tier: string; is_current: boolean }
export interface ProjectItem { id: string; name: string; slug: string; description: string | null; prefix: string | null; visibility: string; updated_at: string }
export interface TenantSlices {
  user: { id: string; email: string; name: string } | null;
  org_settings: Record<string, unknown> | null;
  session_duration_days: number | null;
  docs: Record<string, { value: Record<string, unknown>; updated_at: string }> | null;
  projects: ProjectItem[] | null;
}

export const bootstrapRepo = {
  /**
   * The tenant's slices of first-paint data in one statement: the user, the organization's settings and session
   * duration, the user's settings documents by kind, and (when `withProjects`) the newest `projectsLimit` active projects.
   */
  tenantSlices: (sql: Sql, orgId: string, userId: string, withProjects: boolean, projectsLimit: number) =>
    sql.one<TenantSlices>(`SELECT
        (SELECT json_build_object('id', u.id, 'email', u.email, 'name', u.name) FROM users u WHERE u.id = $2) AS user,
        (SELECT o.settings FROM organizations o WHERE o.id = $1) AS org_settings,
        (SELECT o.session_duration_days FROM organizations o WHERE o.id = $1) AS session_duration_days,
        (SELECT json_object_agg(s.kind, json_build_object('value', s.value, 'updated_at', s.updated_at))
           FROM user_settings s WHERE s.org_id = $1 AND s.user_id = $2) AS docs,
        CASE WHEN $3::boolean THEN (SELECT COALESCE(json_agg(x ORDER BY x.id DESC), '[]'::json) FROM (
          SELECT id, name, slug, description, prefix, visibility, updated_at FROM projects
           WHERE org_id = $1 AND is_active ORDER BY id DESC LIMIT $4) x) END AS projects`,
    [orgId, userId, withProjects, projectsLimit]),
  /**
   * The user's organizations (not deleted), with their role, oldest membership first; only `orgId` when `onlyCurrent`.
   * `sql` must be the owner connection: memberships of other organizations are outside the tenant's policy.
   */
  organizationsOf: (sql: Sql, userId: string, orgId: string, onlyCurrent: boolean) =>
    sql.query<OrgItem>(`SELECT o.id, o.name, o.slug, m.role, o.plan_tier, (o.id = $2) AS is_current
      FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = $1 AND o.deleted_at IS NULL AND (NOT $3 OR o.id = $2) ORDER BY m.created_at, o.id`, [userId, orgId, onlyCurrent]),
};
