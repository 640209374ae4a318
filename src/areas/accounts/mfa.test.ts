import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp, type Tenant, awayFromWindowEnd, enrollTotp } from '../../../test/helpers.js';
import { totpAt, totpStepAt } from '../../core/auth/totp.js';
import { accountsRepo } from './accounts.repo.js';
import { checkNeeds, STEP_UP_WINDOW_MS } from '../../core/http/guard.js';
import { ROLE_PERMISSIONS, type Role } from '../../core/auth/permissions.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload: payload as object, headers });
const me = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/v1/me', headers });
/** A code of the current step (a code of another step is accepted too, within one step of drift). */
const codeNow = (secret: string) => totpAt(secret, Date.now());
/** The code of a time step (RFC 6238 counter). */
const codeOfStep = (secret: string, step: number) => totpAt(secret, step * 30_000);
const wrongCode = (secret: string) => {
  const valid = new Set([-1, 0, 1].map((d) => totpAt(secret, Date.now() + d * 30_000)));
  for (let i = 0; ; i++) { const c = String(i).padStart(6, '0'); if (!valid.has(c)) return c; }
};

const enrolled = (a: Tenant) => enrollTotp(t.app, a);

describe('TOTP enrollment', () => {
  it('enroll returns an RFC 6238 secret and otpauth URL; activate needs a correct code', async () => {
    const a = await newTenant(t.app);
    const res = await post('/v1/auth/mfa/totp/enroll', {}, a.auth);
    expect(res.statusCode).toBe(200);
    const { secret, otpauth_url } = res.json().data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(otpauth_url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('algorithm')).toBe('SHA1');
    expect(url.searchParams.get('digits')).toBe('6');
    expect(url.searchParams.get('period')).toBe('30');
    expect(decodeURIComponent(otpauth_url)).toContain(a.email);

    errorOf(await post('/v1/auth/mfa/totp/activate', { code: wrongCode(secret) }, a.auth), 401, 'AUTH_INVALID_CREDENTIALS');
    errorOf(await post('/v1/auth/mfa/totp/activate', { code: '12345' }, a.auth), 400, 'VALIDATION_ERROR');
    errorOf(await post('/v1/auth/mfa/totp/activate', { code: 123456 }, a.auth), 400, 'VALIDATION_ERROR');
    const act = await post('/v1/auth/mfa/totp/activate', { code: codeNow(secret) }, a.auth);
    expect(act.statusCode).toBe(200);
    expect(act.json().data).toEqual({ mfa_enabled: true, mfa_at: expect.any(String) });
    // the activating session counts as stepped up
    expect((await me(a.auth)).json().data.credential.mfa_at).toBe(act.json().data.mfa_at);
    errorOf(await post('/v1/auth/mfa/totp/enroll', {}, a.auth), 409, 'CONFLICT');
    errorOf(await post('/v1/auth/mfa/totp/activate', { code: codeNow(secret) }, a.auth), 409, 'CONFLICT');
    const audit = await t.platform.db.sys.query<{ action: string }>(`SELECT action FROM audit_log WHERE org_id = $1`, [a.orgId]);
    expect(audit.map((r) => r.action)).toContain('user.mfa_enabled');
  });

  it('stores the secret encrypted', async () => {
    const a = await newTenant(t.app);
    const { secret } = (await post('/v1/auth/mfa/totp/enroll', {}, a.auth)).json().data;
    const row = await t.platform.db.sys.one<{ mfa_totp_secret_sealed: string }>(`SELECT mfa_totp_secret_sealed FROM users WHERE id = $1`, [a.userId]);
    expect(row!.mfa_totp_secret_sealed).not.toContain(secret);
    expect(t.platform.box.open(row!.mfa_totp_secret_sealed)).toBe(secret);
  });

  it('activate before enroll is 409 CONFLICT; API keys cannot enroll (403)', async () => {
    const a = await newTenant(t.app);
    errorOf(await post('/v1/auth/mfa/totp/activate', { code: '000000' }, a.auth), 409, 'CONFLICT');
    errorOf(await post('/v1/auth/mfa/totp/enroll', {}, bearer(await a.apiKey())), 403, 'FORBIDDEN');
    errorOf(await post('/v1/auth/mfa/totp/enroll', {}), 401, 'AUTH_REQUIRED');
  });
});

describe('sign-in with MFA', () => {
  it('login answers mfa_required with an mfa_token; mfa/verify with a code gives tokens with mfa_at set', async () => {
    const a = await newTenant(t.app);
    const secret = await enrolled(a);
    const login = await post('/v1/auth/login', { email: a.email, password: a.password });
    expect(login.statusCode).toBe(200);
    const d = login.json().data;
    expect(d).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    // the challenge token is no access token
    errorOf(await me(bearer(d.mfa_token)), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await post('/v1/auth/mfa/verify', { mfa_token: d.mfa_token, code: wrongCode(secret) }), 401, 'AUTH_INVALID_CREDENTIALS');
    errorOf(await post('/v1/auth/mfa/verify', { mfa_token: 'garbage', code: codeNow(secret) }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await post('/v1/auth/mfa/verify', { mfa_token: a.token, code: codeNow(secret) }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await post('/v1/auth/mfa/verify', { mfa_token: d.mfa_token, code: 'abcdef' }), 400, 'VALIDATION_ERROR');
    const verify = await post('/v1/auth/mfa/verify', { mfa_token: d.mfa_token, code: codeNow(secret) });
    expect(verify.statusCode).toBe(200);
    const tokens = verify.json().data;
    expect(tokens).toMatchObject({ user: { id: a.userId }, organization: { id: a.orgId }, token_type: 'Bearer' });
    const m = (await me(bearer(tokens.access_token))).json().data;
    expect(m.credential.mfa_at).toEqual(expect.any(String));
    expect(Date.now() - Date.parse(m.credential.mfa_at)).toBeLessThan(60_000);
  });

  it('one challenge opens one session: using the mfa_token again, even with a later code, is 401 AUTH_TOKEN_INVALID', async () => {
    const a = await newTenant(t.app);
    const secret = await enrolled(a);
    const challenge = (await post('/v1/auth/login', { email: a.email, password: a.password })).json().data.mfa_token;
    expect((await post('/v1/auth/mfa/verify', { mfa_token: challenge, code: codeNow(secret) })).statusCode).toBe(200);
    const again = errorOf(await post('/v1/auth/mfa/verify', { mfa_token: challenge, code: totpAt(secret, Date.now() + 30_000) }), 401, 'AUTH_TOKEN_INVALID');
    expect(again.message).toBe('This MFA challenge was already used; sign in again');
    // The sign-up's session and the one the challenge opened; none more.
    const sessions = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`, [a.userId]);
    expect(sessions!.n).toBe(2);
  });

  it('an expired MFA challenge is 401 AUTH_TOKEN_EXPIRED', async () => {
    const a = await newTenant(t.app);
    const secret = await enrolled(a);
    const expired = await t.platform.signer.sign({ typ: 'mfa', org: a.orgId }, a.userId, -10);
    errorOf(await post('/v1/auth/mfa/verify', { mfa_token: expired, code: codeNow(secret) }), 401, 'AUTH_TOKEN_EXPIRED');
  });

  it('a wrong password still fails before any MFA challenge', async () => {
    const a = await newTenant(t.app);
    await enrolled(a);
    errorOf(await post('/v1/auth/login', { email: a.email, password: 'Not-The-Password-1' }), 401, 'AUTH_INVALID_CREDENTIALS');
  });
});

describe('POST /v1/auth/mfa/step-up', () => {
  it('sets the session mfa_at (200 {mfa_at}) and the change is visible at once', async () => {
    const a = await newTenant(t.app);
    const secret = await enrolled(a);
    const sid = (await me(a.auth)).json().data.credential.session_id;
    await t.platform.db.sys.exec(`UPDATE sessions SET mfa_at = now() - interval '10 minutes' WHERE id = $1`, [sid]);
    t.platform.credentials.invalidate();
    const before = (await me(a.auth)).json().data.credential.mfa_at;
    expect(Date.now() - Date.parse(before)).toBeGreaterThan(STEP_UP_WINDOW_MS);
    errorOf(await post('/v1/auth/mfa/step-up', { code: wrongCode(secret) }, a.auth), 401, 'AUTH_INVALID_CREDENTIALS');
    const res = await post('/v1/auth/mfa/step-up', { code: codeNow(secret) }, a.auth);
    expect(res.statusCode).toBe(200);
    const { mfa_at } = res.json().data;
    expect(Date.now() - Date.parse(mfa_at)).toBeLessThan(60_000);
    const row = await t.platform.db.sys.one<{ mfa_at: string }>(`SELECT mfa_at FROM sessions WHERE id = $1`, [sid]);
    expect(row!.mfa_at).toBe(mfa_at);
    expect((await me(a.auth)).json().data.credential.mfa_at).toBe(mfa_at);
    const audit = await t.platform.db.sys.query<{ action: string }>(`SELECT action FROM audit_log WHERE org_id = $1 ORDER BY id`, [a.orgId]);
    expect(audit.map((r) => r.action)).toEqual(expect.arrayContaining(['user.mfa_enrollment_started', 'user.mfa_enabled', 'session.stepped_up']));
  });

  it('limits code guesses per user: past 5 a minute even the right code gets 429', async () => {
    const a = await newTenant(t.app);
    await awayFromWindowEnd();
    const secret = await enrolled(a); // a right code: not counted
    for (let i = 0; i < 5; i++) errorOf(await post('/v1/auth/mfa/step-up', { code: wrongCode(secret) }, a.auth), 401, 'AUTH_INVALID_CREDENTIALS');
    const res = await post('/v1/auth/mfa/step-up', { code: codeNow(secret) }, a.auth);
    errorOf(res, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // the budget is the user's, shared by sign-in verification
    const login = (await post('/v1/auth/login', { email: a.email, password: a.password })).json().data;
    errorOf(await post('/v1/auth/mfa/verify', { mfa_token: login.mfa_token, code: codeNow(secret) }), 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('without MFA enrolled is 409 CONFLICT; API keys get 403 FORBIDDEN', async () => {
    const a = await newTenant(t.app);
    errorOf(await post('/v1/auth/mfa/step-up', { code: '123456' }, a.auth), 409, 'CONFLICT');
    errorOf(await post('/v1/auth/mfa/step-up', { code: '123456' }, bearer(await a.apiKey())), 403, 'FORBIDDEN');
  });
});

describe('a code is good once per use (RFC 6238 §5.2)', () => {
  const lastSteps = async (userId: string) =>
    (await t.platform.db.sys.one<{ login: number | null; step_up: number | null }>(
      `SELECT mfa_totp_login_step AS login, mfa_totp_step_up_step AS step_up FROM users WHERE id = $1`, [userId]))!;
  const verify = async (a: Tenant, code: string) => {
    const login = (await post('/v1/auth/login', { email: a.email, password: a.password })).json().data;
    return post('/v1/auth/mfa/verify', { mfa_token: login.mfa_token, code });
  };
  const stepUp = (a: Tenant, code: string) => post('/v1/auth/mfa/step-up', { code }, a.auth);

  it('sign-in: a code accepted once is refused the second time, like a wrong code; the next step is accepted', async () => {
    const a = await newTenant(t.app);
    await awayFromWindowEnd(30_000, 10_000); // the steps below stay within one step of drift
    const secret = await enrolled(a);
    const s = totpStepAt(Date.now());
    expect((await verify(a, codeOfStep(secret, s))).statusCode).toBe(200); // the activation code signs in once
    expect(await lastSteps(a.userId)).toEqual({ login: s, step_up: null });
    const replay = errorOf(await verify(a, codeOfStep(secret, s)), 401, 'AUTH_INVALID_CREDENTIALS');
    const wrong = errorOf(await verify(a, wrongCode(secret)), 401, 'AUTH_INVALID_CREDENTIALS');
    expect(replay).toEqual(wrong); // no oracle: a replay looks like a wrong code
    errorOf(await verify(a, codeOfStep(secret, s - 1)), 401, 'AUTH_INVALID_CREDENTIALS'); // earlier, never used
    expect((await verify(a, codeOfStep(secret, s + 1))).statusCode).toBe(200);
    expect((await lastSteps(a.userId)).login).toBe(s + 1);
  });

  it('step-up: a code accepted once is refused the second time; the next step is accepted', async () => {
    const a = await newTenant(t.app);
    await awayFromWindowEnd(30_000, 10_000);
    const secret = await enrolled(a);
    const s = totpStepAt(Date.now());
    expect((await stepUp(a, codeOfStep(secret, s))).statusCode).toBe(200);
    errorOf(await stepUp(a, codeOfStep(secret, s)), 401, 'AUTH_INVALID_CREDENTIALS');
    expect((await stepUp(a, codeOfStep(secret, s + 1))).statusCode).toBe(200);
    errorOf(await stepUp(a, codeOfStep(secret, s + 1)), 401, 'AUTH_INVALID_CREDENTIALS');
    errorOf(await stepUp(a, codeOfStep(secret, s)), 401, 'AUTH_INVALID_CREDENTIALS'); // earlier than the last one
  });

  it('the uses are apart: one code activates, signs in and steps up once each; the record is per user', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    await awayFromWindowEnd(30_000, 10_000);
    const secret = await enrolled(a);
    const secretB = await enrolled(b);
    const code = codeNow(secret);
    const signIn = await verify(a, code);
    expect(signIn.statusCode).toBe(200);
    const session = bearer(signIn.json().data.access_token);
    expect((await post('/v1/auth/mfa/step-up', { code }, session)).statusCode).toBe(200);
    errorOf(await post('/v1/auth/mfa/step-up', { code }, session), 401, 'AUTH_INVALID_CREDENTIALS');
    errorOf(await verify(a, code), 401, 'AUTH_INVALID_CREDENTIALS');
    // another user's steps are their own
    expect((await stepUp(b, codeNow(secretB))).statusCode).toBe(200);
    expect((await verify(b, codeNow(secretB))).statusCode).toBe(200);
  });

  it('two concurrent uses of one code: exactly one succeeds', async () => {
    const a = await newTenant(t.app);
    await awayFromWindowEnd(30_000, 10_000);
    const secret = await enrolled(a);
    const s = totpStepAt(Date.now());
    const stepUps = await Promise.all([0, 1].map(() => stepUp(a, codeOfStep(secret, s))));
    expect(stepUps.map((r) => r.statusCode).sort()).toEqual([200, 401]);
    errorOf(stepUps.find((r) => r.statusCode === 401)!, 401, 'AUTH_INVALID_CREDENTIALS');

    const tokens = await Promise.all([0, 1].map(async () => (await post('/v1/auth/login', { email: a.email, password: a.password })).json().data.mfa_token));
    const verifies = await Promise.all(tokens.map((mfa_token) => post('/v1/auth/mfa/verify', { mfa_token, code: codeOfStep(secret, s) })));
    expect(verifies.map((r) => r.statusCode).sort()).toEqual([200, 401]);
    expect(await lastSteps(a.userId)).toEqual({ login: s, step_up: s });
  });

  it('the record is one conditional UPDATE: of many concurrent acceptances of one step, one wins', async () => {
    const a = await newTenant(t.app);
    const step = totpStepAt(Date.now());
    const results = await Promise.all(Array.from({ length: 8 }, () => accountsRepo.acceptTotpStep(t.platform.db.sys, a.userId, 'login', step)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await accountsRepo.acceptTotpStep(t.platform.db.sys, a.userId, 'login', step - 1)).toBe(false);
    expect(await accountsRepo.acceptTotpStep(t.platform.db.sys, a.userId, 'step_up', step)).toBe(true);
    expect(await accountsRepo.acceptTotpStep(t.platform.db.sys, a.userId, 'login', step + 1)).toBe(true);
  });

  it('enrolling a new secret forgets the steps used with the old one', async () => {
    const a = await newTenant(t.app);
    await post('/v1/auth/mfa/totp/enroll', {}, a.auth);
    // as if codes of a previous secret had been used up to a step ahead of now
    const ahead = totpStepAt(Date.now()) + 5;
    await t.platform.db.sys.exec(`UPDATE users SET mfa_totp_login_step = $2, mfa_totp_step_up_step = $2 WHERE id = $1`, [a.userId, ahead]);
    const { secret } = (await post('/v1/auth/mfa/totp/enroll', {}, a.auth)).json().data;
    expect(await lastSteps(a.userId)).toEqual({ login: null, step_up: null });
    await awayFromWindowEnd(30_000, 10_000);
    expect((await post('/v1/auth/mfa/totp/activate', { code: codeNow(secret) }, a.auth)).statusCode).toBe(200);
    expect((await stepUp(a, codeNow(secret))).statusCode).toBe(200);
    expect((await verify(a, codeNow(secret))).statusCode).toBe(200);
  });
});

/** A principal for the route guard's unit tests. */
function principal(over: Partial<Principal> & { role?: Role } = {}, org: Partial<Principal['org']> = {}): Principal {
  const role = over.role ?? 'owner';
  return {
    kind: 'user', userId: 'u', email: 'u@example.test', name: 'U', orgId: 'o', role,
    permissions: ROLE_PERMISSIONS[role], scopes: null, legacyKey: false, sessionId: 's', mfaAt: null,
    ...over,
    org: { id: 'o', name: 'O', slug: 'o', planTier: 'pro', subscriptionStatus: 'active', features: ['documents', 'mcp'], isRoot: false, sessionDurationDays: 30, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', ...org },
  };
}
function codeOf(fn: () => void): string | null {
  try { fn(); return null; } catch (e) { if (e instanceof AppError) return e.code; throw e; }
}

describe('route guard: step-up (checkNeeds)', () => {
  it('needs an MFA step-up within 5 minutes on a user session', () => {
    const needs = { stepUp: true };
    expect(codeOf(() => checkNeeds(needs, principal({ mfaAt: null })))).toBe('MFA_STEPUP_REQUIRED');
    expect(codeOf(() => checkNeeds(needs, principal({ mfaAt: new Date(Date.now() - STEP_UP_WINDOW_MS - 1000).toISOString() })))).toBe('MFA_STEPUP_REQUIRED');
    expect(codeOf(() => checkNeeds(needs, principal({ mfaAt: new Date(Date.now() - 60_000).toISOString() })))).toBeNull();
    expect(codeOf(() => checkNeeds(needs, principal({ mfaAt: new Date().toISOString() })))).toBeNull();
    // API keys never count as stepped up
    expect(codeOf(() => checkNeeds(needs, principal({ kind: 'api_key', scopes: ['settings:write'], mfaAt: new Date().toISOString() })))).toBe('MFA_STEPUP_REQUIRED');
    expect(STEP_UP_WINDOW_MS).toBe(5 * 60 * 1000);
  });

  it('checks permissions before step-up', () => {
    expect(codeOf(() => checkNeeds({ stepUp: true, permission: 'org.delete' }, principal({ role: 'member' })))).toBe('PERMISSION_DENIED');
  });
});
