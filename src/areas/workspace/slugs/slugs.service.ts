import { actor, type ServiceContext } from '../../../core/context.js';
import { slugProblem } from '../../../core/slugs.js';
import { slugsRepo } from './slugs.repo.js';
import { accountsRepo } from '../../accounts/accounts.repo.js';

export type SlugKind = 'org' | 'project' | 'package';
export type SlugReason = 'taken' | 'reserved' | 'invalid_format' | 'uuid_shaped' | 'error';

/**
 * Whether a slug could be used now. Format problems come first (uuid_shaped, invalid_format, reserved),
 * then uniqueness: organization slugs are global, project slugs per organization, package slugs global
 * (when the SaaS builder's saas_packages table exists; before that no package slug is taken). A lookup
 * failure answers reason "error", never a guess. The owner of a taken slug is never named.
 */
export async function slugAvailability(ctx: ServiceContext, kind: SlugKind, slug: string): Promise<{ available: boolean; reason: SlugReason | null }> {
  const p = actor(ctx);
  const problem = slugProblem(slug);
  if (problem) return { available: false, reason: problem };
  try {
    const taken = await isTaken(ctx, p.orgId, kind, slug);
    return taken ? { available: false, reason: 'taken' } : { available: true, reason: null };
  } catch (err) {
    ctx.platform.log.warn({ err, kind }, 'slug availability lookup failed');
    return { available: false, reason: 'error' };
  }
}

async function isTaken(ctx: ServiceContext, orgId: string, kind: SlugKind, slug: string): Promise<boolean> {
  const { db } = ctx.platform;
  switch (kind) {
    case 'org':
      // Global across organizations (and kept by deleted ones), so it needs the owner connection.
      return accountsRepo.slugTaken(db.sys, slug);
    case 'project':
      return db.tenant(orgId, (sql) => slugsRepo.projectSlugTaken(sql, orgId, slug));
    case 'package': {
      if (!(await slugsRepo.packagesTableExists(db.sys))) return false;
      return slugsRepo.packageSlugTaken(db.sys, slug);
    }
  }
}
