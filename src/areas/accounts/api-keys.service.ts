import { AppError, notFound } from '../../core/errors.js';
import { actor, type ServiceContext } from '../../core/context.js';
import type { Sql } from '../../core/db/database.js';
import type { Principal } from '../../core/auth/principal.js';
import { uuidv7 } from '../../core/ids.js';
import { audit } from '../../core/audit.js';
import { generateApiKey } from '../../core/auth/api-key-format.js';
import { isKnownScope, scopesAllow } from '../../core/auth/permissions.js';
import type { CreateApiKeyInput } from './accounts.schemas.js';
import { assertOwnerRank, assertSuperAdminRank, requireActorStillMember } from './organizations.service.js';
import { accountsRepo } from './accounts.repo.js';
import { apiKeysRepo } from './api-keys.repo.js';
import { membersRepo } from './members.repo.js';
import { nonBlankText } from '../../core/text.js';

/** The latest expiry a key may have: the same instant one calendar year ahead (29 February goes to 1 March). */
export function latestKeyExpiry(nowMs: number): number {
  const d = new Date(nowMs);
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  return d.getTime();
}

export type { ApiKeyRow } from './api-keys.repo.js';

/** Inserts a key for userId in orgId and returns it with the secret, which is never stored nor shown again. */
export async function insertApiKey(sql: Sql, orgId: string, userId: string, name: string, scopes: string[] | null, expiresAt: string, given?: string) {
  const k = given ? { key: given, prefix: given.split('_')[2], hash: (await import('../../core/crypto.js')).sha256Hex(given) } : generateApiKey();
  const row = await apiKeysRepo.insert(sql, orgId, { id: uuidv7(), prefix: k.prefix, hash: k.hash, name, scopes, expiresAt, createdBy: userId });
  return { ...row, key: k.key };
}

/** Scope vocabulary and expiry rules, the same for every caller. */
function validateKeyInput(input: CreateApiKeyInput): void {
  const unknown = (input.scopes ?? []).filter((s) => !isKnownScope(s));
  if (unknown.length) throw new AppError('VALIDATION_ERROR', `Unknown scope(s): ${unknown.join(', ')}`, { field: 'scopes', unknown });
  const exp = Date.parse(input.expires_at);
  if (!(exp > Date.now())) throw new AppError('VALIDATION_ERROR', 'Field "expires_at" must be in the future', { field: 'expires_at' });
  if (exp > latestKeyExpiry(Date.now())) throw new AppError('VALIDATION_ERROR', 'Field "expires_at" must be at most one year ahead', { field: 'expires_at' });
}

function assertAdminScopeAllowed(input: CreateApiKeyInput, holder: { isRoot: boolean; role: string }): void {
  if (input.scopes?.includes('admin') && !(holder.isRoot && holder.role === 'super_admin')) {
    // A valid request from a caller without the role it needs (spec 5: "without scope, role or permission gives 403").
    throw new AppError('FORBIDDEN', 'Scope "admin" is only for super-admins of the platform root organization', { field: 'scopes', scopes: ['admin'] });
  }
}

export function validateNewKey(ctx: ServiceContext, input: CreateApiKeyInput): void {
  const p = actor(ctx);
  validateKeyInput(input);
  assertAdminScopeAllowed(input, { isRoot: p.org.isRoot, role: p.role });
  // A key never creates a key stronger than itself; a legacy key (scopes null) holds its creator's full role.
  if (p.kind === 'api_key' && p.scopes) {
    if (!input.scopes) throw new AppError('FORBIDDEN', 'A scoped API key cannot create a legacy key (scopes null holds the full role)', { scopes: null });
    const beyond = input.scopes.filter((s) => !scopesAllow(p.scopes!, s) && !(s.startsWith('mcp:') && p.scopes!.includes('mcp:*')));
    if (beyond.length) throw new AppError('FORBIDDEN', `This API key cannot grant scopes it does not hold: ${beyond.join(', ')}`, { scopes: beyond });
  }
  // Nor one that outlives it: a short-lived key must not be able to make itself permanent.
  if (p.kind === 'api_key' && p.keyExpiresAt && Date.parse(input.expires_at) > Date.parse(p.keyExpiresAt)) {
    throw new AppError('FORBIDDEN', `An API key cannot create a key that outlives it: "expires_at" must be at most ${p.keyExpiresAt}, when this key expires`,
      { field: 'expires_at', max: p.keyExpiresAt });
  }
}

/**
 * Creates a key acting as its creator. A signed-in caller creates their own key; a system context (CLI)
 * names the organization and the member the key acts as (`onBehalf`).
 */
export async function createApiKey(ctx: ServiceContext, given: CreateApiKeyInput, onBehalf?: { orgId: string; userId: string }) {
  const input = { ...given, scopes: given.scopes ?? null }; // without explicit scopes: a legacy key
  const p = ctx.principal;
  if (p) validateNewKey(ctx, input);
  else if (!onBehalf) throw new AppError('VALIDATION_ERROR', 'An organization and a member are required', { field: 'user' });
  else validateKeyInput(input);
  const orgId = p?.orgId ?? onBehalf!.orgId;
  const userId = p?.userId ?? onBehalf!.userId;
  return ctx.platform.db.tenantTx(orgId, async (sql) => {
    // A removal running now revokes the member's keys: the membership is held until this key is written, so the
    // removal (waiting for it) revokes this key too, or this finds the membership gone.
    if (p) await requireActorStillMember(sql, p, { keep: true });
    if (!p) {
      const m = await membersRepo.roleInLiveOrg(sql, orgId, userId);
      // Only the CLI acts on behalf (no principal): it names the flag to fix.
      if (!m) throw new AppError('NOT_FOUND', 'That account is not a member of the organization; add it first with "platform user create --org ..."', { field: 'user' });
      assertAdminScopeAllowed(input, { isRoot: m.is_root, role: m.role });
    }
    const key = await insertApiKey(sql, orgId, userId, nonBlankText(input.name, 'name'), input.scopes, new Date(input.expires_at).toISOString());
    await audit(sql, ctx, { orgId, action: 'api_key.created', targetType: 'api_key', targetId: key.id, details: { name: key.name, scopes: key.scopes, expires_at: key.expires_at, ...(p ? {} : { acts_as_user_id: userId }) } });
    return key;
  });
}

/** Members see their own keys; those who manage keys see all of the organization's. */
export async function listApiKeys(ctx: ServiceContext, page: { limit: number; offset: number }) {
  const p = actor(ctx);
  const all = p.permissions.has('org.manage_api_keys');
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const items = await apiKeysRepo.page(sql, p.orgId, all, p.userId, page.limit, page.offset);
    const total = await apiKeysRepo.count(sql, p.orgId, all, p.userId);
    return { items, total };
  });
}

/**
 * Another member's key, revoked by a key manager, follows the role rules of membership changes: an owner's key only by
 * an owner, a super-admin's key only by a super-admin (an admin of the root organization must not lock the platform's
 * administrators out; only the CLI could let them back in).
 */
async function assertMayRevokeKeyOf(sql: Sql, p: Principal, creatorId: string): Promise<void> {
  const creator = await accountsRepo.membership(sql, p.orgId, creatorId);
  assertSuperAdminRank(p, creator?.role, 'Only a super-admin can revoke a super-admin\'s API key');
  assertOwnerRank(p, creator?.role, 'Only an owner can revoke an owner\'s API key');
}

export async function revokeApiKey(ctx: ServiceContext, id: string) {
  const p = actor(ctx);
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const key = await apiKeysRepo.byIdForUpdate(sql, p.orgId, id);
    if (!key || (key.created_by_user_id !== p.userId && !p.permissions.has('org.manage_api_keys'))) throw notFound('API key');
    if (key.created_by_user_id !== p.userId) await assertMayRevokeKeyOf(sql, p, key.created_by_user_id);
    const revoked = await apiKeysRepo.revoke(sql, p.orgId, id);
    if (!key.revoked_at) await audit(sql, ctx, { action: 'api_key.revoked', targetType: 'api_key', targetId: id });
    return revoked!;
  });
  ctx.platform.credentials.invalidate();
  return row;
}
