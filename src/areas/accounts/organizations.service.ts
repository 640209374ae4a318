import { AppError, conflict, notFound } from '../../core/errors.js';
import { actor, requirePermission, type Platform, type ServiceContext } from '../../core/context.js';
import type { Sql } from '../../core/db/database.js';
import type { Principal } from '../../core/auth/principal.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { uuidv7 } from '../../core/ids.js';
import { audit } from '../../core/audit.js';
import { assertSlug, slugify } from '../../core/slugs.js';
import { hashPassword } from '../../core/crypto.js';
import { assertPassword } from './passwords.js';
import { queueInvitationMail } from './invitation-mail.js';
import { accountsRepo, orgView, type OrgRow } from './accounts.repo.js';
import { membersRepo, type MemberRow } from './members.repo.js';
import { apiKeysRepo } from './api-keys.repo.js';
import type { AddMemberInput, CreateOrgInput, UpdateOrgInput } from './accounts.schemas.js';
import { assertSettingKeys } from '../../core/settings-keys.js';
import { platformMailer } from '../../adapters/smtp/platform-mailer.js';
import { nonBlankText } from '../../core/text.js';
import { tierLimits } from '../../core/pricing.js';
import { lockNamed } from '../../core/db/locks.js';

/** Inserts an organization with the platform's default entitlements; the slug is generated when omitted. */
export async function createOrganizationRow(sql: Sql, platform: Platform, name: string, slug: string | undefined, opts: { isRoot?: boolean } = {}): Promise<OrgRow> {
  let finalSlug = slug;
  // Creations that want the same slug (two sign-ups naming the same organization) wait for each other here, so the
  // check below sees the other's committed row: a generated slug then gets a suffix and an explicit one is 409,
  // instead of a unique violation (500) at the insert.
  if (finalSlug !== undefined) {
    assertSlug(finalSlug);
    await accountsRepo.lockSlug(sql, finalSlug);
    if (await accountsRepo.slugTaken(sql, finalSlug)) throw conflict(`Organization slug "${finalSlug}" is taken`, { field: 'slug' });
  } else {
    const base = slugify(name);
    await accountsRepo.lockSlug(sql, base);
    finalSlug = base;
    for (let i = 2; await accountsRepo.slugTaken(sql, finalSlug); i++) finalSlug = `${base}-${i === 2 ? uuidv7().slice(-6) : i}`;
  }
  return accountsRepo.insertOrg(sql, {
    id: uuidv7(), name, slug: finalSlug, planTier: opts.isRoot ? 'enterprise' : platform.config.defaultPlanTier,
    subscriptionStatus: opts.isRoot ? 'active' : platform.config.defaultSubscriptionStatus,
    features: platform.config.defaultFeatures, isRoot: opts.isRoot,
  });
}

/** The caller's organizations, one page of them (all without a page) and how many there are. */
export async function listMyOrganizations(ctx: ServiceContext, page?: { limit: number; offset: number }) {
  const p = actor(ctx);
  const orgs = await accountsRepo.orgsOfUser(ctx.platform.db.sys, p.userId);
  // An API key is bound to one organization and sees only that one.
  const mine = (p.kind === 'api_key' ? orgs.filter((o) => o.id === p.orgId) : orgs).map(orgView);
  return { items: page ? mine.slice(page.offset, page.offset + page.limit) : mine, total: mine.length };
}

/**
 * Creates an organization; a signed-in caller becomes its owner. With a system context (CLI) it has no
 * member yet: add an owner with addMember.
 */
export async function createOrganization(ctx: ServiceContext, input: CreateOrgInput) {
  const ownerId = ctx.principal?.userId ?? null;
  try {
    return await ctx.platform.db.systemTx(async (sql) => {
      const org = await createOrganizationRow(sql, ctx.platform, nonBlankText(input.name, 'name'), input.slug);
      if (ownerId) await accountsRepo.insertMembership(sql, org.id, ownerId, 'owner');
      await audit(sql, ctx, { orgId: org.id, action: 'organization.created', targetType: 'organization', targetId: org.id });
      return orgView(ownerId ? { ...org, role: 'owner' } : org);
    });
  } catch (err) {
    if (isUniqueViolation(err, 'organizations_slug_key')) {
      throw conflict(input.slug !== undefined ? `Organization slug "${input.slug}" is taken` : 'An organization took the generated slug at the same moment; retry', { field: 'slug' });
    }
    throw err;
  }
}

export async function getCurrentOrganization(ctx: ServiceContext) {
  const p = actor(ctx);
  const org = await ctx.platform.db.tenant(p.orgId, (sql) => accountsRepo.orgById(sql, p.orgId));
  if (!org) throw notFound('Organization');
  return orgView({ ...org, role: p.role });
}

export async function updateCurrentOrganization(ctx: ServiceContext, input: UpdateOrgInput) {
  const p = requirePermission(ctx, 'org.manage_settings');
  if (input.settings) assertSettingKeys('settings', input.settings as Record<string, unknown>);
  const org = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const row = await accountsRepo.updateOrg(sql, p.orgId, {
      name: input.name === undefined ? null : nonBlankText(input.name, 'name'), settings: input.settings ?? null, sessionDurationDays: input.session_duration_days ?? null,
    });
    await audit(sql, ctx, { action: 'organization.updated', targetType: 'organization', targetId: p.orgId, details: { fields: Object.keys(input) } });
    return row;
  });
  ctx.platform.credentials.invalidate();
  return orgView({ ...org!, role: p.role });
}

/** Soft-deletes the caller's organization: every key and session of it stops working at once. */
export async function deleteOrganization(ctx: ServiceContext, orgId: string) {
  const p = actor(ctx);
  await ctx.platform.db.systemTx(async (sql) => {
    const org = await accountsRepo.orgById(sql, orgId);
    if (!org) throw notFound('Organization');
    if (org.is_root) throw conflict('The platform root organization cannot be deleted');
    await accountsRepo.softDeleteOrg(sql, orgId);
    await accountsRepo.revokeOrgSessions(sql, orgId);
    await audit(sql, ctx, { orgId: p.orgId, action: 'organization.deleted', targetType: 'organization', targetId: orgId });
  });
  ctx.platform.credentials.invalidate();
  return { id: orgId, deleted: true };
}

export async function listMembers(ctx: ServiceContext, page: { limit: number; offset: number }) {
  const p = actor(ctx);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const items = await membersRepo.page(sql, p.orgId, page.limit, page.offset);
    const total = await membersRepo.count(sql, p.orgId);
    return { items, total };
  });
}

/** Who may grant a role: super_admin only in the root organization (by a super-admin or the system); owner only by an owner. */
function assertCanGrant(ctx: ServiceContext, role: string, orgIsRoot: boolean): void {
  const p = ctx.principal;
  if (role === 'super_admin' && !(orgIsRoot && (p === null || p.role === 'super_admin'))) {
    throw new AppError('VALIDATION_ERROR', 'Role "super_admin" exists only in the platform root organization and only a super-admin grants it', { field: 'role' });
  }
  if (role === 'owner' && p && p.role !== 'owner' && p.role !== 'super_admin') throw new AppError('PERMISSION_DENIED', 'Only an owner can make another owner', { permission: 'org.transfer' });
}

/**
 * The plan's member limit (`max_members` of GET /v1/pricing), read from the organization's row in the transaction (not
 * the caller's credential, which may predate a plan change). Refused like the plan's project limit, with 403: the
 * spec has no code of its own for it, so FORBIDDEN with details.code MEMBER_LIMIT_REACHED. The caller holds the
 * organization's member lock. The root organization (the operator's) has no limit.
 */
async function assertUnderMemberLimit(sql: Sql, org: OrgRow): Promise<void> {
  const max = tierLimits(org.plan_tier).max_members;
  if (max === null || org.is_root) return;
  if ((await membersRepo.count(sql, org.id)) >= max) {
    throw new AppError('FORBIDDEN', `The ${org.plan_tier} plan allows ${max} members; remove one or upgrade the plan`,
      { code: 'MEMBER_LIMIT_REACHED', limit: max, plan_tier: org.plan_tier });
  }
}

/**
 * Adds an existing user by e-mail, or creates an invited one (no password until set; with e-mail configured, an
 * invitation token to set it is mailed). A signed-in caller adds to their own organization; a system context (CLI)
 * names `opts.orgId` and may set a password for a new account.
 */
export async function addMember(ctx: ServiceContext, input: AddMemberInput, opts: { orgId?: string; password?: string } = {}) {
  const orgId = ctx.principal ? requirePermission(ctx, 'org.manage_members').orgId : opts.orgId;
  if (!orgId) throw new AppError('VALIDATION_ERROR', 'An organization is required', { field: 'org' });
  const email = input.email.trim().toLowerCase();
  let passwordHash: string | null = null;
  if (opts.password !== undefined) {
    assertPassword(opts.password);
    passwordHash = await hashPassword(opts.password);
  }
  const mailer = platformMailer(ctx.platform);
  let added: { member: MemberRow; invited: boolean };
  try {
    added = await ctx.platform.db.systemTx(async (sql) => {
      const org = await accountsRepo.orgById(sql, orgId);
      if (!org) throw notFound('Organization');
      assertCanGrant(ctx, input.role, org.is_root);
      // Serializes the organization's additions, so concurrent requests cannot pass the plan's member limit.
      await lockNamed(sql, `org-members:${orgId}`);
      let user = await accountsRepo.userByEmail(sql, email);
      const created = !user;
      if (!user) {
        // An invited account: no password until its owner sets one (or signs in through SSO).
        const id = uuidv7();
        await accountsRepo.insertUser(sql, { id, email, name: input.name === undefined ? email.split('@')[0] : nonBlankText(input.name, 'name'), passwordHash });
        user = (await accountsRepo.userById(sql, id))!;
      } else if (passwordHash) {
        if (user.password_hash) throw conflict('This account already has a password; omit the password to add it as it is', { field: 'password' });
        await accountsRepo.setPasswordHash(sql, user.id, passwordHash);
      }
      if (await accountsRepo.membership(sql, orgId, user.id)) {
        // The operator's CLI giving an invited member of this organization its first password (docs/cli.md): the
        // password was set above; the membership stays as it is.
        if (!ctx.principal && passwordHash) {
          await audit(sql, ctx, { orgId, action: 'user.password_set', targetType: 'user', targetId: user.id, details: { by: 'cli' } });
          return { member: (await membersRepo.member(sql, orgId, user.id))!, invited: false };
        }
        throw conflict('This user is already a member of the organization', { field: 'email' });
      }
      await assertUnderMemberLimit(sql, org);
      await accountsRepo.insertMembership(sql, orgId, user.id, input.role);
      if (created) await audit(sql, ctx, { orgId, action: 'user.created', targetType: 'user', targetId: user.id, details: { email, invited: !passwordHash } });
      await audit(sql, ctx, { orgId, action: 'member.added', targetType: 'user', targetId: user.id, details: { role: input.role } });
      // The invitation e-mail is a job of this transaction (invitation-mail.ts): sent once the member exists, retried
      // when the relay fails. Without e-mail there is no one to hand a token to; the operator's CLI issues one instead.
      const invited = created && !passwordHash && mailer.configured;
      if (invited) await queueInvitationMail(sql, orgId, user.id, ctx.principal?.userId ?? null);
      return { member: (await membersRepo.member(sql, orgId, user.id))!, invited };
    });
  } catch (err) {
    // Two concurrent invitations of the same new e-mail: the loser sees the usual conflict.
    if (isUniqueViolation(err)) throw conflict('This user is already a member of the organization', { field: 'email' });
    throw err;
  }
  if (added.invited) ctx.platform.jobs.poke();
  return added.member;
}

/**
 * The caller's own membership, read in the transaction: a principal is a snapshot, and a caller removed (or demoted)
 * a moment ago must not act on the strength of the role it had. `keep` also locks the membership against removal
 * until the transaction ends, for writes that must not outlive it (an API key acts as its creator).
 */
export async function requireActorStillMember(sql: Sql, p: Principal, opts: { keep?: boolean } = {}): Promise<void> {
  const mine = await membersRepo.role(sql, p.orgId, p.userId, opts);
  if (!mine) throw new AppError(p.kind === 'api_key' ? 'INVALID_API_KEY' : 'AUTH_TOKEN_INVALID', 'Your membership of this organization has ended');
  if (mine.role !== p.role) throw new AppError('CONFLICT', 'Your role in this organization changed meanwhile; retry the request', { reason: 'CONCURRENT_CHANGE' });
}

const OWNER_RANK = new Set(['owner', 'super_admin']);

/**
 * The role rules of acting on another member (changing their role, removing them, revoking their API keys): one of
 * owner rank (owner, super-admin) only by an actor of that rank, a super-admin only by a super-admin.
 */
export function assertOwnerRank(p: Principal, targetRole: string | undefined, message: string): void {
  if (targetRole && OWNER_RANK.has(targetRole) && !OWNER_RANK.has(p.role)) throw new AppError('PERMISSION_DENIED', message, { permission: 'org.transfer' });
}
export function assertSuperAdminRank(p: Principal, targetRole: string | undefined, message: string): void {
  if (targetRole === 'super_admin' && p.role !== 'super_admin') throw new AppError('PERMISSION_DENIED', message, { permission: 'platform.admin' });
}

/**
 * Guards a change to a super-admin's membership (root organization): only a super-admin may demote or remove
 * another one (an owner of the root organization cannot strip the platform's administrators, whom it cannot
 * appoint), and the last super-admin stays (the root key acts as one; the CLI can appoint others).
 */
export async function assertSuperAdminChange(sql: Sql, p: Principal, userId: string, currentRole: string): Promise<void> {
  if (currentRole !== 'super_admin') return;
  if (userId !== p.userId) assertSuperAdminRank(p, currentRole, 'Only a super-admin can change or remove another super-admin');
  const others = await membersRepo.countSuperAdminsExcept(sql, p.orgId, userId);
  if (others === 0) throw conflict('The last super-admin cannot be demoted or removed; appoint another first (platform user create --role super_admin)');
}

export async function updateMemberRole(ctx: ServiceContext, userId: string, role: string) {
  const p = requirePermission(ctx, 'org.manage_members');
  assertCanGrant(ctx, role, p.org.isRoot);
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await accountsRepo.lockOwners(sql, p.orgId);
    await requireActorStillMember(sql, p);
    const current = await membersRepo.roleForUpdate(sql, p.orgId, userId);
    if (!current) throw notFound('Member');
    assertOwnerRank(p, current.role, 'Only an owner can change another owner\'s role');
    if (role !== current.role) await assertSuperAdminChange(sql, p, userId, current.role);
    if ((current.role === 'owner' || current.role === 'super_admin') && role !== current.role && (await membersRepo.countOwnersExcept(sql, p.orgId, userId)) === 0) {
      throw conflict('The last owner cannot be demoted; make someone else owner first');
    }
    await membersRepo.setRole(sql, p.orgId, userId, role);
    await audit(sql, ctx, { action: 'member.role_changed', targetType: 'user', targetId: userId, details: { from: current.role, to: role } });
    return membersRepo.member(sql, p.orgId, userId);
  });
  ctx.platform.credentials.invalidate();
  return row!;
}

/** Removes a member; their sessions in this organization end and their API keys stop working at once. */
export async function removeMember(ctx: ServiceContext, userId: string) {
  const p = actor(ctx);
  await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await accountsRepo.lockOwners(sql, p.orgId);
    await requireActorStillMember(sql, p);
    const current = await membersRepo.roleForUpdate(sql, p.orgId, userId);
    // Not a member here (another organization's user, or nobody): 404 whoever asks, before the permission (403).
    if (!current) throw notFound('Member');
    if (userId !== p.userId) requirePermission(ctx, 'org.manage_members');
    if (userId !== p.userId) assertOwnerRank(p, current.role, 'Only an owner can remove another owner');
    await assertSuperAdminChange(sql, p, userId, current.role);
    if ((current.role === 'owner' || current.role === 'super_admin') && (await membersRepo.countOwnersExcept(sql, p.orgId, userId)) === 0) {
      throw conflict('The last owner cannot be removed; make someone else owner first');
    }
    await membersRepo.remove(sql, p.orgId, userId);
    await accountsRepo.revokeUserSessionsInOrg(sql, p.orgId, userId);
    // Keys act as their creator: they are revoked for good, so a later re-invitation does not revive them.
    const keysRevoked = await apiKeysRepo.revokeCreatedBy(sql, p.orgId, userId);
    await audit(sql, ctx, { action: 'member.removed', targetType: 'user', targetId: userId, details: { role: current.role, api_keys_revoked: keysRevoked } });
  });
  ctx.platform.credentials.invalidate();
}
