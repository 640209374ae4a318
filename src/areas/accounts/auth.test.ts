import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, uniqueEmail, STRONG_PASSWORD, type TestApp, awayFromWindowEnd } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload: payload as object, headers });
const me = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/v1/me', headers });
const auditActions = async (orgId: string) =>
  (await t.platform.db.sys.query<{ action: string; target_id: string; credential_kind: string }>(`SELECT action, target_id, credential_kind FROM audit_log WHERE org_id = $1 ORDER BY id`, [orgId]));

describe('POST /v1/auth/register', () => {
  it('creates the user, an organization they own and a token pair (201)', async () => {
    const email = uniqueEmail('reg');
    const res = await post('/v1/auth/register', { email, password: STRONG_PASSWORD, name: 'Reg User', organization_name: 'Acme Widgets' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.success).toBe(true);
    const d = body.data;
    expect(d.user).toEqual({ id: expect.any(String), email, name: 'Reg User' });
    expect(d.organization).toMatchObject({ name: 'Acme Widgets', role: 'owner', is_root: false, subscription_status: 'active', session_duration_days: 30 });
    expect(d.organization.slug).toMatch(/^acme-widgets/);
    expect(d.organization.features).toContain('documents');
    expect(d.token_type).toBe('Bearer');
    expect(d.expires_in).toBe(900);
    expect(d.access_token.split('.')).toHaveLength(3);
    expect(d.refresh_token).toMatch(/^rt_/);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const m = await me(bearer(d.access_token));
    expect(m.statusCode).toBe(200);
    expect(m.json().data).toMatchObject({ user: { id: d.user.id, email }, organization: { id: d.organization.id }, role: 'owner', credential: { kind: 'user', legacy: false } });
    const rows = await auditActions(d.organization.id);
    expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(['user.registered', 'organization.created']));
    expect(rows.find((r) => r.action === 'user.registered')!.target_id).toBe(d.user.id);
  });

  it('refuses a taken e-mail, whatever its case, with 409 CONFLICT', async () => {
    const a = await newTenant(t.app);
    errorOf(await post('/v1/auth/register', { email: a.email.toUpperCase(), password: STRONG_PASSWORD, name: 'X', organization_name: 'X' }), 409, 'CONFLICT');
  });

  it('refuses weak passwords with 400 VALIDATION_ERROR', async () => {
    for (const password of ['short-1A', 'elevenchars', 'aaaaaaaaaaaaaaaa', 'abab-abab-abab']) {
      const err = errorOf(await post('/v1/auth/register', { email: uniqueEmail('weak'), password, name: 'W', organization_name: 'W' }), 400, 'VALIDATION_ERROR');
      expect(err.details?.field).toBe('password');
    }
  });

  it('accepts any password of 12 or more characters the design allows (design: "password (min 12)")', async () => {
    for (const password of ['MyPassword-2024!', 'Password1234', 'qwerty-Zebra-99', 'twelve-chars']) {
      const res = await post('/v1/auth/register', { email: uniqueEmail('ok'), password, name: 'P', organization_name: 'P' });
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  it('accepts a strong password even when the e-mail local part is very short', async () => {
    const email = `a${Date.now()}`.slice(0, 1) + `@x${Date.now()}.example.test`;
    expect((await post('/v1/auth/register', { email, password: 'Zebra-Quartz-Lamp-71', name: 'A', organization_name: 'A' })).statusCode).toBe(201);
  });

  it('rejects bad input with 400 and writes nothing', async () => {
    const email = uniqueEmail('bad');
    const base = { email, password: STRONG_PASSWORD, name: 'B', organization_name: 'B' };
    const cases: Array<[unknown, string | undefined]> = [
      [{ ...base, email: 'not-an-email' }, 'email'],
      [{ ...base, name: '   ' }, 'name'],
      [{ ...base, organization_name: '' }, 'organization_name'],
      [{ ...base, role: 'owner' }, 'role'],
      [{ ...base, id: '0190a000-0000-7000-8000-000000000000' }, 'id'],
      [{ ...base, name: 42 }, 'name'],
      [{ email, password: STRONG_PASSWORD, name: 'B' }, 'organization_name'],
      [{ ...base, password: 'x'.repeat(300) }, 'password'],
    ];
    for (const [payload, field] of cases) {
      const err = errorOf(await post('/v1/auth/register', payload), 400, 'VALIDATION_ERROR');
      expect(err.details?.field).toBe(field);
    }
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/register', payload: '{"email":', headers: { 'content-type': 'application/json' } });
    errorOf(res, 400, 'INVALID_JSON');
    expect(await t.platform.db.sys.one(`SELECT 1 FROM users WHERE email = $1`, [email])).toBeUndefined();
  });

  it('is refused with 403 FEATURE_DISABLED when sign-up is off, before the body is validated', async () => {
    const closed = await buildTestApp({ allowSignup: false });
    try {
      const ok = { email: uniqueEmail('closed'), password: STRONG_PASSWORD, name: 'C', organization_name: 'C' };
      const err = errorOf(await closed.app.inject({ method: 'POST', url: '/v1/auth/register', payload: ok }), 403, 'FEATURE_DISABLED');
      expect(err.details?.feature).toBe('signup');
      errorOf(await closed.app.inject({ method: 'POST', url: '/v1/auth/register', payload: { junk: true } }), 403, 'FEATURE_DISABLED');
      expect(await closed.platform.db.sys.one(`SELECT 1 FROM users WHERE email = $1`, [ok.email])).toBeUndefined();
    } finally { await closed.close(); }
  });
});

describe('POST /v1/auth/login', () => {
  it('signs in with e-mail (any case) and password', async () => {
    const a = await newTenant(t.app);
    const res = await post('/v1/auth/login', { email: a.email.toUpperCase(), password: a.password });
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d).toMatchObject({ user: { id: a.userId, email: a.email }, organization: { id: a.orgId, role: 'owner' }, token_type: 'Bearer', expires_in: 900 });
    expect((await me(bearer(d.access_token))).statusCode).toBe(200);
    expect((await auditActions(a.orgId)).map((r) => r.action)).toContain('session.created');
  });

  it('gives 401 AUTH_INVALID_CREDENTIALS for a wrong password or an unknown e-mail, alike', async () => {
    const a = await newTenant(t.app);
    const wrong = errorOf(await post('/v1/auth/login', { email: a.email, password: 'Wrong-Password-123' }), 401, 'AUTH_INVALID_CREDENTIALS');
    const unknown = errorOf(await post('/v1/auth/login', { email: uniqueEmail('nobody'), password: STRONG_PASSWORD }), 401, 'AUTH_INVALID_CREDENTIALS');
    expect(wrong.message).toBe(unknown.message);
  });

  it('refuses an invited account that has no password yet', async () => {
    const a = await newTenant(t.app);
    const email = uniqueEmail('invited');
    expect((await post('/v1/organizations/current/members', { email, role: 'member' }, a.auth)).statusCode).toBe(201);
    errorOf(await post('/v1/auth/login', { email, password: STRONG_PASSWORD }), 401, 'AUTH_INVALID_CREDENTIALS');
  });

  it('binds the session to organization_id when given; 404 for an organization the user is not in', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const second = await post('/v1/organizations', { name: 'Second Org' }, a.auth);
    const secondId = second.json().data.id;
    const res = await post('/v1/auth/login', { email: a.email, password: a.password, organization_id: secondId });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.organization.id).toBe(secondId);
    expect((await me(bearer(res.json().data.access_token))).json().data.organization.id).toBe(secondId);
    errorOf(await post('/v1/auth/login', { email: a.email, password: a.password, organization_id: b.orgId }), 404, 'NOT_FOUND');
    errorOf(await post('/v1/auth/login', { email: a.email, password: a.password, organization_id: 'nope' }), 400, 'INVALID_ID_FORMAT');
  });

  it('validates the body', async () => {
    errorOf(await post('/v1/auth/login', { email: 'a@b.c' }), 400, 'VALIDATION_ERROR');
    errorOf(await post('/v1/auth/login', { email: 'a@b.c', password: 'x', remember: true }), 400, 'VALIDATION_ERROR');
  });
});

describe('rate limits on auth routes', () => {
  it('limits password attempts per e-mail: past 10 a minute even the right password gets 429', async () => {
    await awayFromWindowEnd();
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    for (let i = 0; i < 10; i++) errorOf(await post('/v1/auth/login', { email: a.email, password: `Wrong-Guess-${i}-xyz` }), 401, 'AUTH_INVALID_CREDENTIALS');
    const res = await post('/v1/auth/login', { email: a.email.toUpperCase(), password: a.password });
    const err = errorOf(res, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(err.details?.retryAfterSeconds).toEqual(Number(res.headers['retry-after']));
    // the rate-limit headers describe the budget that ran out
    expect(res.headers['x-ratelimit-limit']).toBe('10');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    // another account from the same address is not affected
    expect((await post('/v1/auth/login', { email: b.email, password: b.password })).statusCode).toBe(200);
  });

  it('successful sign-ins do not use the guessing budget: only failures count', async () => {
    await awayFromWindowEnd();
    const a = await newTenant(t.app);
    for (let i = 0; i < 12; i++) expect((await post('/v1/auth/login', { email: a.email, password: a.password })).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) errorOf(await post('/v1/auth/login', { email: a.email, password: `Wrong-Guess-${i}-xyz` }), 401, 'AUTH_INVALID_CREDENTIALS');
    expect((await post('/v1/auth/login', { email: a.email, password: a.password })).statusCode).toBe(200); // 9 failures: still allowed
    errorOf(await post('/v1/auth/login', { email: a.email, password: 'Wrong-Guess-last-xyz' }), 401, 'AUTH_INVALID_CREDENTIALS');
    errorOf(await post('/v1/auth/login', { email: a.email, password: a.password }), 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('auth routes have their own stricter per-address budget with rate-limit headers', async () => {
    const strict = await buildTestApp({ rateLimit: { max: 3000, authMax: 2, windowMs: 60_000 } });
    try {
      const reg = () => strict.app.inject({ method: 'POST', url: '/v1/auth/register', payload: { email: uniqueEmail('rl'), password: STRONG_PASSWORD, name: 'R', organization_name: 'R' } });
      const first = await reg();
      expect(first.statusCode).toBe(201);
      expect(first.headers['x-ratelimit-limit']).toBe('2');
      expect(first.headers['x-ratelimit-remaining']).toBe('1');
      expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
      expect((await reg()).statusCode).toBe(201);
      const third = await reg();
      errorOf(third, 429, 'RATE_LIMIT_EXCEEDED');
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      // signed-in routes keep the general budget
      const tokens = first.json().data;
      const m = await strict.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(tokens.access_token) });
      expect(m.headers['x-ratelimit-limit']).toBe('3000');
    } finally { await strict.close(); }
  });
});

describe('POST /v1/auth/refresh', () => {
  it('rotates the refresh token and returns a working pair', async () => {
    const a = await newTenant(t.app);
    const res = await post('/v1/auth/refresh', { refresh_token: a.refreshToken });
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d.refresh_token).not.toBe(a.refreshToken);
    expect(d).toMatchObject({ user: { id: a.userId }, organization: { id: a.orgId, role: 'owner' }, token_type: 'Bearer', expires_in: 900 });
    expect((await me(bearer(d.access_token))).statusCode).toBe(200);
    // the next rotation works with the new token
    expect((await post('/v1/auth/refresh', { refresh_token: d.refresh_token })).statusCode).toBe(200);
  });

  it('on reuse of a spent token revokes the whole family: newest refresh and access tokens stop working', async () => {
    const a = await newTenant(t.app);
    const first = (await post('/v1/auth/refresh', { refresh_token: a.refreshToken })).json().data;
    const second = (await post('/v1/auth/refresh', { refresh_token: first.refresh_token })).json().data;
    expect((await me(bearer(second.access_token))).statusCode).toBe(200); // warm the credential cache
    errorOf(await post('/v1/auth/refresh', { refresh_token: a.refreshToken }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await post('/v1/auth/refresh', { refresh_token: second.refresh_token }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(bearer(second.access_token)), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(bearer(first.access_token)), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(a.auth), 401, 'AUTH_TOKEN_INVALID');
    const revoked = (await auditActions(a.orgId)).filter((r) => r.action === 'session.revoked');
    const sid = JSON.parse(Buffer.from(a.token.split('.')[1], 'base64url').toString()).sid;
    expect(revoked).toEqual([{ action: 'session.revoked', target_id: sid, credential_kind: 'system' }]);
    // other sessions of the same user are not affected
    const fresh = (await post('/v1/auth/login', { email: a.email, password: a.password })).json().data;
    expect((await me(bearer(fresh.access_token))).statusCode).toBe(200);
  });

  it('refuses the refresh token of an expired session with 401 AUTH_TOKEN_EXPIRED', async () => {
    const a = await newTenant(t.app);
    const sid = JSON.parse(Buffer.from(a.token.split('.')[1], 'base64url').toString()).sid;
    await t.platform.db.sys.exec(`UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [sid]);
    expect(errorOf(await post('/v1/auth/refresh', { refresh_token: a.refreshToken }), 401, 'AUTH_TOKEN_EXPIRED').message).toBe('Session has expired; sign in again');
  });

  it('refuses unknown tokens with 401 AUTH_TOKEN_INVALID', async () => {
    errorOf(await post('/v1/auth/refresh', { refresh_token: 'rt_not-a-real-token' }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await post('/v1/auth/refresh', { refresh_token: '' }), 400, 'VALIDATION_ERROR');
  });
});

describe('routes without a body', () => {
  it('logout and TOTP enroll refuse any field (400 UNKNOWN_FIELD) and take no body or {}', async () => {
    const a = await newTenant(t.app);
    for (const url of ['/v1/auth/mfa/totp/enroll', '/v1/auth/logout']) {
      expect(errorOf(await post(url, { all_sessions: true }, a.auth), 400, 'VALIDATION_ERROR').details).toEqual({ field: 'all_sessions', reason: 'UNKNOWN_FIELD' });
      errorOf(await post(url, [1], a.auth), 400, 'VALIDATION_ERROR');
    }
    expect((await post('/v1/auth/mfa/totp/enroll', {}, a.auth)).statusCode).toBe(200);
    expect((await me(a.auth)).statusCode).toBe(200); // the refused logout ended nothing
    expect((await post('/v1/auth/logout', {}, a.auth)).statusCode).toBe(204);
  });
});

describe('POST /v1/auth/logout', () => {
  it('ends the session at once (204): access and refresh tokens stop working', async () => {
    const a = await newTenant(t.app);
    expect((await me(a.auth)).statusCode).toBe(200); // cached
    const res = await post('/v1/auth/logout', {}, a.auth);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    errorOf(await me(a.auth), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await post('/v1/auth/refresh', { refresh_token: a.refreshToken }), 401, 'AUTH_TOKEN_INVALID');
    expect((await auditActions(a.orgId)).map((r) => r.action)).toContain('session.revoked');
  });

  it('works without a body and refuses API keys (403 FORBIDDEN) and anonymous callers (401)', async () => {
    const a = await newTenant(t.app);
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: a.auth })).statusCode).toBe(204);
    const b = await newTenant(t.app);
    const key = await b.apiKey();
    errorOf(await post('/v1/auth/logout', {}, bearer(key)), 403, 'FORBIDDEN');
    errorOf(await post('/v1/auth/logout', {}), 401, 'AUTH_REQUIRED');
  });
});

describe('POST /v1/auth/switch-organization', () => {
  it('spends the auth budget per user: the tokens it returns do not start a budget of their own', async () => {
    const strict = await buildTestApp({ rateLimit: { max: 3000, authMax: 2, windowMs: 60_000 } });
    try {
      const a = await newTenant(strict.app);
      const other = (await strict.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth, payload: { name: 'Other' } })).json().data;
      const sw = (token: string, orgId: string) => strict.app.inject({ method: 'POST', url: '/v1/auth/switch-organization', headers: bearer(token), payload: { organization_id: orgId } });
      const first = await sw(a.token, other.id);
      expect(first.statusCode).toBe(200);
      expect(first.headers['x-ratelimit-limit']).toBe('2');
      const second = await sw(first.json().data.access_token, a.orgId);
      expect(second.statusCode).toBe(200);
      errorOf(await sw(second.json().data.access_token, other.id), 429, 'RATE_LIMIT_EXCEEDED');
      // Enrollment writes a new secret each time: the auth budget too (per route, so a budget of its own).
      const enroll = () => strict.app.inject({ method: 'POST', url: '/v1/auth/mfa/totp/enroll', headers: a.auth });
      expect((await enroll()).statusCode).toBe(200);
      expect((await enroll()).statusCode).toBe(200);
      errorOf(await enroll(), 429, 'RATE_LIMIT_EXCEEDED');
    } finally { await strict.close(); }
  });

  it('returns tokens bound to another organization of the caller', async () => {
    const a = await newTenant(t.app);
    const other = (await post('/v1/organizations', { name: 'Other One' }, a.auth)).json().data;
    const res = await post('/v1/auth/switch-organization', { organization_id: other.id }, a.auth);
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d).toMatchObject({ organization: { id: other.id, role: 'owner' }, token_type: 'Bearer' });
    const m = (await me(bearer(d.access_token))).json().data;
    expect(m.organization.id).toBe(other.id);
    // the old token still names the first organization
    expect((await me(a.auth)).json().data.organization.id).toBe(a.orgId);
    const audit = await t.platform.db.sys.one<{ details: { switched_from: string }; actor_user_id: string }>(`SELECT details, actor_user_id FROM audit_log WHERE org_id = $1 AND action = 'session.created'`, [other.id]);
    expect(audit).toEqual({ details: { switched_from: a.orgId }, actor_user_id: a.userId });
  });

  it('gives 404 for an organization the caller is not a member of', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    errorOf(await post('/v1/auth/switch-organization', { organization_id: b.orgId }, a.auth), 404, 'NOT_FOUND');
    errorOf(await post('/v1/auth/switch-organization', { organization_id: '0190a000-0000-7000-8000-000000000000' }, a.auth), 404, 'NOT_FOUND');
    errorOf(await post('/v1/auth/switch-organization', { organization_id: 'abc' }, a.auth), 400, 'INVALID_ID_FORMAT');
    errorOf(await post('/v1/auth/switch-organization', { organization_id: b.orgId }, bearer(await a.apiKey())), 403, 'FORBIDDEN');
  });
});
