import { AppError, conflict, notFound } from '../../core/errors.js';
import { actor, type ServiceContext } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';
import { audit } from '../../core/audit.js';
import { randomB64url, randomHex, sha256Hex } from '../../core/crypto.js';
import { accountsRepo, orgView } from './accounts.repo.js';
import { isUuid } from '../../core/ids.js';
import { nonBlankText } from '../../core/text.js';
import type { EntitlementsInput } from './accounts.schemas.js';
import { auditForUser } from './password-reset.service.js';
import { passwordTokensRepo } from './password-reset.repo.js';

export async function listAllOrganizations(ctx: ServiceContext, page: { limit: number; offset: number }) {
  actor(ctx);
  const sql = ctx.platform.db.sys;
  const items = await accountsRepo.orgsPage(sql, page.limit, page.offset);
  const total = await accountsRepo.countOrgs(sql);
  return { items: items.map(orgView), total };
}

/** Sets plan tier, subscription status and features; every credential of the organization sees it at once. */
export async function setEntitlements(ctx: ServiceContext, orgId: string, input: EntitlementsInput) {
  const row = await ctx.platform.db.systemTx(async (sql) => {
    const org = await accountsRepo.setEntitlements(sql, orgId, {
      planTier: input.plan_tier ?? null, subscriptionStatus: input.subscription_status ?? null, features: input.features ?? null,
    });
    if (!org) throw notFound('Organization');
    await audit(sql, ctx, { orgId, action: 'organization.entitlements_changed', targetType: 'organization', targetId: orgId, details: { ...input } });
    return org;
  });
  ctx.platform.credentials.invalidate();
  return orgView(row);
}

/** A SCIM bearer token for one organization (spec 5.9): shown once, stored hashed. */
export async function createScimToken(ctx: ServiceContext, orgId: string, rawName: string) {
  const name = nonBlankText(rawName, 'name');
  return ctx.platform.db.systemTx(async (sql) => {
    if (!(await accountsRepo.orgExists(sql, orgId))) throw notFound('Organization');
    const prefix = randomHex(4);
    const token = `scim_${prefix}_${randomB64url(32)}`;
    const row = await accountsRepo.insertScimToken(sql, orgId, { id: uuidv7(), name, prefix, hash: sha256Hex(token), createdBy: ctx.principal?.userId ?? null });
    await audit(sql, ctx, { orgId, action: 'scim_token.created', targetType: 'scim_token', targetId: row.id });
    return { ...row, token };
  });
}

/** An organization by id or slug (the CLI's `--org`); deleted ones are not found. */
export async function resolveOrganization(ctx: ServiceContext, idOrSlug: string): Promise<ReturnType<typeof orgView>> {
  const byId = isUuid(idOrSlug);
  const row = await accountsRepo.orgByIdOrSlug(ctx.platform.db.sys, idOrSlug, byId);
  if (!row) throw new AppError('NOT_FOUND', `No organization with ${byId ? 'id' : 'slug'} "${idOrSlug}"`, { org: idOrSlug });
  return orgView(row);
}

/** A user by e-mail (case-insensitive), for offline administration. */
export async function resolveUserByEmail(ctx: ServiceContext, email: string): Promise<{ id: string; email: string; name: string }> {
  const user = await accountsRepo.userByEmail(ctx.platform.db.sys, email.trim());
  if (!user) throw new AppError('NOT_FOUND', `No account with the e-mail "${email}"; create it with "platform user create"`, { email });
  return { id: user.id, email: user.email, name: user.name };
}

/**
 * For an operator (CLI): deactivates or reactivates an account. A deactivated account cannot sign in, refresh, reset
 * its password or use its API keys; its live sessions end and its unused password tokens (reset, invitation) are
 * spent, so reactivating brings none of them back; its memberships, keys and data stay. Every server sees it at once
 * (credential change notice). The last active super-admin of the root organization stays (nobody could administer
 * the platform).
 */
export async function setUserActive(ctx: ServiceContext, email: string, active: boolean) {
  const user = await resolveUserByEmail(ctx, email);
  const changed = await ctx.platform.db.systemTx(async (sql) => {
    if (!active && await accountsRepo.isLastRootSuperAdmin(sql, user.id)) {
      throw conflict('This is the last active super-admin of the platform root organization; make another member super-admin first', { email: user.email });
    }
    const row = await accountsRepo.setUserActive(sql, user.id, active);
    if (!row) return false;
    const revoked = active ? 0 : await accountsRepo.revokeUserSessions(sql, user.id);
    if (!active) await passwordTokensRepo.spendAllOf(sql, user.id);
    await auditForUser(sql, ctx, user.id, active ? 'user.reactivated' : 'user.deactivated', active ? {} : { sessions_revoked: revoked });
    return true;
  });
  if (changed) ctx.platform.credentials.invalidate();
  return { user_id: user.id, email: user.email, is_active: active, changed };
}
