import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { API_KEY_RE, generateApiKey } from '../../core/auth/api-key-format.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

type Headers = Record<string, string>;
const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const me = (headers: Headers) => req('GET', '/v1/me', headers);
const inDays = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString();
const createKey = (headers: Headers, body: Record<string, unknown>) => req('POST', '/v1/api-keys', headers, { name: 'k', scopes: ['projects:read'], expires_at: inDays(30), ...body });
const keyIdOf = async (key: string) => (await me(bearer(key))).json().data.credential.api_key_id as string;

async function memberOf(a: Tenant, role: string): Promise<Headers> {
  const u = await newTenant(t.app, { name: role });
  expect((await req('POST', '/v1/organizations/current/members', a.auth, { email: u.email, role })).statusCode).toBe(201);
  const login = (await req('POST', '/v1/auth/login', {}, { email: u.email, password: u.password, organization_id: a.orgId })).json().data;
  return bearer(login.access_token);
}

describe('POST /v1/api-keys', () => {
  it('creates a key (201) shown once; it acts as its creator with its scopes; audit row written', async () => {
    const a = await newTenant(t.app);
    const expires = inDays(90);
    const res = await createKey(a.auth, { name: ' CI deploy ', scopes: ['projects:write', 'settings:read'], expires_at: expires });
    expect(res.statusCode).toBe(201);
    const k = res.json().data;
    expect(k).toEqual({
      id: expect.any(String), name: 'CI deploy', prefix: expect.any(String), scopes: ['projects:write', 'settings:read'],
      expires_at: expires, revoked_at: null, last_used_at: null, created_by_user_id: a.userId, created_at: expect.any(String), key: expect.any(String),
    });
    expect(k.key).toMatch(API_KEY_RE);
    expect(k.key.split('_')[2]).toBe(k.prefix);
    const row = await t.platform.db.sys.one<{ key_hash: string }>(`SELECT key_hash FROM api_keys WHERE id = $1`, [k.id]);
    expect(row!.key_hash).not.toContain(k.key.split('_')[3]);
    const m = (await me(bearer(k.key))).json().data;
    expect(m).toMatchObject({ user: { id: a.userId }, organization: { id: a.orgId }, role: 'owner', credential: { kind: 'api_key', api_key_id: k.id, scopes: ['projects:write', 'settings:read'], legacy: false } });
    const audit = await t.platform.db.sys.query<{ target_id: string; actor_user_id: string; credential_kind: string; details: { scopes: string[] } }>(
      `SELECT target_id, actor_user_id, credential_kind, details FROM audit_log WHERE org_id = $1 AND action = 'api_key.created'`, [a.orgId]);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ target_id: k.id, actor_user_id: a.userId, credential_kind: 'user', details: { scopes: ['projects:write', 'settings:read'] } });
  });

  it('accepts mcp and vision scopes and refuses unknown ones (400 VALIDATION_ERROR), admin unless a root super-admin (403)', async () => {
    const a = await newTenant(t.app);
    expect((await createKey(a.auth, { scopes: ['mcp:*', 'mcp:secrets.read', 'vision', 'notifications:read'] })).statusCode).toBe(201);
    const err = errorOf(await createKey(a.auth, { scopes: ['projects:read', 'projects:admin', 'everything'] }), 400, 'VALIDATION_ERROR');
    expect(err.details).toMatchObject({ field: 'scopes', unknown: ['projects:admin', 'everything'] });
    // A valid scope the caller's role cannot grant: the role is missing, not the request malformed.
    expect(errorOf(await createKey(a.auth, { scopes: ['admin'] }), 403, 'FORBIDDEN').details).toEqual({ field: 'scopes', scopes: ['admin'] });
    errorOf(await createKey(a.auth, { scopes: [] }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { scopes: ['projects:read', 'projects:read'] }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { scopes: 'projects:read' }), 400, 'VALIDATION_ERROR');
  });

  it('needs an expiry in the future and at most one year ahead', async () => {
    const a = await newTenant(t.app);
    expect((await createKey(a.auth, { expires_at: inDays(364) })).statusCode).toBe(201);
    // The limit is one calendar year: the same instant next year is accepted, a day (or 366 days) beyond it is not.
    const nextYear = new Date(Date.now());
    nextYear.setUTCFullYear(nextYear.getUTCFullYear() + 1);
    expect((await createKey(a.auth, { expires_at: nextYear.toISOString() })).statusCode).toBe(201);
    errorOf(await createKey(a.auth, { expires_at: new Date(nextYear.getTime() + 86_400_000).toISOString() }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { expires_at: inDays(367) }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { expires_at: inDays(5000) }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { expires_at: inDays(-1) }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { expires_at: 'tomorrow' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', '/v1/api-keys', a.auth, { name: 'k', scopes: ['projects:read'] }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { id: '0190a000-0000-7000-8000-000000000000' }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { revoked_at: null }), 400, 'VALIDATION_ERROR');
    errorOf(await createKey(a.auth, { name: '' }), 400, 'VALIDATION_ERROR');
  });

  it('a key without settings:write cannot create keys (403 FORBIDDEN)', async () => {
    const a = await newTenant(t.app);
    const readOnly = await a.apiKey(['projects:read', 'settings:read']);
    errorOf(await createKey(bearer(readOnly), {}), 403, 'FORBIDDEN');
  });

  it('a scoped key cannot mint a stronger key (403 FORBIDDEN) but can mint a weaker one', async () => {
    const a = await newTenant(t.app);
    const k = await a.apiKey(['settings:write', 'projects:read', 'mcp:*']);
    const err = errorOf(await createKey(bearer(k), { scopes: ['projects:write', 'documents:read'] }), 403, 'FORBIDDEN');
    expect(err.details).toEqual({ scopes: ['projects:write', 'documents:read'] });
    const weaker = await createKey(bearer(k), { scopes: ['projects:read', 'settings:read', 'mcp:secrets.read'], expires_at: inDays(0.5) });
    expect(weaker.statusCode).toBe(201);
    expect(weaker.json().data.created_by_user_id).toBe(a.userId);
  });

  it('a key cannot create a key that outlives it (403 FORBIDDEN naming the latest expiry); a session can', async () => {
    const a = await newTenant(t.app);
    const short = (await createKey(a.auth, { scopes: ['settings:write', 'projects:read'], expires_at: inDays(1) })).json().data;
    const err = errorOf(await createKey(bearer(short.key), { scopes: ['projects:read'], expires_at: inDays(365) }), 403, 'FORBIDDEN');
    expect(err.details).toEqual({ field: 'expires_at', max: new Date(short.expires_at).toISOString() });
    expect((await createKey(bearer(short.key), { scopes: ['projects:read'], expires_at: new Date(Date.parse(short.expires_at) - 60_000).toISOString() })).statusCode).toBe(201);
    expect((await createKey(a.auth, { scopes: ['projects:read'], expires_at: inDays(365) })).statusCode).toBe(201);
  });

  it("a key's power is its creator's role intersected with its scopes", async () => {
    const a = await newTenant(t.app);
    const viewer = await memberOf(a, 'viewer');
    const res = await createKey(viewer, { scopes: ['settings:write'] });
    expect(res.statusCode).toBe(201);
    const key = res.json().data.key;
    errorOf(await req('PUT', '/v1/organizations/current', bearer(key), { name: 'Nope' }), 403, 'PERMISSION_DENIED');
    errorOf(await req('POST', '/v1/organizations/current/members', bearer(key), { email: 'x@example.test', role: 'viewer' }), 403, 'PERMISSION_DENIED');
  });
});

describe('GET /v1/api-keys', () => {
  it('lists keys without secrets: own keys for members, all for admins', async () => {
    const a = await newTenant(t.app);
    await a.apiKey();
    const member = await memberOf(a, 'member');
    const mk = (await createKey(member, { name: 'member key' })).json().data;
    const all = await req('GET', '/v1/api-keys', a.auth);
    expect(all.statusCode).toBe(200);
    expect(all.json().pagination).toMatchObject({ total: 2, offset: 0, has_more: false });
    for (const k of all.json().data) expect(k.key).toBeUndefined();
    const mine = (await req('GET', '/v1/api-keys', member)).json();
    expect(mine.data.map((k: { id: string }) => k.id)).toEqual([mk.id]);
    expect(mine.pagination.total).toBe(1);
    errorOf(await req('GET', '/v1/api-keys', bearer(await a.apiKey(['projects:read']))), 403, 'FORBIDDEN');
    expect((await req('GET', '/v1/api-keys?limit=1', bearer(await a.apiKey(['settings:read'])))).json().pagination).toMatchObject({ limit: 1, has_more: true });
  });
});

describe('DELETE /v1/api-keys/{id}', () => {
  it('revokes at once despite the credential cache (401 INVALID_API_KEY); audit row written', async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey();
    const id = await keyIdOf(key); // the key is now cached
    expect((await me(bearer(key))).statusCode).toBe(200);
    const res = await req('DELETE', `/v1/api-keys/${id}`, a.auth);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id, revoked_at: expect.any(String) });
    expect(res.json().data.key).toBeUndefined();
    errorOf(await me(bearer(key)), 401, 'INVALID_API_KEY');
    // again: idempotent, same revocation time, one audit row
    const again = await req('DELETE', `/v1/api-keys/${id}`, a.auth);
    expect(again.json().data.revoked_at).toBe(res.json().data.revoked_at);
    const audit = await t.platform.db.sys.query(`SELECT 1 FROM audit_log WHERE org_id = $1 AND action = 'api_key.revoked' AND target_id = $2`, [a.orgId, id]);
    expect(audit).toHaveLength(1);
  });

  it('a key can revoke itself', async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey();
    const id = await keyIdOf(key);
    expect((await req('DELETE', `/v1/api-keys/${id}`, bearer(key))).statusCode).toBe(200);
    errorOf(await me(bearer(key)), 401, 'INVALID_API_KEY');
  });

  it("404 for another tenant's key, another member's key without org.manage_api_keys, or a random id", async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const bKeyId = await keyIdOf(await b.apiKey());
    const aKeyId = await keyIdOf(await a.apiKey());
    errorOf(await req('DELETE', `/v1/api-keys/${bKeyId}`, a.auth), 404, 'NOT_FOUND');
    const member = await memberOf(a, 'member');
    errorOf(await req('DELETE', `/v1/api-keys/${aKeyId}`, member), 404, 'NOT_FOUND');
    errorOf(await req('DELETE', '/v1/api-keys/0190a000-0000-7000-8000-000000000000', a.auth), 404, 'NOT_FOUND');
    errorOf(await req('DELETE', '/v1/api-keys/123', a.auth), 400, 'INVALID_ID_FORMAT');
    const admin = await memberOf(a, 'admin');
    const memberKeyId = await keyIdOf((await createKey(member, { scopes: ['projects:read'] })).json().data.key);
    expect((await req('DELETE', `/v1/api-keys/${memberKeyId}`, admin)).statusCode).toBe(200);
    const bAfter = await t.platform.db.sys.one<{ revoked_at: string | null }>(`SELECT revoked_at FROM api_keys WHERE id = $1`, [bKeyId]);
    expect(bAfter!.revoked_at).toBeNull();
  });

  it("an owner's key is revoked only by an owner, a super-admin's only by a super-admin (as with their roles)", async () => {
    const a = await newTenant(t.app);
    const ownerKey = await a.apiKey();
    const admin = await memberOf(a, 'admin');
    const adminKeyId = await keyIdOf((await createKey(admin, { scopes: ['projects:read'] })).json().data.key);
    expect(errorOf(await req('DELETE', `/v1/api-keys/${await keyIdOf(ownerKey)}`, admin), 403, 'PERMISSION_DENIED').message).toContain('owner');
    expect((await me(bearer(ownerKey))).statusCode).toBe(200);
    expect((await req('DELETE', `/v1/api-keys/${adminKeyId}`, a.auth)).statusCode).toBe(200);
    // The root organization: its admin cannot revoke the root key (the super-admin's); only the CLI could undo that.
    const rootOrgId = (await me(bearer(t.rootKey))).json().data.organization.id as string;
    const rootAdmin = await memberOf({ auth: bearer(t.rootKey), orgId: rootOrgId } as Tenant, 'admin');
    expect(errorOf(await req('DELETE', `/v1/api-keys/${await keyIdOf(t.rootKey)}`, rootAdmin), 403, 'PERMISSION_DENIED').message).toContain('super-admin');
    expect((await me(bearer(t.rootKey))).statusCode).toBe(200);
  });
});

describe('API key credentials', () => {
  it('an expired key gives 401 AUTH_TOKEN_EXPIRED', async () => {
    const a = await newTenant(t.app);
    const res = await createKey(a.auth, {});
    const { id, key } = res.json().data;
    await t.platform.db.sys.exec(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    errorOf(await me(bearer(key)), 401, 'AUTH_TOKEN_EXPIRED');
  });

  it('unknown, malformed and tampered keys give 401 INVALID_API_KEY', async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey();
    errorOf(await me(bearer(generateApiKey().key)), 401, 'INVALID_API_KEY');
    errorOf(await me(bearer('svc_live_short')), 401, 'INVALID_API_KEY');
    errorOf(await me(bearer(key.replace('svc_live_', 'SVC_LIVE_'))), 401, 'INVALID_API_KEY');
    errorOf(await me(bearer(`${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`)), 401, 'INVALID_API_KEY');
  });

  it('a key of a deleted organization gives 401 INVALID_API_KEY', async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey();
    expect((await me(bearer(key))).statusCode).toBe(200);
    expect((await req('DELETE', `/v1/admin/organizations/${a.orgId}`, bearer(t.rootKey))).statusCode).toBe(200);
    errorOf(await me(bearer(key)), 401, 'INVALID_API_KEY');
  });

  it('a legacy key (scopes NULL) has its creator\'s full role and carries the Deprecation header', async () => {
    const a = await newTenant(t.app);
    const { id, key } = (await createKey(a.auth, { scopes: ['projects:read'] })).json().data;
    await t.platform.db.sys.exec(`UPDATE api_keys SET scopes = NULL WHERE id = $1`, [id]);
    const res = await me(bearer(key));
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBeDefined();
    expect(res.json().data.credential).toMatchObject({ kind: 'api_key', scopes: null, legacy: true });
    const put = await req('PUT', '/v1/organizations/current', bearer(key), { name: 'Legacy did it' });
    expect(put.statusCode).toBe(200);
    expect(put.headers.deprecation).toBeDefined();
    // errors carry it too
    const bad = await req('PUT', '/v1/organizations/current', bearer(key), {});
    expect(bad.statusCode).toBe(400);
    expect(bad.headers.deprecation).toBeDefined();
    // a legacy key may mint any scope its role allows
    expect((await createKey(bearer(key), { scopes: ['documents:write'], expires_at: inDays(7) })).statusCode).toBe(201);
    const scoped = await me(bearer(await a.apiKey(['projects:read'])));
    expect(scoped.headers.deprecation).toBeUndefined();
  });

  it('Deprecation header: exactly "@1767225600" (RFC 9745: deprecated since 2026-01-01T00:00:00Z) for a legacy key, on successes and errors; none for scoped keys and session JWTs', async () => {
    expect(new Date(1767225600 * 1000).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    const a = await newTenant(t.app);
    const { id, key } = (await createKey(a.auth, { scopes: ['projects:read'] })).json().data;
    await t.platform.db.sys.exec(`UPDATE api_keys SET scopes = NULL WHERE id = $1`, [id]);
    t.platform.credentials.invalidate();
    const legacy = bearer(key);
    const ok = await me(legacy);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.credential).toMatchObject({ legacy: true });
    expect(ok.headers.deprecation).toBe('@1767225600');
    const created = await req('POST', '/v1/projects', legacy, { name: 'Legacy project' });
    expect(created.statusCode).toBe(201);
    expect(created.headers.deprecation).toBe('@1767225600');
    // errors: a validation error, a missing resource, and a refusal by the route's needs (root only)
    const invalid = await req('PUT', '/v1/organizations/current', legacy, {});
    errorOf(invalid, 400, 'VALIDATION_ERROR');
    expect(invalid.headers.deprecation).toBe('@1767225600');
    const missing = await req('DELETE', '/v1/api-keys/00000000-0000-4000-8000-000000000000', legacy);
    errorOf(missing, 404, 'NOT_FOUND');
    expect(missing.headers.deprecation).toBe('@1767225600');
    const refused = await req('GET', '/v1/admin/organizations', legacy);
    expect(refused.statusCode).toBe(403);
    expect(refused.headers.deprecation).toBe('@1767225600');
    // Routes that need no credential and unknown paths too, cached key or not.
    for (const url of ['/v1/health', '/v1/pricing', '/v1/no-such-route']) {
      t.platform.credentials.invalidate();
      const res = await req('GET', url, legacy);
      expect(res.headers.deprecation, url).toBe('@1767225600');
      expect((await req('GET', url, legacy)).headers.deprecation, `${url} (cached)`).toBe('@1767225600');
      expect((await req('GET', url, bearer(await a.apiKey(['projects:read'])))).headers.deprecation, url).toBeUndefined();
      expect((await req('GET', url, { authorization: 'Bearer svc_live_nope_0123' })).statusCode, url).not.toBe(401);
    }

    const scoped = bearer(await a.apiKey(['projects:read']));
    const scopedOk = await me(scoped);
    expect(scopedOk.statusCode).toBe(200);
    expect(scopedOk.headers).not.toHaveProperty('deprecation');
    const scopedDenied = await req('POST', '/v1/projects', scoped, { name: 'Not allowed' });
    expect(scopedDenied.statusCode).toBe(403);
    expect(scopedDenied.headers).not.toHaveProperty('deprecation');
    const sessionOk = await me(a.auth);
    expect(sessionOk.statusCode).toBe(200);
    expect(sessionOk.headers).not.toHaveProperty('deprecation');
    const sessionErr = await req('PUT', '/v1/organizations/current', a.auth, {});
    errorOf(sessionErr, 400, 'VALIDATION_ERROR');
    expect(sessionErr.headers).not.toHaveProperty('deprecation');
  });

  it('POST with scopes null creates a legacy key (design: null = legacy); a scoped key cannot create one', async () => {
    const a = await newTenant(t.app);
    const created = await createKey(a.auth, { scopes: null });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ scopes: null, key: expect.stringMatching(/^svc_live_/) });
    const res = await me(bearer(created.json().data.key));
    expect(res.headers.deprecation).toBeDefined();
    expect(res.json().data.credential).toMatchObject({ scopes: null, legacy: true });
    const scoped = await a.apiKey(['projects:read']);
    errorOf(await createKey(bearer(scoped), { scopes: null }), 403, 'FORBIDDEN');
  });

  it('POST without scopes creates a legacy key too (spec 4.2, 9: "keys without explicit scopes"); a scoped key cannot', async () => {
    const a = await newTenant(t.app);
    const created = await req('POST', '/v1/api-keys', a.auth, { name: 'no scopes given', expires_at: inDays(30) });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ scopes: null, key: expect.stringMatching(/^svc_live_/) });
    const res = await me(bearer(created.json().data.key));
    expect(res.headers.deprecation).toBe('@1767225600');
    expect(res.json().data.credential).toMatchObject({ scopes: null, legacy: true });
    const scoped = bearer(await a.apiKey(['settings:write']));
    errorOf(await req('POST', '/v1/api-keys', scoped, { name: 'escalate', expires_at: inDays(30) }), 403, 'FORBIDDEN');
  });

  it('records last_used_at', async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey();
    const id = await keyIdOf(key);
    await expect.poll(async () => (await t.platform.db.sys.one<{ last_used_at: string | null }>(`SELECT last_used_at FROM api_keys WHERE id = $1`, [id]))!.last_used_at).not.toBeNull();
  });
});

describe('latestKeyExpiry', () => {
  it('is the same instant one calendar year ahead; from 29 February, 1 March', async () => {
    const { latestKeyExpiry } = await import('./api-keys.service.js');
    expect(new Date(latestKeyExpiry(Date.parse('2026-11-21T09:22:53.000Z'))).toISOString()).toBe('2027-11-21T09:22:53.000Z');
    expect(new Date(latestKeyExpiry(Date.parse('2028-02-29T12:00:00.000Z'))).toISOString()).toBe('2029-03-01T12:00:00.000Z');
    expect(new Date(latestKeyExpiry(Date.parse('2027-03-01T00:00:00.000Z'))).toISOString()).toBe('2028-03-01T00:00:00.000Z');
  });
});
