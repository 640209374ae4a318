import { createHash } from 'node:crypto';
import { actor, type ServiceContext } from '../../../core/context.js';
import { scopesAllow } from '../../../core/auth/permissions.js';
import type { Principal } from '../../../core/auth/principal.js';
import { getPersonalization, getPreferences, getOrgSettings } from '../settings/settings.service.js';

export const BOOTSTRAP_PROJECTS_LIMIT = 50;
export const BOOTSTRAP_CACHE_CONTROL = 'private, max-age=15, stale-while-revalidate=60';

interface OrgItem { id: string; name: string; slug: string; role: string; plan_tier: string; is_current: boolean }
interface ProjectItem { id: string; name: string; slug: string; description: string | null; prefix: string | null; visibility: string; updated_at: string }

const mayRead = (p: Principal, scope: string, permission: string) =>
  p.permissions.has(permission) && (p.kind !== 'api_key' || p.scopes === null || scopesAllow(p.scopes, scope));

/**
 * First-paint data in one call: user, organizations, projects (active, newest first, first 50) and settings.
 * A slice the credential may not read (permission or API-key scope) is null. The ETag is a hash of the
 * slices, so it changes exactly when one of them does.
 */
export async function bootstrap(ctx: ServiceContext) {
  const p = actor(ctx);
  const { db } = ctx.platform;
  const [user, organizations, projects, settings] = await Promise.all([
    db.tenant(p.orgId, (sql) => sql.one<{ id: string; email: string; name: string }>(`SELECT id, email, name FROM users WHERE id = $1`, [p.userId])),
    // Memberships of other organizations are outside this tenant's policy: read the caller's own as owner.
    db.sys.query<OrgItem>(`SELECT o.id, o.name, o.slug, m.role, o.plan_tier, (o.id = $2) AS is_current
      FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = $1 AND o.deleted_at IS NULL ORDER BY m.created_at, o.id`, [p.userId, p.orgId]),
    mayRead(p, 'projects:read', 'project.view')
      ? db.tenant(p.orgId, (sql) => sql.query<ProjectItem>(`SELECT id, name, slug, description, prefix, visibility, updated_at FROM projects
          WHERE org_id = $1 AND is_active ORDER BY id DESC LIMIT $2`, [p.orgId, BOOTSTRAP_PROJECTS_LIMIT]))
      : Promise.resolve(null),
    mayRead(p, 'settings:read', 'notification.view')
      ? Promise.all([getOrgSettings(ctx), getPersonalization(ctx), getPreferences(ctx)])
        .then(([org, personalization, preferences]) => ({ organization: org.settings, personalization, preferences: preferences.preferences }))
      : Promise.resolve(null),
  ]);
  const data = { user: user ?? null, organizations, projects, settings };
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
