import { AppError } from '../../core/errors.js';
import type { Sql } from '../../core/db/database.js';
import type { Platform, ServiceContext } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';
import { randomB64url, sha256Hex } from '../../core/crypto.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../core/auth/jwt.js';
import { audit } from '../../core/audit.js';
import { accountsRepo, orgView, type OrgRow, type UserRow } from './accounts.repo.js';

/** Opens a session (one refresh-token family) for a user in one organization and returns the token pair. */
export async function openSession(sql: Sql, ctx: ServiceContext, user: Pick<UserRow, 'id' | 'email' | 'name' | 'token_version'>, org: OrgRow, mfa: boolean) {
  const sessionId = uuidv7();
  const expiresAt = new Date(Date.now() + org.session_duration_days * 86_400_000).toISOString();
  await accountsRepo.insertSession(sql, { orgId: org.id, id: sessionId, userId: user.id, mfaAt: mfa ? new Date().toISOString() : null, expiresAt, ip: ctx.ip, userAgent: ctx.userAgent ?? null });
  const refresh = `rt_${randomB64url(32)}`;
  await accountsRepo.insertRefresh(sql, org.id, sha256Hex(refresh), sessionId);
  const access = await ctx.platform.signer.signAccess({ sub: user.id, org: org.id, sid: sessionId, ver: user.token_version });
  return {
    user: { id: user.id, email: user.email, name: user.name },
    organization: orgView(org),
    access_token: access, refresh_token: refresh, expires_in: ACCESS_TOKEN_TTL_SECONDS, token_type: 'Bearer' as const,
  };
}

/**
 * Rotates a refresh token. A token used twice means it leaked: the whole session (its family) is revoked
 * and both the thief and the owner must sign in again.
 */
export async function refreshSession(ctx: ServiceContext, refreshToken: string) {
  const { db } = ctx.platform;
  const hash = sha256Hex(refreshToken);
  const outcome = await db.systemTx(async (sql) => {
    const row = await accountsRepo.refreshTokenForUpdate(sql, hash);
    if (!row) return { error: 'Refresh token is not recognised' };
    if (row.used_at) {
      if (await accountsRepo.revokeSession(sql, row.session_id)) {
        await audit(sql, { ...ctx, principal: null }, { orgId: row.org_id, action: 'session.revoked', targetType: 'session', targetId: row.session_id, details: { reason: 'refresh_token_reuse', user_id: row.user_id } });
      }
      return { error: 'Refresh token was already used; the session has been revoked for safety: sign in again with POST /v1/auth/login', revoked: true };
    }
    if (row.revoked_at) return { error: 'Session has ended; sign in again' };
    if (Date.parse(row.expires_at) <= Date.now()) return { error: 'Session has expired; sign in again', expired: true };
    await accountsRepo.spendRefresh(sql, hash);
    const user = await accountsRepo.userById(sql, row.user_id);
    const org = await accountsRepo.orgById(sql, row.org_id);
    const member = await accountsRepo.membership(sql, row.org_id, row.user_id);
    if (!user || !user.is_active || !org || !member) return { error: 'Account is no longer a member of this organization' };
    const next = `rt_${randomB64url(32)}`;
    await accountsRepo.insertRefresh(sql, row.org_id, sha256Hex(next), row.session_id);
    const access = await ctx.platform.signer.signAccess({ sub: user.id, org: org.id, sid: row.session_id, ver: user.token_version });
    return {
      tokens: {
        user: { id: user.id, email: user.email, name: user.name }, organization: orgView({ ...org, role: member.role }),
        access_token: access, refresh_token: next, expires_in: ACCESS_TOKEN_TTL_SECONDS, token_type: 'Bearer' as const,
      },
    };
  });
  if ('revoked' in outcome) ctx.platform.credentials.invalidate();
  // Spec part 7: an expired credential is AUTH_TOKEN_EXPIRED; spent, revoked or unknown ones are AUTH_TOKEN_INVALID.
  if ('error' in outcome) throw new AppError('expired' in outcome ? 'AUTH_TOKEN_EXPIRED' : 'AUTH_TOKEN_INVALID', outcome.error!);
  return outcome.tokens;
}

export function invalidateCredentials(platform: Platform): void { platform.credentials.invalidate(); }
