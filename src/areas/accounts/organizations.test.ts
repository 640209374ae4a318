import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, uniqueEmail, STRONG_PASSWORD, type TestApp, type Tenant } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

type Headers = Record<string, string>;
const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const me = (headers: Headers) => req('GET', '/v1/me', headers);

/** Registers a user and makes them a member of a's organization with `role`; returns their session bound to it. */
async function memberOf(a: Tenant, role: string): Promise<Tenant> {
  const u = await newTenant(t.app, { name: role });
  expect((await req('POST', '/v1/organizations/current/members', a.auth, { email: u.email, role })).statusCode).toBe(201);
  const login = (await req('POST', '/v1/auth/login', {}, { email: u.email, password: u.password, organization_id: a.orgId })).json().data;
  return { ...u, orgId: a.orgId, token: login.access_token, refreshToken: login.refresh_token, auth: bearer(login.access_token) };
}

describe('GET /v1/organizations', () => {
  it("lists the caller's organizations with their role", async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    await req('POST', '/v1/organizations/current/members', b.auth, { email: a.email, role: 'viewer' });
    const res = await req('GET', '/v1/organizations', a.auth);
    expect(res.statusCode).toBe(200);
    const list = res.json().data as Array<{ id: string; role: string }>;
    expect(list.map((o) => [o.id, o.role])).toEqual([[a.orgId, 'owner'], [b.orgId, 'viewer']]);
    // a list: spec 2.1 pagination object, limit/offset paging
    expect(res.json().pagination).toEqual({ total: 2, limit: 50, offset: 0, has_more: false });
    const page = (await req('GET', '/v1/organizations?limit=1&offset=1', a.auth)).json();
    expect(page.data.map((o: { id: string }) => o.id)).toEqual([b.orgId]);
    expect(page.pagination).toEqual({ total: 2, limit: 1, offset: 1, has_more: false });
    errorOf(await req('GET', '/v1/organizations?limit=101', a.auth), 400, 'INVALID_PARAMETER');
    // an API key sees only its own organization
    const viaKey = (await req('GET', '/v1/organizations', bearer(await a.apiKey()))).json().data;
    expect(viaKey.map((o: { id: string }) => o.id)).toEqual([a.orgId]);
    // ... and only with settings:read, as for /current (the organization's settings are in the answer)
    errorOf(await req('GET', '/v1/organizations', bearer(await a.apiKey(['documents:read']))), 403, 'FORBIDDEN');
    errorOf(await req('GET', '/v1/organizations', {}), 401, 'AUTH_REQUIRED');
  });
});

describe('POST /v1/organizations', () => {
  it('creates an organization (201) whose owner is the caller', async () => {
    const a = await newTenant(t.app);
    const slug = `org-${Date.now().toString(36)}`;
    const res = await req('POST', '/v1/organizations', a.auth, { name: '  Second Org  ', slug });
    expect(res.statusCode).toBe(201);
    const o = res.json().data;
    expect(o).toMatchObject({ id: expect.any(String), name: 'Second Org', slug, role: 'owner', is_root: false, settings: {}, session_duration_days: 30 });
    expect(o.created_at).toMatch(/Z$/);
    const audit = await t.platform.db.sys.one(`SELECT 1 FROM audit_log WHERE org_id = $1 AND action = 'organization.created' AND actor_user_id = $2`, [o.id, a.userId]);
    expect(audit).toBeDefined();
    errorOf(await req('POST', '/v1/organizations', a.auth, { name: 'Dup', slug }), 409, 'CONFLICT');
  });

  it('new organizations (sign-up and create) get DEFAULT_PLAN_TIER, DEFAULT_FEATURES and DEFAULT_SUBSCRIPTION_STATUS', async () => {
    const other = await buildTestApp({ defaultPlanTier: 'team', defaultFeatures: ['documents', 'mcp'], defaultSubscriptionStatus: 'none' });
    try {
      const a = await newTenant(other.app);
      const expected = { plan_tier: 'team', features: ['documents', 'mcp'], subscription_status: 'none' };
      expect((await other.app.inject({ url: '/v1/me', headers: a.auth })).json().data.organization).toMatchObject(expected);
      const created = await other.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth, payload: { name: 'Defaults' } });
      expect(created.statusCode).toBe(201);
      expect(created.json().data).toMatchObject(expected);
    } finally { await other.close(); }
  });

  it('generates a unique slug from the name when omitted', async () => {
    const a = await newTenant(t.app);
    const one = (await req('POST', '/v1/organizations', a.auth, { name: 'Ünïcode Name!' })).json().data;
    const two = (await req('POST', '/v1/organizations', a.auth, { name: 'Ünïcode Name!' })).json().data;
    expect(one.slug).toMatch(/^unicode-name/);
    expect(two.slug).toMatch(/^unicode-name/);
    expect(one.slug).not.toBe(two.slug);
  });

  it('organizations created at once from one name all get distinct generated slugs; one explicit slug wins, the others 409', async () => {
    const a = await newTenant(t.app);
    const name = `Same Moment ${Date.now()}`;
    const made = await Promise.all(Array.from({ length: 6 }, () => req('POST', '/v1/organizations', a.auth, { name })));
    expect(made.map((r) => r.statusCode)).toEqual(Array(6).fill(201));
    expect(new Set(made.map((r) => r.json().data.slug)).size).toBe(6);
    const slug = `explicit-${Date.now()}`;
    const claimed = await Promise.all(Array.from({ length: 4 }, () => req('POST', '/v1/organizations', a.auth, { name: 'x', slug })));
    expect(claimed.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
    for (const r of claimed.filter((x) => x.statusCode === 409)) expect(errorOf(r, 409, 'CONFLICT').message).toBe(`Organization slug "${slug}" is taken`);
    // Sign-ups naming the same organization at once: all succeed.
    const orgName = `Signup Moment ${Date.now()}`;
    const signups = await Promise.all(Array.from({ length: 6 }, () => req('POST', '/v1/auth/register', {}, { email: uniqueEmail(), password: STRONG_PASSWORD, name: 'R', organization_name: orgName })));
    expect(signups.map((r) => r.statusCode)).toEqual(Array(6).fill(201));
    expect(new Set(signups.map((r) => r.json().data.organization.slug)).size).toBe(6);
  });

  it('rejects bad slugs and bodies with 400 VALIDATION_ERROR', async () => {
    const a = await newTenant(t.app);
    expect(errorOf(await req('POST', '/v1/organizations', a.auth, { name: 'X', slug: 'admin' }), 400, 'VALIDATION_ERROR').message).toContain('RESERVED_SLUG');
    for (const slug of ['Upper', 'a--b', '-a', 'a_b', '0190a000-0000-7000-8000-000000000000', 'a'.repeat(257), 'a'.repeat(300), '']) {
      expect(errorOf(await req('POST', '/v1/organizations', a.auth, { name: 'X', slug }), 400, 'VALIDATION_ERROR').message).toContain('INVALID_FORMAT');
    }
    errorOf(await req('POST', '/v1/organizations', a.auth, { name: '' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', '/v1/organizations', a.auth, { name: ' \t ' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', '/v1/organizations', a.auth, { name: 'X', plan_tier: 'enterprise' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', '/v1/organizations', a.auth, { name: 'X', id: a.orgId }), 400, 'VALIDATION_ERROR');
  });

  it('is for signed-in users: API keys get 403 FORBIDDEN', async () => {
    const a = await newTenant(t.app);
    errorOf(await req('POST', '/v1/organizations', bearer(await a.apiKey()), { name: 'By key' }), 403, 'FORBIDDEN');
  });
});

describe('GET and PUT /v1/organizations/current', () => {
  it('reads the organization of the credential', async () => {
    const a = await newTenant(t.app);
    const res = await req('GET', '/v1/organizations/current', a.auth);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: a.orgId, role: 'owner', is_root: false });
  });

  it('updates name, settings and session length; audit row written', async () => {
    const a = await newTenant(t.app);
    const res = await req('PUT', '/v1/organizations/current', a.auth, { name: 'Renamed', settings: { theme: 'dark', nested: { a: 1 } }, session_duration_days: 7 });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: a.orgId, name: 'Renamed', settings: { theme: 'dark', nested: { a: 1 } }, session_duration_days: 7 });
    expect((await req('GET', '/v1/organizations/current', a.auth)).json().data.name).toBe('Renamed');
    expect((await me(a.auth)).json().data.organization.name).toBe('Renamed');
    // a new session lasts session_duration_days
    const login = (await req('POST', '/v1/auth/login', {}, { email: a.email, password: a.password })).json().data;
    const sid = (await me(bearer(login.access_token))).json().data.credential.session_id;
    const s = await t.platform.db.sys.one<{ days: number }>(`SELECT round(extract(epoch FROM expires_at - created_at) / 86400)::int AS days FROM sessions WHERE id = $1`, [sid]);
    expect(s!.days).toBe(7);
    const audit = await t.platform.db.sys.one<{ details: { fields: string[] } }>(`SELECT details FROM audit_log WHERE org_id = $1 AND action = 'organization.updated'`, [a.orgId]);
    expect(audit!.details.fields.sort()).toEqual(['name', 'session_duration_days', 'settings']);
  });

  it('settings keys outside 1-200 characters are 400 VALIDATION_ERROR (KEY_LENGTH) and nothing is written', async () => {
    const a = await newTenant(t.app);
    for (const key of ['', 'k'.repeat(201)]) {
      const e = errorOf(await req('PUT', '/v1/organizations/current', a.auth, { name: 'Changed', settings: { [key]: 1 } }), 400, 'VALIDATION_ERROR');
      expect(e.details).toMatchObject({ field: 'settings', reason: 'KEY_LENGTH', minLength: 1, maxLength: 200 });
    }
    expect((await req('GET', '/v1/organizations/current', a.auth)).json().data).toMatchObject({ settings: {} });
    expect((await req('GET', '/v1/organizations/current', a.auth)).json().data.name).not.toBe('Changed');
    expect((await req('PUT', '/v1/organizations/current', a.auth, { settings: { ['k'.repeat(200)]: 1 } })).statusCode).toBe(200);
  });

  it('rejects bad bodies', async () => {
    const a = await newTenant(t.app);
    for (const body of [{}, { slug: 'x' }, { id: a.orgId }, { features: ['documents'] }, { session_duration_days: 0 }, { session_duration_days: 366 }, { session_duration_days: '7' }, { settings: [] }, { name: '  ' }]) {
      errorOf(await req('PUT', '/v1/organizations/current', a.auth, body), 400, 'VALIDATION_ERROR');
    }
  });

  it('needs org.manage_settings (403 PERMISSION_DENIED) and, for keys, settings:write (403 FORBIDDEN)', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(a, 'member');
    errorOf(await req('PUT', '/v1/organizations/current', m.auth, { name: 'Nope' }), 403, 'PERMISSION_DENIED');
    errorOf(await req('PUT', '/v1/organizations/current', bearer(await a.apiKey(['projects:write'])), { name: 'Nope' }), 403, 'FORBIDDEN');
    expect((await req('PUT', '/v1/organizations/current', bearer(await a.apiKey(['settings:write'])), { name: 'By key' })).statusCode).toBe(200);
  });

  it('reading the organization and its members needs settings:read for keys (403 FORBIDDEN for a projects key)', async () => {
    const a = await newTenant(t.app);
    const projectsKey = bearer(await a.apiKey(['projects:read']));
    const settingsKey = bearer(await a.apiKey(['settings:read']));
    for (const url of ['/v1/organizations/current', '/v1/organizations/current/members']) {
      expect(errorOf(await req('GET', url, projectsKey), 403, 'FORBIDDEN').details).toMatchObject({ requiredScope: 'settings:read' });
      expect((await req('GET', url, settingsKey)).statusCode).toBe(200);
      expect((await req('GET', url, a.auth)).statusCode).toBe(200);
    }
  });
});

describe('DELETE /v1/organizations/current', () => {
  it("soft-deletes the owner's organization; its sessions and keys stop working at once", async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey();
    const m = await memberOf(a, 'admin');
    expect((await me(bearer(key))).statusCode).toBe(200); // warm the cache
    errorOf(await req('DELETE', '/v1/organizations/current', m.auth), 403, 'PERMISSION_DENIED');
    errorOf(await req('DELETE', '/v1/organizations/current', bearer(key)), 403, 'FORBIDDEN');
    const res = await req('DELETE', '/v1/organizations/current', a.auth);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: a.orgId, deleted: true });
    errorOf(await me(a.auth), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(m.auth), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(bearer(key)), 401, 'INVALID_API_KEY');
    errorOf(await req('POST', '/v1/auth/refresh', {}, { refresh_token: a.refreshToken }), 401, 'AUTH_TOKEN_INVALID');
    // the member still signs in, into none of a's organization
    errorOf(await req('POST', '/v1/auth/login', {}, { email: m.email, password: m.password, organization_id: a.orgId }), 404, 'NOT_FOUND');
    expect((await req('POST', '/v1/auth/login', {}, { email: m.email, password: m.password })).statusCode).toBe(200);
    const audit = await t.platform.db.sys.one(`SELECT 1 FROM audit_log WHERE org_id = $1 AND action = 'organization.deleted'`, [a.orgId]);
    expect(audit).toBeDefined();
  });

  it('an owner of no remaining organization cannot sign in (403 FORBIDDEN)', async () => {
    const email = uniqueEmail('lonely');
    const reg = (await req('POST', '/v1/auth/register', {}, { email, password: STRONG_PASSWORD, name: 'L', organization_name: 'L' })).json().data;
    expect((await req('DELETE', '/v1/organizations/current', bearer(reg.access_token))).statusCode).toBe(200);
    errorOf(await req('POST', '/v1/auth/login', {}, { email, password: STRONG_PASSWORD }), 403, 'FORBIDDEN');
  });
});
