import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, SignJWT, decodeProtectedHeader } from 'jose';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp } from '../../../test/helpers.js';
import { ISSUER } from '../../core/auth/jwt.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const me = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/v1/me', headers });
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('access tokens', () => {
  it('refuses a JWT signed with another key (same or unknown kid) with 401 AUTH_TOKEN_INVALID', async () => {
    const a = await newTenant(t.app);
    const { kid } = decodeProtectedHeader(a.token);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1], 'base64url').toString());
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    for (const k of [kid!, 'other-kid']) {
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: k, typ: 'JWT' }).sign(privateKey);
      errorOf(await me(bearer(forged)), 401, 'AUTH_TOKEN_INVALID');
    }
  });

  it('refuses alg:none and tampered tokens with 401 AUTH_TOKEN_INVALID', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const [h, p, s] = a.token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`;
    errorOf(await me(bearer(none)), 401, 'AUTH_TOKEN_INVALID');
    const noneKid = `${b64({ alg: 'none', typ: 'JWT', kid: JSON.parse(Buffer.from(h, 'base64url').toString()).kid })}.${p}.`;
    errorOf(await me(bearer(noneKid)), 401, 'AUTH_TOKEN_INVALID');
    // payload changed to another organization, signature kept
    const tampered = `${h}.${b64({ ...claims, org: b.orgId })}.${s}`;
    errorOf(await me(bearer(tampered)), 401, 'AUTH_TOKEN_INVALID');
    // signature changed
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`;
    errorOf(await me(bearer(flipped)), 401, 'AUTH_TOKEN_INVALID');
    // the same signature bytes spelled another way (a last character differing only in its unused bits)
    const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = [...B64URL].map((c) => `${s.slice(0, -1)}${c}`).find((v) => v !== s && Buffer.from(v, 'base64url').equals(Buffer.from(s, 'base64url')))!;
    expect(respelled).toBeDefined();
    errorOf(await me(bearer(`${h}.${p}.${respelled}`)), 401, 'AUTH_TOKEN_INVALID');
    expect((await me(bearer(a.token))).statusCode).toBe(200);
    // HS256 with the public key as secret (algorithm confusion)
    const hs = `${b64({ alg: 'HS256', typ: 'JWT', kid: JSON.parse(Buffer.from(h, 'base64url').toString()).kid })}.${p}.${s}`;
    errorOf(await me(bearer(hs)), 401, 'AUTH_TOKEN_INVALID');
  });

  it('refuses an expired JWT with 401 AUTH_TOKEN_EXPIRED', async () => {
    const a = await newTenant(t.app);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1], 'base64url').toString());
    const expired = await t.platform.signer.sign({ org: claims.org, sid: claims.sid, ver: claims.ver, typ: 'access' }, a.userId, -60);
    errorOf(await me(bearer(expired)), 401, 'AUTH_TOKEN_EXPIRED');
    // a fresh token of the same session still works
    const fresh = await t.platform.signer.sign({ org: claims.org, sid: claims.sid, ver: claims.ver, typ: 'access' }, a.userId, 60);
    expect((await me(bearer(fresh))).statusCode).toBe(200);
  });

  it('refuses tokens of another purpose, of the wrong issuer or naming another organization', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1], 'base64url').toString());
    const mfa = await t.platform.signer.sign({ typ: 'mfa', org: a.orgId }, a.userId, 60);
    errorOf(await me(bearer(mfa)), 401, 'AUTH_TOKEN_INVALID');
    const crossOrg = await t.platform.signer.sign({ org: b.orgId, sid: claims.sid, ver: claims.ver, typ: 'access' }, a.userId, 60);
    errorOf(await me(bearer(crossOrg)), 401, 'AUTH_TOKEN_INVALID');
    const oldVersion = await t.platform.signer.sign({ org: a.orgId, sid: claims.sid, ver: claims.ver + 1, typ: 'access' }, a.userId, 60);
    errorOf(await me(bearer(oldVersion)), 401, 'AUTH_TOKEN_INVALID');
    expect(ISSUER).toBe('platform-api');
  });

  it('refuses a token signed by this platform whose ids are missing or not UUIDs: 401 AUTH_TOKEN_INVALID, not a 500', async () => {
    const a = await newTenant(t.app);
    const claims = JSON.parse(Buffer.from(a.token.split('.')[1], 'base64url').toString());
    for (const [extra, sub] of [
      [{ org: claims.org, ver: claims.ver }, a.userId], [{ org: claims.org, sid: 'x', ver: claims.ver }, a.userId],
      [{ org: claims.org, sid: 42, ver: claims.ver }, a.userId], [{ org: 'x', sid: claims.sid, ver: claims.ver }, a.userId],
      [{ org: claims.org, sid: claims.sid, ver: claims.ver }, 'not-a-uuid'],
    ] as const) {
      const token = await t.platform.signer.sign({ ...extra, typ: 'access' }, sub, 60);
      errorOf(await me(bearer(token)), 401, 'AUTH_TOKEN_INVALID');
    }
  });

  it('maps missing and malformed headers to 401 codes', async () => {
    errorOf(await me({}), 401, 'AUTH_REQUIRED');
    errorOf(await me({ authorization: 'Basic dXNlcjpwdw==' }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me({ authorization: 'Bearer' }), 401, 'AUTH_REQUIRED');
    errorOf(await me({ authorization: 'Bearer   ' }), 401, 'AUTH_REQUIRED');
    errorOf(await me({ authorization: 'Bearer a b' }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(bearer('not-a-token')), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(bearer('a.b.c')), 401, 'AUTH_TOKEN_INVALID');
  });
});

describe('GET /v1/me', () => {
  it('describes the user, organization, role, permissions and credential', async () => {
    const a = await newTenant(t.app);
    const res = await me(a.auth);
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d.user).toEqual({ id: a.userId, email: a.email, name: 'Test User' });
    expect(d.organization).toMatchObject({ id: a.orgId, is_root: false, plan_tier: expect.any(String), subscription_status: 'active' });
    expect(d.role).toBe('owner');
    expect(d.permissions).toEqual(expect.arrayContaining(['org.delete', 'org.manage_members', 'project.create']));
    expect([...d.permissions].sort()).toEqual(d.permissions);
    expect(d.credential).toMatchObject({ kind: 'user', session_id: expect.any(String), mfa_at: null, legacy: false });
    expect(res.headers.deprecation).toBeUndefined();
  });

  it('gives the organization object of GET /v1/organizations/current without role and settings, changes included', async () => {
    const a = await newTenant(t.app);
    const current = async () => {
      const { role, settings, ...org } = (await t.app.inject({ method: 'GET', url: '/v1/organizations/current', headers: a.auth })).json().data;
      expect([role, typeof settings]).toEqual(['owner', 'object']);
      return org;
    };
    expect((await me(a.auth)).json().data.organization).toEqual(await current());
    const put = await t.app.inject({ method: 'PUT', url: '/v1/organizations/current', headers: a.auth, payload: { name: 'Renamed', session_duration_days: 7 } });
    expect(put.statusCode).toBe(200);
    const after = (await me(a.auth)).json().data.organization;
    expect(after).toMatchObject({ name: 'Renamed', session_duration_days: 7 });
    expect(after).toEqual(await current());
    // A settings write moves the organization's updated_at too.
    await new Promise((r) => setTimeout(r, 5));
    expect((await t.app.inject({ method: 'PUT', url: '/v1/settings/org', headers: a.auth, payload: { settings: { theme: 'dark' } } })).statusCode).toBe(200);
    expect((await me(a.auth)).json().data.organization).toEqual(await current());
  });

  it('does not show the organization settings to a key without settings:read (/v1/me needs no scope)', async () => {
    const a = await newTenant(t.app);
    await t.app.inject({ method: 'PUT', url: '/v1/settings/org', headers: a.auth, payload: { settings: { secret_note: 'x' } } });
    const key = await a.apiKey(['projects:read']);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/settings/org', headers: bearer(key) }), 403, 'FORBIDDEN');
    const org = (await me(bearer(key))).json().data.organization;
    expect(org.id).toBe(a.orgId);
    expect(org).not.toHaveProperty('settings');
  });
});
