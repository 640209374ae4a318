import type { Platform } from '../../core/context.js';
import type { Sql } from '../../core/db/database.js';
import { DELIVERY_CONCURRENCY, enqueue, type Job } from '../../core/jobs.js';
import { platformMailer } from '../../adapters/smtp/platform-mailer.js';
import { sha256Hex } from '../../core/crypto.js';
import { accountsRepo } from './accounts.repo.js';
import { passwordTokensRepo } from './password-reset.repo.js';
import { issuePasswordToken, sendInvitation } from './password-reset.service.js';

/**
 * The invitation e-mail of a member created without a password, as a durable job: queued in the transaction that
 * adds the member (so it exists exactly when the membership commits), sent by the job runner, retried with backoff
 * when the relay fails (a relay restarting, a greylisting 451), and still sent after a restart of the server. Before,
 * it was sent once after the answer and a failure only logged: the invitee never heard of the account, and adding
 * them again was 409 (already a member).
 *
 * The payload holds ids only: the token is issued when the mail is sent (only its hash is stored, so it could not
 * wait in a queue), and its 7 days start then. A failed attempt deletes its token; a send whose answer was lost
 * (delivered, then the connection failed) may deliver twice, and only the later token works.
 */
export const INVITATION_MAIL_JOB = 'accounts.invitation_mail';

/** Queues the invitation of `userId` to `orgId`, sent on behalf of `inviterId` (null: an operator, through the CLI). */
export async function queueInvitationMail(sql: Sql, orgId: string, userId: string, inviterId: string | null): Promise<void> {
  await enqueue(sql, { orgId, kind: INVITATION_MAIL_JOB, payload: { user_id: userId, inviter_id: inviterId }, dedupeKey: `invite:${userId}` });
}

export function registerInvitationMail(platform: Platform): void {
  platform.jobs.register(INVITATION_MAIL_JOB, (job) => sendQueuedInvitation(platform, job), { concurrency: DELIVERY_CONCURRENCY });
}

/**
 * One attempt: nothing is sent when the invitation no longer stands (the member was removed, the organization
 * deleted, the account has a password by now); a relay failure, or a node without e-mail, throws, so the runner
 * retries (the last failure is logged by the runner and kept in the job's last_error).
 */
async function sendQueuedInvitation(platform: Platform, job: Job): Promise<void> {
  const userId = String(job.payload.user_id);
  const inviterId = typeof job.payload.inviter_id === 'string' ? job.payload.inviter_id : null;
  // Retried, not dropped: behind several nodes, one started without SMTP_URL may claim it before one that has it.
  if (!platformMailer(platform).configured) throw new Error('E-mail is not configured on this node (SMTP_URL, SMTP_FROM)');
  const ready = await platform.db.systemTx(async (sql) => {
    const user = await accountsRepo.userById(sql, userId);
    const org = await accountsRepo.orgById(sql, job.org_id);
    if (!user || !org || user.password_hash || !user.is_active || !(await accountsRepo.membership(sql, job.org_id, userId))) return null;
    const inviter = inviterId ? await accountsRepo.userById(sql, inviterId) : undefined;
    return { user, org, inviter, token: await issuePasswordToken(sql, userId, 'invite') };
  });
  if (!ready) return;
  const from = ready.inviter ? `${ready.inviter.name} (${ready.inviter.email})` : 'An administrator';
  try {
    await sendInvitation(platform, { email: ready.user.email, orgName: ready.org.name, from }, ready.token);
  } catch (err) {
    // The token no one received goes; the next attempt issues its own.
    await passwordTokensRepo.deleteUnused(platform.db.sys, sha256Hex(ready.token.token));
    throw err;
  }
}
