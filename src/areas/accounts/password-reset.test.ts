import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, uniqueEmail, awayFromWindowEnd, type TestApp } from '../../../test/helpers.js';
import { SmtpSink, type ReceivedMail } from '../../adapters/smtp/smtp-sink.js';
import { sha256Hex } from '../../core/crypto.js';
import { RESET_REQUESTS } from './password-reset.service.js';

let t: TestApp;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await new SmtpSink().start();
  t = await buildTestApp({ smtpUrl: sink.url, smtpFrom: 'accounts@platform.test' });
});
afterAll(async () => { await t.close(); await sink.close(); });

const NEW_PASSWORD = 'Another-Staple-Horse-42';
const post = (url: string, payload: object, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, headers, payload });
const requestReset = (email: string) => post('/v1/auth/password-reset', { email });
const confirm = (token: string, password = NEW_PASSWORD) => post('/v1/auth/password-reset/confirm', { token, password });
const login = (email: string, password: string) => post('/v1/auth/login', { email, password });

/** The text of a message with quoted-printable soft line breaks undone (nodemailer wraps long lines). */
const textOf = (m: ReceivedMail) => m.data.replace(/=\r\n/g, '').replace(/=3D/g, '=');
/** Waits for the `n`-th message to `to` (1-based) and returns its text. */
async function mailTo(to: string, n = 1): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const mine = sink.messages.filter((m) => m.to.includes(to));
    if (mine.length >= n) return textOf(mine[n - 1]);
    if (Date.now() > deadline) throw new Error(`no mail #${n} to ${to} (got ${mine.length})`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const tokenIn = (text: string) => /pr_[A-Za-z0-9_-]{43}/.exec(text)![0];
const auditOf = (orgId: string, action: string) =>
  t.platform.db.sys.query<{ target_id: string; details: Record<string, unknown> }>(`SELECT target_id, details FROM audit_log WHERE org_id = $1 AND action = $2 ORDER BY id`, [orgId, action]);

describe('POST /v1/auth/password-reset and /confirm', () => {
  it('mails a token that sets the password; every earlier session, access and refresh token stops working', async () => {
    const a = await newTenant(t.app);
    const second = (await login(a.email, a.password)).json().data;

    const res = await requestReset(a.email.toUpperCase());
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ success: true, data: { accepted: true } });
    const mail = await mailTo(a.email);
    expect(mail).toContain('POST /v1/auth/password-reset/confirm');
    expect(mail).toContain('60 minutes');
    const token = tokenIn(mail);
    // Only the hash is stored.
    expect((await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM password_tokens WHERE token_hash = $1 AND purpose = 'reset'`, [sha256Hex(token)]))!.n).toBe(1);

    const done = await confirm(token);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toEqual({ success: true, data: { password_set: true } });

    expect((await login(a.email, NEW_PASSWORD)).statusCode).toBe(200);
    errorOf(await login(a.email, a.password), 401, 'AUTH_INVALID_CREDENTIALS');
    for (const access of [a.token, second.access_token]) errorOf(await t.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(access) }), 401, 'AUTH_TOKEN_INVALID');
    for (const refresh of [a.refreshToken, second.refresh_token]) errorOf(await post('/v1/auth/refresh', { refresh_token: refresh }), 401, 'AUTH_TOKEN_INVALID');

    expect(await auditOf(a.orgId, 'user.password_reset_requested')).toEqual([expect.objectContaining({ target_id: a.userId })]);
    expect(await auditOf(a.orgId, 'user.password_set')).toEqual([{ target_id: a.userId, details: { via: 'reset', sessions_revoked: 2 } }]);
  });

  it('the request role cannot read or write password tokens (the owner pool only)', async () => {
    const a = await newTenant(t.app);
    await expect(t.platform.db.tenant(a.orgId, (sql) => sql.query(`SELECT token_hash FROM password_tokens`))).rejects.toThrow(/permission denied/);
    await expect(t.platform.db.tenant(a.orgId, (sql) => sql.exec(`DELETE FROM password_tokens WHERE user_id = $1`, [a.userId]))).rejects.toThrow(/permission denied/);
  });

  it('an unknown e-mail gets the same 202 and no mail', async () => {
    const nobody = uniqueEmail('nobody');
    const a = await newTenant(t.app);
    const unknown = await requestReset(nobody);
    expect(unknown.statusCode).toBe(202);
    expect(unknown.body).toBe((await requestReset(a.email)).body);
    await mailTo(a.email); // sent after the unknown address's request was answered
    expect(sink.messages.filter((m) => m.to.includes(nobody))).toEqual([]);
  });

  it('a token works once; a newer request replaces the older token', async () => {
    const a = await newTenant(t.app);
    await requestReset(a.email);
    const first = tokenIn(await mailTo(a.email, 1));
    await requestReset(a.email);
    const second = tokenIn(await mailTo(a.email, 2));
    errorOf(await confirm(first), 401, 'AUTH_TOKEN_INVALID');
    expect((await confirm(second)).statusCode).toBe(200);
    errorOf(await confirm(second, 'Yet-Another-Password-7'), 401, 'AUTH_TOKEN_INVALID');
    expect((await login(a.email, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('unknown and other kinds of token are 401 AUTH_TOKEN_INVALID', async () => {
    const a = await newTenant(t.app);
    for (const token of ['pr_not-a-real-token', a.refreshToken, a.token]) errorOf(await confirm(token), 401, 'AUTH_TOKEN_INVALID');
  });

  it('an expired token is 401 AUTH_TOKEN_EXPIRED', async () => {
    const a = await newTenant(t.app);
    await requestReset(a.email);
    const token = tokenIn(await mailTo(a.email));
    await t.platform.db.sys.exec(`UPDATE password_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [sha256Hex(token)]);
    errorOf(await confirm(token), 401, 'AUTH_TOKEN_EXPIRED');
    expect((await login(a.email, a.password)).statusCode).toBe(200);
  });

  it('a refused password is 400 and leaves the token usable', async () => {
    const a = await newTenant(t.app);
    await requestReset(a.email);
    const token = tokenIn(await mailTo(a.email));
    const weak = errorOf(await confirm(token, 'abababababababab'), 400, 'VALIDATION_ERROR');
    expect(weak.details).toMatchObject({ field: 'password', reason: 'WEAK_PASSWORD' });
    errorOf(await confirm(token, 'short'), 400, 'VALIDATION_ERROR');
    expect((await confirm(token)).statusCode).toBe(200);
  });

  it('strict bodies: an unknown key is 400 VALIDATION_ERROR', async () => {
    const a = await newTenant(t.app);
    expect(errorOf(await post('/v1/auth/password-reset', { email: a.email, org: 'x' }), 400, 'VALIDATION_ERROR').message).toContain('org');
    expect(errorOf(await post('/v1/auth/password-reset/confirm', { token: 'pr_x', password: NEW_PASSWORD, email: a.email }), 400, 'VALIDATION_ERROR').message).toContain('email');
    errorOf(await post('/v1/auth/password-reset', { email: 'not-an-address' }), 400, 'VALIDATION_ERROR');
  });

  it(`throttles to ${RESET_REQUESTS.max} requests an hour per address, whether or not it has an account`, async () => {
    await awayFromWindowEnd(RESET_REQUESTS.windowMs, 15_000);
    const a = await newTenant(t.app);
    for (const email of [a.email, uniqueEmail('nobody')]) {
      for (let i = 0; i < RESET_REQUESTS.max; i++) expect((await requestReset(i % 2 ? email.toUpperCase() : email)).statusCode).toBe(202);
      const res = await requestReset(email);
      errorOf(res, 429, 'RATE_LIMIT_EXCEEDED');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(3600);
    }
    await mailTo(a.email, RESET_REQUESTS.max);
    expect(sink.messages.filter((m) => m.to.includes(a.email))).toHaveLength(RESET_REQUESTS.max);
    // Another address is not affected.
    expect((await requestReset(uniqueEmail('other'))).statusCode).toBe(202);
  });
});

describe('invitations', () => {
  /** The invitation job of a member (invitation-mail.ts): its status and attempts so far. */
  const invitationJob = (orgId: string, userId: string) => t.platform.db.sys.one<{ status: string; attempts: number }>(
    `SELECT status, attempts FROM jobs WHERE org_id = $1 AND kind = 'accounts.invitation_mail' AND payload->>'user_id' = $2`, [orgId, userId]);
  /**
   * Until `done()`: makes the member's pending invitation job due now and has this app's runner claim it. Every test
   * file's app runs jobs from the one test database, and one without SMTP that claims the job fails the attempt
   * (retried after a backoff): this keeps the test from waiting for those backoffs.
   */
  async function hurry(orgId: string, userId: string, done: () => Promise<boolean>) {
    await vi.waitFor(async () => {
      if (await done()) return;
      await t.platform.db.sys.exec(`UPDATE jobs SET run_at = now() WHERE org_id = $1 AND kind = 'accounts.invitation_mail' AND payload->>'user_id' = $2 AND status = 'pending'`, [orgId, userId]);
      t.platform.jobs.poke();
      throw new Error('not yet');
    }, { timeout: 15_000, interval: 100 });
  }
  const mailsTo = (email: string) => sink.messages.filter((m) => m.to.includes(email));
  /** The invitation mailed to a member (once this app's runner has sent it: see hurry). */
  async function invitationTo(orgId: string, userId: string, email: string): Promise<string> {
    await hurry(orgId, userId, async () => mailsTo(email).length > 0);
    return mailTo(email);
  }

  it('an invited member gets a mail with a 7-day token, sets a password and signs in', async () => {
    const a = await newTenant(t.app, { name: 'ingrid' });
    const email = uniqueEmail('invitee');
    const added = await post('/v1/organizations/current/members', { email, role: 'member' }, a.auth);
    expect(added.statusCode).toBe(201);
    const mail = await invitationTo(a.orgId, added.json().data.user_id, email);
    expect(mail).toContain(`ingrid (${a.email})`);
    expect(mail).toContain(`Org ${a.email}`);
    expect(mail).toContain('POST /v1/auth/password-reset/confirm');
    const token = tokenIn(mail);
    const row = await t.platform.db.sys.one<{ purpose: string; days: number }>(
      `SELECT purpose, round(extract(epoch FROM expires_at - created_at) / 86400)::int AS days FROM password_tokens WHERE token_hash = $1`, [sha256Hex(token)]);
    expect(row).toEqual({ purpose: 'invite', days: 7 });

    errorOf(await login(email, NEW_PASSWORD), 401, 'AUTH_INVALID_CREDENTIALS');
    expect((await confirm(token)).statusCode).toBe(200);
    const signedIn = await login(email, NEW_PASSWORD);
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json().data.organization.id).toBe(a.orgId);
    errorOf(await confirm(token), 401, 'AUTH_TOKEN_INVALID');
    expect(await auditOf(a.orgId, 'user.password_set')).toEqual([{ target_id: added.json().data.user_id, details: { via: 'invite', sessions_revoked: 0 } }]);
  });

  it('adding an existing account sends no invitation', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    expect((await post('/v1/organizations/current/members', { email: b.email, role: 'viewer' }, a.auth)).statusCode).toBe(201);
    // A later invitation's mail is the marker that the relay had time to deliver anything sent before it.
    const marker = uniqueEmail('marker');
    const added = await post('/v1/organizations/current/members', { email: marker, role: 'viewer' }, a.auth);
    expect(added.statusCode).toBe(201);
    await invitationTo(a.orgId, added.json().data.user_id, marker);
    expect(sink.messages.filter((m) => m.to.includes(b.email))).toEqual([]);
  });


  /**
   * A new tenant inviting a new e-mail whose first send the relay refuses (451); the caller's `finally` resets
   * sink.failNext in case the refusal was not used.
   */
  async function inviteWithFirstSendRefused(label: string) {
    const a = await newTenant(t.app);
    sink.failNext = 1;
    const email = uniqueEmail(label);
    const added = await post('/v1/organizations/current/members', { email, role: 'member' }, a.auth);
    expect(added.statusCode).toBe(201);
    return { a, email, userId: added.json().data.user_id as string };
  }

  it('a relay failure is retried: the invitation arrives on a later attempt and its token sets the password', async () => {
    try {
      const { a, email, userId } = await inviteWithFirstSendRefused('unlucky');
      const token = tokenIn(await invitationTo(a.orgId, userId, email));
      expect(sink.failNext).toBe(0); // the first send was refused (451)
      const job = (await invitationJob(a.orgId, userId))!;
      expect(job.status).toBe('done');
      expect(job.attempts).toBeGreaterThanOrEqual(2);
      expect(mailsTo(email)).toHaveLength(1);
      // Only the token that was sent exists: a failed attempt's token is deleted.
      const tokens = await t.platform.db.sys.query<{ token_hash: string }>(`SELECT token_hash FROM password_tokens WHERE user_id = $1`, [userId]);
      expect(tokens).toEqual([{ token_hash: sha256Hex(token) }]);
      expect((await confirm(token)).statusCode).toBe(200);
      expect((await login(email, NEW_PASSWORD)).statusCode).toBe(200);
    } finally { sink.failNext = 0; }
  });

  // The ways an invitation stops standing while its job waits for a retry (the first send refused: 451): each attempt
  // looks again, and sends nothing.
  const noLongerStanding: Array<[string, (a: { auth: Record<string, string> }, userId: string, email: string) => Promise<void>]> = [
    ['the member was removed', async (a, userId) => {
      expect((await t.app.inject({ method: 'DELETE', url: `/v1/organizations/current/members/${userId}`, headers: a.auth })).statusCode).toBe(200);
    }],
    ['the organization was deleted', async (a) => {
      expect((await t.app.inject({ method: 'DELETE', url: '/v1/organizations/current', headers: a.auth })).statusCode).toBe(200);
    }],
    ['the account was deactivated (platform user deactivate)', async (_a, userId) => {
      await t.platform.db.sys.exec(`UPDATE users SET is_active = false WHERE id = $1`, [userId]);
    }],
    ['the invitee set a password through a reset', async (_a, _userId, email) => {
      expect((await requestReset(email)).statusCode).toBe(202);
      expect((await confirm(tokenIn(await mailTo(email)))).statusCode).toBe(200);
    }],
  ];
  it.each(noLongerStanding)('an invitation is not sent when %s before its retry', async (_why, change) => {
    try {
      const { a, email, userId } = await inviteWithFirstSendRefused('stale');
      await vi.waitFor(() => expect(sink.failNext).toBe(0), { timeout: 10_000 });
      await vi.waitFor(async () => expect((await invitationJob(a.orgId, userId))!.status).toBe('pending'), { timeout: 10_000 });
      await change(a, userId, email);
      const before = mailsTo(email).length; // a reset's own mail, for the last case
      await hurry(a.orgId, userId, async () => (await invitationJob(a.orgId, userId))!.status === 'done');
      expect(mailsTo(email)).toHaveLength(before);
      const invites = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM password_tokens WHERE user_id = $1 AND purpose = 'invite'`, [userId]);
      expect(invites!.n).toBe(0);
    } finally { sink.failNext = 0; }
  });
});

describe('without SMTP', () => {
  let bare: TestApp;
  beforeAll(async () => { bare = await buildTestApp(); });
  afterAll(async () => { await bare.close(); });

  it('password-reset is 503 SERVICE_UNAVAILABLE for every address; invitations still create the member', async () => {
    const a = await newTenant(bare.app);
    for (const email of [a.email, uniqueEmail('nobody')]) {
      const err = errorOf(await bare.app.inject({ method: 'POST', url: '/v1/auth/password-reset', payload: { email } }), 503, 'SERVICE_UNAVAILABLE');
      expect(err.message).toContain('set-password-token');
    }
    const email = uniqueEmail('invitee');
    expect((await bare.app.inject({ method: 'POST', url: '/v1/organizations/current/members', headers: a.auth, payload: { email, role: 'member' } })).statusCode).toBe(201);
    const tokens = await bare.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM password_tokens p JOIN users u ON u.id = p.user_id WHERE u.email = $1`, [email]);
    expect(tokens!.n).toBe(0);
    const jobs = await bare.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE org_id = $1 AND kind = 'accounts.invitation_mail'`, [a.orgId]);
    expect(jobs!.n).toBe(0);
  });
});
