import { AppError, conflict } from '../../core/errors.js';
import { actor, type ServiceContext } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';
import { hashPassword, verifyPassword } from '../../core/crypto.js';
import { audit } from '../../core/audit.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { newTotpSecret, otpauthUrl, verifyTotp } from '../../core/auth/totp.js';
import { accountsRepo, lastTotpStep, type OrgRow, type TotpUse, type UserRow } from './accounts.repo.js';
import { openSession } from './sessions.service.js';
import { createOrganizationRow } from './organizations.service.js';
import type { LoginInput, RegisterInput } from './accounts.schemas.js';
import { assertPassword } from './passwords.js';
import { throttle, type AttemptBudget } from './throttle.js';
import { nonBlankText } from '../../core/text.js';

const MFA_TOKEN_TTL_SECONDS = 300;
/** Guessing budgets on top of the per-address route limit: per e-mail for passwords, per user for authenticator codes. */
export const LOGIN_ATTEMPTS: AttemptBudget = { max: 10, windowMs: 60_000 };
export const CODE_ATTEMPTS: AttemptBudget = { max: 5, windowMs: 60_000 };

// A real hash to compare against when the e-mail is unknown, so both failures take the same time.
const dummyHash = hashPassword('not-a-real-password-placeholder');

export async function register(ctx: ServiceContext, input: RegisterInput) {
  const { platform } = ctx;
  if (!platform.config.allowSignup) throw new AppError('FEATURE_DISABLED', 'Sign-up is disabled on this platform', { feature: 'signup' });
  const email = input.email.trim().toLowerCase();
  assertPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    return await platform.db.systemTx(async (sql) => {
      if (await accountsRepo.userByEmail(sql, email)) throw conflict('An account with this e-mail already exists', { field: 'email' });
      const userId = uuidv7();
      await accountsRepo.insertUser(sql, { id: userId, email, name: nonBlankText(input.name, 'name'), passwordHash });
      const org = await createOrganizationRow(sql, platform, nonBlankText(input.organization_name, 'organization_name'), undefined);
      await accountsRepo.insertMembership(sql, org.id, userId, 'owner');
      const sysCtx = { ...ctx, principal: null };
      await audit(sql, sysCtx, { orgId: org.id, action: 'user.registered', targetType: 'user', targetId: userId, details: { email } });
      await audit(sql, sysCtx, { orgId: org.id, action: 'organization.created', targetType: 'organization', targetId: org.id });
      const tokens = await openSession(sql, ctx, { id: userId, email, name: nonBlankText(input.name, 'name'), token_version: 1 }, { ...org, role: 'owner' }, false);
      return tokens;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_email_key')) throw conflict('An account with this e-mail already exists', { field: 'email' });
    throw err;
  }
}

/**
 * Checks an authenticator code; with a use (sign-in, step-up) also spends it: the code's time step is recorded for
 * that use, after which a code of that step or an earlier one is refused for it (RFC 6238 §5.2), with the same error
 * as a wrong code so a replay learns nothing. The record is one conditional UPDATE: of concurrent requests with one
 * code, exactly one passes. Activation only checks (it happens once per secret; migration 0055).
 */
async function checkCode(ctx: ServiceContext, user: UserRow, code: string, use: TotpUse | null): Promise<void> {
  const { db, box } = ctx.platform;
  const step = verifyTotp(box.open(user.mfa_totp_secret_sealed!), code, Date.now(), use ? lastTotpStep(user, use) : null);
  if (step === null || (use && !(await accountsRepo.acceptTotpStep(db.sys, user.id, use, step)))) {
    throw new AppError('AUTH_INVALID_CREDENTIALS', 'Authenticator code is incorrect');
  }
}

async function orgForLogin(ctx: ServiceContext, userId: string, orgId?: string): Promise<OrgRow> {
  const orgs = await accountsRepo.orgsOfUser(ctx.platform.db.sys, userId);
  const org = orgId ? orgs.find((o) => o.id === orgId) : orgs[0];
  if (!org) {
    if (orgId) throw new AppError('NOT_FOUND', 'Organization not found');
    throw new AppError('FORBIDDEN', 'This account is not a member of any organization');
  }
  return org;
}

export async function login(ctx: ServiceContext, input: LoginInput) {
  const { db, signer } = ctx.platform;
  const succeeded = await throttle(ctx, `login:${input.email.trim().toLowerCase()}`, LOGIN_ATTEMPTS);
  const user = await accountsRepo.userByEmail(db.sys, input.email.trim());
  const ok = user?.password_hash ? await verifyPassword(input.password, user.password_hash) : (await verifyPassword(input.password, await dummyHash), false);
  if (!user || !ok || !user.is_active) throw new AppError('AUTH_INVALID_CREDENTIALS', 'E-mail or password is incorrect');
  succeeded();
  const org = await orgForLogin(ctx, user.id, input.organization_id);
  if (user.mfa_enabled) {
    const mfaToken = await signer.sign({ typ: 'mfa', org: org.id }, user.id, MFA_TOKEN_TTL_SECONDS);
    return { mfa_required: true as const, mfa_token: mfaToken };
  }
  return db.systemTx(async (sql) => {
    const tokens = await openSession(sql, ctx, user, org, false);
    await audit(sql, { ...ctx, principal: null }, { orgId: org.id, action: 'session.created', targetType: 'user', targetId: user.id });
    return tokens;
  });
}

export async function verifyMfaLogin(ctx: ServiceContext, mfaToken: string, code: string) {
  const { db, signer } = ctx.platform;
  const claims = await signer.verify(mfaToken, 'mfa');
  const user = await accountsRepo.userById(db.sys, claims.sub);
  if (!user || !user.is_active || !user.mfa_enabled || !user.mfa_totp_secret_sealed) throw new AppError('AUTH_TOKEN_INVALID', 'MFA challenge is no longer valid; sign in again');
  const succeeded = await throttle(ctx, `totp:${user.id}`, CODE_ATTEMPTS);
  await checkCode(ctx, user, code, 'login');
  succeeded();
  const org = await orgForLogin(ctx, user.id, String(claims.org));
  return db.systemTx(async (sql) => {
    // One challenge, one session: the challenge is spent here, so completing it again (with a later code) is refused.
    await accountsRepo.deleteExpiredMfaChallenges(sql);
    const spent = await accountsRepo.spendMfaChallenge(sql, String(claims.jti), user.id, claims.exp);
    if (spent === 0) throw new AppError('AUTH_TOKEN_INVALID', 'This MFA challenge was already used; sign in again');
    const tokens = await openSession(sql, ctx, user, org, true);
    await audit(sql, { ...ctx, principal: null }, { orgId: org.id, action: 'session.created', targetType: 'user', targetId: user.id, details: { mfa: true } });
    return tokens;
  });
}

export async function logout(ctx: ServiceContext): Promise<void> {
  const p = actor(ctx);
  if (!p.sessionId) throw new AppError('FORBIDDEN', 'Only a signed-in session can log out; revoke API keys with DELETE /v1/api-keys/{id}');
  await ctx.platform.db.systemTx(async (sql) => {
    await accountsRepo.revokeSession(sql, p.sessionId!);
    await audit(sql, ctx, { action: 'session.revoked', targetType: 'session', targetId: p.sessionId });
  });
  ctx.platform.credentials.invalidate();
}

export async function switchOrganization(ctx: ServiceContext, orgId: string) {
  const p = actor(ctx);
  const { db } = ctx.platform;
  const user = await accountsRepo.userById(db.sys, p.userId);
  const org = await orgForLogin(ctx, p.userId, orgId);
  return db.systemTx(async (sql) => {
    const tokens = await openSession(sql, ctx, user!, org, false);
    await audit(sql, ctx, { orgId: org.id, action: 'session.created', targetType: 'user', targetId: p.userId, details: { switched_from: p.orgId } });
    return tokens;
  });
}

export async function enrollTotp(ctx: ServiceContext) {
  const p = actor(ctx);
  const { db, box } = ctx.platform;
  const user = await accountsRepo.userById(db.sys, p.userId);
  if (user!.mfa_enabled) throw conflict('MFA is already active for this account');
  const secret = newTotpSecret();
  await db.systemTx(async (sql) => {
    // A new secret starts a new sequence of time steps: no code of it has been used yet.
    await accountsRepo.setTotpSecret(sql, p.userId, box.seal(secret));
    await audit(sql, ctx, { action: 'user.mfa_enrollment_started', targetType: 'user', targetId: p.userId });
  });
  return { secret, otpauth_url: otpauthUrl(secret, p.email) };
}

export async function activateTotp(ctx: ServiceContext, code: string) {
  const p = actor(ctx);
  const { db } = ctx.platform;
  const user = await accountsRepo.userById(db.sys, p.userId);
  if (user!.mfa_enabled) throw conflict('MFA is already active for this account');
  if (!user!.mfa_totp_secret_sealed) throw conflict('Start enrollment first: POST /v1/auth/mfa/totp/enroll');
  const succeeded = await throttle(ctx, `totp:${p.userId}`, CODE_ATTEMPTS);
  await checkCode(ctx, user!, code, null);
  succeeded();
  const mfaAt = await db.systemTx(async (sql) => {
    await accountsRepo.enableMfa(sql, p.userId);
    const row = await accountsRepo.markSessionMfa(sql, p.sessionId);
    await audit(sql, ctx, { action: 'user.mfa_enabled', targetType: 'user', targetId: p.userId });
    return row?.mfa_at ?? null;
  });
  ctx.platform.credentials.invalidate();
  return { mfa_enabled: true, mfa_at: mfaAt };
}

export async function stepUp(ctx: ServiceContext, code: string) {
  const p = actor(ctx);
  const { db } = ctx.platform;
  const user = await accountsRepo.userById(db.sys, p.userId);
  if (!user!.mfa_enabled || !user!.mfa_totp_secret_sealed) throw conflict('MFA is not active for this account; enroll at POST /v1/auth/mfa/totp/enroll first');
  const succeeded = await throttle(ctx, `totp:${p.userId}`, CODE_ATTEMPTS);
  await checkCode(ctx, user!, code, 'step_up');
  succeeded();
  const row = await db.systemTx(async (sql) => {
    const r = await accountsRepo.markSessionMfa(sql, p.sessionId);
    await audit(sql, ctx, { action: 'session.stepped_up', targetType: 'session', targetId: p.sessionId });
    return r;
  });
  ctx.platform.credentials.invalidate();
  return { mfa_at: row!.mfa_at };
}

/** The sorted list of a permission set; a cached credential keeps its set, so each set is sorted once. */
const sortedPermissions = new WeakMap<ReadonlySet<string>, string[]>();
function sortedOf(set: ReadonlySet<string>): string[] {
  let list = sortedPermissions.get(set);
  if (!list) { list = [...set].sort(); sortedPermissions.set(set, list); }
  return list;
}

/** The caller as the credential describes it: no database round trip on a warm cache. */
export function me(ctx: ServiceContext) {
  const p = actor(ctx);
  return {
    user: { id: p.userId, email: p.email, name: p.name },
    // The organization object of GET /v1/organizations/current, less `role` (a field of its own here) and `settings`:
    // /v1/me needs no scope, the settings need settings:read.
    organization: { id: p.org.id, name: p.org.name, slug: p.org.slug, plan_tier: p.org.planTier, subscription_status: p.org.subscriptionStatus,
      features: p.org.features, session_duration_days: p.org.sessionDurationDays, is_root: p.org.isRoot,
      created_at: p.org.createdAt, updated_at: p.org.updatedAt },
    role: p.role,
    permissions: [...sortedOf(p.permissions)],
    credential_kind: p.kind,
    credential: p.kind === 'api_key'
      ? { kind: 'api_key' as const, api_key_id: p.apiKeyId, scopes: p.scopes, legacy: p.legacyKey }
      : { kind: 'user' as const, session_id: p.sessionId, mfa_at: p.mfaAt ?? null, legacy: false },
  };
}
