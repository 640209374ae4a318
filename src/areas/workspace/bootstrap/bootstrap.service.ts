import { createHash } from 'node:crypto';
import { actor, type ServiceContext } from '../../../core/context.js';
import { scopesAllow } from '../../../core/auth/permissions.js';
import type { Principal } from '../../../core/auth/principal.js';
import { personalizationView } from '../settings/settings.service.js';

export const BOOTSTRAP_PROJECTS_LIMIT = 50;
export const BOOTSTRAP_CACHE_CONTROL = 'private, max-age=15, stale-while-revalidate=60';

interface OrgItem { id: string; name: string; slug: string; role: string; plan_tier: string; is_current: boolean }
interface ProjectItem { id: string; name: string; slug: string; description: string | null; prefix: string | null; visibility: string; updated_at: string }
interface TenantSlices {
  user: { id: string; email: string; name: string } | null;
  org_settings: Record<string, unknown> | null;
  session_duration_days: number | null;
  docs: Record<string, { value: Record<string, unknown>; updated_at: string }> | null;
  projects: ProjectItem[] | null;
}

const mayRead = (p: Principal, scope: string, permission: string) =>
  p.permissions.has(permission) && (p.kind !== 'api_key' || p.scopes === null || scopesAllow(p.scopes, scope));
const iso = (t: string) => new Date(t).toISOString();

/**
 * First-paint data: user, organizations, projects (active, newest first, first 50) and settings, in two
 * round trips on two connections (the tenant's slices in one statement, the memberships as owner). A slice the
 * credential may not read (permission or API-key scope) is null. The ETag hashes the slices, so it changes
 * exactly when one of them does.
 */
export async function bootstrap(ctx: ServiceContext) {
  const p = actor(ctx);
  const { db } = ctx.platform;
  const withProjects = mayRead(p, 'projects:read', 'project.view');
  const withSettings = mayRead(p, 'settings:read', 'notification.view');
  const [slices, organizations] = await Promise.all([
    db.tenant(p.orgId, (sql) => sql.one<TenantSlices>(`SELECT
        (SELECT json_build_object('id', u.id, 'email', u.email, 'name', u.name) FROM users u WHERE u.id = $2) AS user,
        (SELECT o.settings FROM organizations o WHERE o.id = $1) AS org_settings,
        (SELECT o.session_duration_days FROM organizations o WHERE o.id = $1) AS session_duration_days,
        (SELECT json_object_agg(s.kind, json_build_object('value', s.value, 'updated_at', s.updated_at))
           FROM user_settings s WHERE s.org_id = $1 AND s.user_id = $2) AS docs,
        CASE WHEN $3::boolean THEN (SELECT COALESCE(json_agg(x ORDER BY x.id DESC), '[]'::json) FROM (
          SELECT id, name, slug, description, prefix, visibility, updated_at FROM projects
           WHERE org_id = $1 AND is_active ORDER BY id DESC LIMIT $4) x) END AS projects`,
      [p.orgId, p.userId, withProjects, BOOTSTRAP_PROJECTS_LIMIT])),
    // Memberships of other organizations are outside this tenant's policy: read the caller's own as owner. An API key
    // is bound to its organization and sees only that one (as on GET /v1/organizations).
    db.sys.query<OrgItem>(`SELECT o.id, o.name, o.slug, m.role, o.plan_tier, (o.id = $2) AS is_current
      FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = $1 AND o.deleted_at IS NULL AND (NOT $3 OR o.id = $2) ORDER BY m.created_at, o.id`, [p.userId, p.orgId, p.kind === 'api_key']),
  ]);
  const docs = slices?.docs ?? {};
  const pers = docs.personalization;
  const data = {
    user: slices?.user ?? null,
    organizations,
    projects: slices?.projects?.map((x) => ({ ...x, updated_at: iso(x.updated_at) })) ?? null,
    settings: withSettings ? {
      organization: slices?.org_settings ?? {},
      personalization: personalizationView(pers?.value, pers ? iso(pers.updated_at) : null, slices?.session_duration_days ?? p.org.sessionDurationDays),
      preferences: docs.preferences?.value ?? {},
    } : null,
  };
  const etag = `W/"${createHash('sha256').update(JSON.stringify(data)).digest('base64url').slice(0, 32)}"`;
  return { data, etag };
}

/** RFC 9110 weak comparison against an If-None-Match header (a list, or *). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => opaque(t) === opaque(etag));
}
