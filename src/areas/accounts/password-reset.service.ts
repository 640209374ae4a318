import { AppError, conflict, notFound } from '../../core/errors.js';
import type { Platform, ServiceContext } from '../../core/context.js';
import type { Sql } from '../../core/db/database.js';
import { hashPassword, randomB64url, sha256Hex } from '../../core/crypto.js';
import { audit } from '../../core/audit.js';
import type { MailMessage } from '../../adapters/smtp/port.js';
import { platformMailer } from '../../adapters/smtp/platform-mailer.js';
import { accountsRepo } from './accounts.repo.js';
import { passwordTokensRepo } from './password-reset.repo.js';
import { assertPassword, PASSWORD_RULE } from './passwords.js';
import { throttle, type AttemptBudget } from './throttle.js';

export type PasswordTokenPurpose = 'reset' | 'invite';
/** How long a token sets a password: a reset answers a request made just now; an invitation waits for its reader. */
export const PASSWORD_TOKEN_TTL_MS: Record<PasswordTokenPurpose, number> = { reset: 60 * 60_000, invite: 7 * 86_400_000 };
/** Reset e-mails per address: every request counts (each one lands in a mailbox), so the route cannot flood one. */
export const RESET_REQUESTS: AttemptBudget = { max: 5, windowMs: 3_600_000 };
export const CONFIRM_ROUTE = 'POST /v1/auth/password-reset/confirm';
const NOT_CONFIGURED = 'E-mail is not configured on this deployment (SMTP_URL, SMTP_FROM); an operator can issue a reset token with "platform user set-password-token"';

export interface IssuedToken { token: string; expires_at: string }

/**
 * Creates a single-use token that sets the user's password; only its SHA-256 is stored. A new reset token replaces
 * the user's unused earlier ones, so only the latest e-mail works; expired rows of the user are cleared on the way.
 */
export async function issuePasswordToken(sql: Sql, userId: string, purpose: PasswordTokenPurpose): Promise<IssuedToken> {
  await passwordTokensRepo.deleteReplaced(sql, userId, purpose);
  const token = `pr_${randomB64url(32)}`;
  const expiresAt = new Date(Date.now() + PASSWORD_TOKEN_TTL_MS[purpose]).toISOString();
  await passwordTokensRepo.insert(sql, { hash: sha256Hex(token), userId, purpose, expiresAt });
  return { token, expires_at: expiresAt };
}

/** Users belong to no one organization: the row goes to each of theirs, since the password opens all of them. */
export async function auditForUser(sql: Sql, ctx: ServiceContext, userId: string, action: string, details: Record<string, unknown>): Promise<void> {
  for (const org of await accountsRepo.orgsOfUser(sql, userId)) {
    await audit(sql, ctx, { orgId: org.id, action, targetType: 'user', targetId: userId, details });
  }
}

function confirmHow(platform: Platform, token: IssuedToken, validFor: string): string {
  const url = platform.config.publicBaseUrl ? ` (${platform.config.publicBaseUrl.replace(/\/+$/, '')}/v1/auth/password-reset/confirm)` : '';
  return [
    `Your token (valid ${validFor}, until ${token.expires_at}; it works once):`, '', `  ${token.token}`, '',
    `Choose your password with ${CONFIRM_ROUTE}${url} and the JSON body`,
    `{"token": "<the token above>", "password": "<your new password: ${PASSWORD_RULE}>"}.`,
  ].join('\n');
}

/** Sends one message; a failure is logged, never thrown (the caller's change has been committed already). */
async function sendLogged(platform: Platform, message: MailMessage, what: string, userId: string): Promise<void> {
  try { await platformMailer(platform).send(message); }
  catch (err) { platform.log.warn({ err: (err as Error).message, userId }, `${what} e-mail could not be sent`); }
}

/**
 * Starts a password reset. The answer is the same whether the account exists or not (no enumeration), and the
 * e-mail goes out after the answer, so the relay's latency does not tell them apart either.
 */
export async function requestPasswordReset(ctx: ServiceContext, email: string): Promise<{ accepted: true }> {
  const { platform } = ctx;
  if (!platformMailer(platform).configured) throw new AppError('SERVICE_UNAVAILABLE', NOT_CONFIGURED);
  const address = email.trim().toLowerCase();
  await throttle(ctx, `password-reset:${address}`, RESET_REQUESTS);
  const user = await accountsRepo.userByEmail(platform.db.sys, address);
  if (user?.is_active) {
    const token = await platform.db.systemTx(async (sql) => {
      const issued = await issuePasswordToken(sql, user.id, 'reset');
      await auditForUser(sql, ctx, user.id, 'user.password_reset_requested', {});
      return issued;
    });
    void sendLogged(platform, {
      to: [user.email], subject: 'Reset your password',
      text: `Someone, hopefully you, asked to reset the password of the account ${user.email}.\n\n${confirmHow(platform, token, 'for 60 minutes')}\n\n`
        + 'If you did not ask for this, ignore this message: your password stays as it is.\n',
    }, 'Password reset', user.id);
  }
  return { accepted: true };
}

/**
 * Sets the password with a reset or invite token. Setting it ends every session of the user (token_version bump and
 * revocation), and spends every outstanding token of theirs, so an older e-mail cannot set it again later.
 */
export async function confirmPasswordReset(ctx: ServiceContext, input: { token: string; password: string }): Promise<{ password_set: true }> {
  const { db } = ctx.platform;
  // Before the token is looked at: a refused password leaves the token usable.
  assertPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  const hash = sha256Hex(input.token);
  const outcome = await db.systemTx(async (sql) => {
    const row = await passwordTokensRepo.byHashForUpdate(sql, hash);
    if (!row || row.used_at) return 'invalid' as const;
    if (Date.parse(row.expires_at) <= Date.now()) return 'expired' as const;
    const user = await accountsRepo.userById(sql, row.user_id);
    if (!user?.is_active) return 'invalid' as const;
    await passwordTokensRepo.spendAllOf(sql, user.id);
    await accountsRepo.resetPasswordHash(sql, user.id, passwordHash);
    const revoked = await accountsRepo.revokeUserSessions(sql, user.id);
    await auditForUser(sql, ctx, user.id, 'user.password_set', { via: row.purpose, sessions_revoked: revoked });
    return 'set' as const;
  });
  if (outcome === 'invalid') throw new AppError('AUTH_TOKEN_INVALID', 'Password token is not recognised or was already used');
  if (outcome === 'expired') throw new AppError('AUTH_TOKEN_EXPIRED', 'Password token has expired; request a new one');
  ctx.platform.credentials.invalidate();
  return { password_set: true };
}

/** For an operator (CLI): a reset token to hand over by other means; works without e-mail. */
export async function issueResetTokenFor(ctx: ServiceContext, email: string) {
  const { db } = ctx.platform;
  const user = await accountsRepo.userByEmail(db.sys, email.trim());
  if (!user) throw notFound('User', { email });
  if (!user.is_active) throw conflict('This account is deactivated');
  const token = await db.systemTx(async (sql) => {
    const issued = await issuePasswordToken(sql, user.id, 'reset');
    await auditForUser(sql, ctx, user.id, 'user.password_reset_requested', { via: 'operator' });
    return issued;
  });
  return { user_id: user.id, email: user.email, ...token, confirm: CONFIRM_ROUTE };
}

/**
 * Mails an invitation token to a member created without a password (the invitation job, invitation-mail.ts, calls
 * it); a relay failure throws, so the job is retried.
 */
export async function sendInvitation(platform: Platform, to: { email: string; orgName: string; from: string }, token: IssuedToken): Promise<void> {
  await platformMailer(platform).send({
    to: [to.email], subject: `You are invited to ${to.orgName}`,
    text: `${to.from} added you to the organization "${to.orgName}" with the account ${to.email}.\n\n${confirmHow(platform, token, 'for 7 days')}\n\n`
      + `Then sign in with POST /v1/auth/login, your e-mail and that password.\n`,
  });
}
