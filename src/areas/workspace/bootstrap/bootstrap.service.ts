import { createHash } from 'node:crypto';
import { actor, type ServiceContext } from '../../../core/context.js';
import { scopesAllow } from '../../../core/auth/permissions.js';
import type { Principal } from '../../../core/auth/principal.js';
import { personalizationView } from '../settings/settings.service.js';
import { bootstrapRepo } from './bootstrap.repo.js';

export const BOOTSTRAP_PROJECTS_LIMIT = 50;
export const BOOTSTRAP_CACHE_CONTROL = 'private, max-age=15, stale-while-revalidate=60';

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
    db.tenant(p.orgId, (sql) => bootstrapRepo.tenantSlices(sql, p.orgId, p.userId, withProjects, BOOTSTRAP_PROJECTS_LIMIT)),
    // Memberships of other organizations are outside this tenant's policy: read the caller's own as owner. An API key
    // is bound to its organization and sees only that one (as on GET /v1/organizations).
    bootstrapRepo.organizationsOf(db.sys, p.userId, p.orgId, p.kind === 'api_key'),
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
