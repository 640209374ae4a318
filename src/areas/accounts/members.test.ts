import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, uniqueEmail, type TestApp, type Tenant } from '../../../test/helpers.js';
import { addMember } from './organizations.service.js';
import { systemContext } from './system.js';
import type { AddMemberInput } from './accounts.schemas.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

type Headers = Record<string, string>;
const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const me = (headers: Headers) => req('GET', '/v1/me', headers);
const MEMBERS = '/v1/organizations/current/members';

async function memberOf(a: Tenant, role: string): Promise<Tenant> {
  const u = await newTenant(t.app, { name: role });
  expect((await req('POST', MEMBERS, a.auth, { email: u.email, role })).statusCode).toBe(201);
  const login = (await req('POST', '/v1/auth/login', {}, { email: u.email, password: u.password, organization_id: a.orgId })).json().data;
  const auth = bearer(login.access_token);
  return {
    ...u, orgId: a.orgId, token: login.access_token, refreshToken: login.refresh_token, auth,
    async apiKey(scopes = ['settings:write', 'projects:write']) {
      const r = await req('POST', '/v1/api-keys', auth, { name: 'k', scopes, expires_at: new Date(Date.now() + 86_400_000).toISOString() });
      expect(r.statusCode).toBe(201);
      return r.json().data.key;
    },
  };
}
const auditOf = (orgId: string, action: string) =>
  t.platform.db.sys.query<{ target_id: string; actor_user_id: string; details: Record<string, unknown> }>(`SELECT target_id, actor_user_id, details FROM audit_log WHERE org_id = $1 AND action = $2 ORDER BY id`, [orgId, action]);

describe('GET /v1/organizations/current/members', () => {
  it('lists members with pagination', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(a, 'viewer');
    const res = await req('GET', MEMBERS, a.auth);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination).toEqual({ total: 2, limit: 50, offset: 0, has_more: false });
    expect(body.data).toEqual([
      { user_id: a.userId, email: a.email, name: 'Test User', role: 'owner', created_at: expect.any(String) },
      { user_id: m.userId, email: m.email, name: 'viewer', role: 'viewer', created_at: expect.any(String) },
    ]);
    const page = (await req('GET', `${MEMBERS}?limit=1&offset=1`, m.auth)).json();
    expect(page.pagination).toEqual({ total: 2, limit: 1, offset: 1, has_more: false });
    expect(page.data[0].user_id).toBe(m.userId);
    errorOf(await req('GET', `${MEMBERS}?limit=0`, a.auth), 400, 'INVALID_PARAMETER');
    errorOf(await req('GET', `${MEMBERS}?limit=101`, a.auth), 400, 'INVALID_PARAMETER');
    errorOf(await req('GET', `${MEMBERS}?offset=-1`, a.auth), 400, 'INVALID_PARAMETER');
  });
});

describe('POST /v1/organizations/current/members', () => {
  it('adds an existing user (201), who can then sign in to the organization', async () => {
    const a = await newTenant(t.app);
    const u = await newTenant(t.app);
    const res = await req('POST', MEMBERS, a.auth, { email: u.email.toUpperCase(), role: 'admin' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toEqual({ user_id: u.userId, email: u.email, name: 'Test User', role: 'admin', created_at: expect.any(String) });
    const login = await req('POST', '/v1/auth/login', {}, { email: u.email, password: u.password, organization_id: a.orgId });
    expect(login.json().data.organization).toMatchObject({ id: a.orgId, role: 'admin' });
    const audit = await auditOf(a.orgId, 'member.added');
    expect(audit.map((r) => [r.target_id, r.actor_user_id, r.details.role])).toEqual([[u.userId, a.userId, 'admin']]);
    errorOf(await req('POST', MEMBERS, a.auth, { email: u.email, role: 'member' }), 409, 'CONFLICT');
  });

  it('invites an unknown e-mail as an account without password', async () => {
    const a = await newTenant(t.app);
    const email = uniqueEmail('Invitee');
    const res = await req('POST', MEMBERS, a.auth, { email, role: 'member', name: 'New Person' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ email: email.toLowerCase(), name: 'New Person', role: 'member' });
    const row = await t.platform.db.sys.one<{ password_hash: string | null }>(`SELECT password_hash FROM users WHERE id = $1`, [res.json().data.user_id]);
    expect(row!.password_hash).toBeNull();
    expect((await auditOf(a.orgId, 'user.created')).map((r) => r.details)).toEqual([{ email: email.toLowerCase(), invited: true }]);
    const noName = (await req('POST', MEMBERS, a.auth, { email: uniqueEmail('plain'), role: 'viewer' })).json().data;
    expect(noName.name).toMatch(/^plain-/);
  });

  it('the plan\'s member limit holds (academic_free: 5): past it 403 FORBIDDEN MEMBER_LIMIT_REACHED, under concurrent adds, for existing accounts and the CLI too', async () => {
    const a = await newTenant(t.app);
    await t.platform.db.sys.exec(`UPDATE organizations SET plan_tier = 'academic_free' WHERE id = $1`, [a.orgId]);
    expect((await req('POST', MEMBERS, a.auth, { email: uniqueEmail(), role: 'viewer' })).statusCode).toBe(201);
    // 2 members (the owner and a viewer): of 10 concurrent additions exactly 3 fit.
    const answers = await Promise.all(Array.from({ length: 10 }, () => req('POST', MEMBERS, a.auth, { email: uniqueEmail(), role: 'viewer' })));
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(3);
    const refused = answers.filter((r) => r.statusCode !== 201);
    expect(refused).toHaveLength(7);
    const limit = { code: 'MEMBER_LIMIT_REACHED', limit: 5, plan_tier: 'academic_free' };
    for (const r of refused) expect(errorOf(r, 403, 'FORBIDDEN').details).toEqual(limit);
    // An existing account, and the operator's CLI (a system context), are refused alike; no invited account is left behind.
    const other = await newTenant(t.app);
    expect(errorOf(await req('POST', MEMBERS, a.auth, { email: other.email, role: 'member' }), 403, 'FORBIDDEN').details).toEqual(limit);
    const cliEmail = uniqueEmail();
    await expect(addMember(systemContext(t.platform, 'cli'), { email: cliEmail, role: 'member' } as AddMemberInput, { orgId: a.orgId })).rejects.toMatchObject({ code: 'FORBIDDEN', details: limit });
    expect(await t.platform.db.sys.one(`SELECT 1 FROM users WHERE email = $1`, [cliEmail])).toBeUndefined();
    expect((await req('GET', MEMBERS, a.auth)).json().pagination.total).toBe(5);
    // Removing one frees a seat.
    const viewer = (await req('GET', MEMBERS, a.auth)).json().data.find((m: { role: string }) => m.role === 'viewer');
    expect((await req('DELETE', `${MEMBERS}/${viewer.user_id}`, a.auth)).statusCode).toBe(200);
    expect((await req('POST', MEMBERS, a.auth, { email: other.email, role: 'member' })).statusCode).toBe(201);
  });

  it('validates the body and guards who grants which role', async () => {
    const a = await newTenant(t.app);
    for (const body of [{ email: 'x', role: 'member' }, { email: uniqueEmail(), role: 'king' }, { email: uniqueEmail() }, { email: uniqueEmail(), role: 'member', org_id: a.orgId }]) {
      errorOf(await req('POST', MEMBERS, a.auth, body), 400, 'VALIDATION_ERROR');
    }
    errorOf(await req('POST', MEMBERS, a.auth, { email: uniqueEmail(), role: 'super_admin' }), 400, 'VALIDATION_ERROR');
    const member = await memberOf(a, 'member');
    errorOf(await req('POST', MEMBERS, member.auth, { email: uniqueEmail(), role: 'viewer' }), 403, 'PERMISSION_DENIED');
    const admin = await memberOf(a, 'admin');
    errorOf(await req('POST', MEMBERS, admin.auth, { email: uniqueEmail(), role: 'owner' }), 403, 'PERMISSION_DENIED');
    expect((await req('POST', MEMBERS, admin.auth, { email: uniqueEmail(), role: 'admin' })).statusCode).toBe(201);
    errorOf(await req('POST', MEMBERS, bearer(await a.apiKey(['projects:write'])), { email: uniqueEmail(), role: 'viewer' }), 403, 'FORBIDDEN');
  });
});

describe('PUT /v1/organizations/current/members/{userId}', () => {
  it("changes a role (visible at once to the member's credentials) and audits it", async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(a, 'viewer');
    const key = await m.apiKey(['settings:read']);
    expect((await me(m.auth)).json().data.role).toBe('viewer');
    expect((await me(bearer(key))).json().data.role).toBe('viewer');
    const res = await req('PUT', `${MEMBERS}/${m.userId}`, a.auth, { role: 'admin' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ user_id: m.userId, role: 'admin' });
    expect((await me(m.auth)).json().data).toMatchObject({ role: 'admin', permissions: expect.arrayContaining(['org.manage_members']) });
    expect((await me(bearer(key))).json().data.role).toBe('admin');
    const audit = await auditOf(a.orgId, 'member.role_changed');
    expect(audit.map((r) => [r.target_id, r.details])).toEqual([[m.userId, { from: 'viewer', to: 'admin' }]]);
  });

  it('refuses to demote the last owner (409 CONFLICT); works once there is another owner', async () => {
    const a = await newTenant(t.app);
    errorOf(await req('PUT', `${MEMBERS}/${a.userId}`, a.auth, { role: 'admin' }), 409, 'CONFLICT');
    const b = await memberOf(a, 'admin');
    expect((await req('PUT', `${MEMBERS}/${b.userId}`, a.auth, { role: 'owner' })).statusCode).toBe(200);
    expect((await req('PUT', `${MEMBERS}/${a.userId}`, a.auth, { role: 'member' })).statusCode).toBe(200);
    errorOf(await req('PUT', `${MEMBERS}/${b.userId}`, b.auth, { role: 'viewer' }), 409, 'CONFLICT');
  });

  it('admins cannot change owners or make owners (403 PERMISSION_DENIED)', async () => {
    const a = await newTenant(t.app);
    const admin = await memberOf(a, 'admin');
    const m = await memberOf(a, 'member');
    errorOf(await req('PUT', `${MEMBERS}/${a.userId}`, admin.auth, { role: 'member' }), 403, 'PERMISSION_DENIED');
    errorOf(await req('PUT', `${MEMBERS}/${m.userId}`, admin.auth, { role: 'owner' }), 403, 'PERMISSION_DENIED');
    errorOf(await req('PUT', `${MEMBERS}/${m.userId}`, m.auth, { role: 'admin' }), 403, 'PERMISSION_DENIED');
    errorOf(await req('PUT', `${MEMBERS}/${m.userId}`, a.auth, { role: 'super_admin' }), 400, 'VALIDATION_ERROR');
  });

  it('404 for non-members and other tenants, 400 for bad ids and bodies', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const bm = await memberOf(b, 'member');
    errorOf(await req('PUT', `${MEMBERS}/${bm.userId}`, a.auth, { role: 'viewer' }), 404, 'NOT_FOUND');
    errorOf(await req('PUT', `${MEMBERS}/0190a000-0000-7000-8000-000000000000`, a.auth, { role: 'viewer' }), 404, 'NOT_FOUND');
    errorOf(await req('PUT', `${MEMBERS}/not-a-uuid`, a.auth, { role: 'viewer' }), 400, 'INVALID_ID_FORMAT');
    errorOf(await req('PUT', `${MEMBERS}/${a.userId}`, a.auth, { role: 'owner', email: 'x@y.z' }), 400, 'VALIDATION_ERROR');
    expect((await me(bm.auth)).json().data.role).toBe('member');
  });
});

describe('DELETE /v1/organizations/current/members/{userId}', () => {
  it("removes a member (200 {user_id, removed}): their old token and API keys fail at once, and keys stay revoked", async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(a, 'member');
    const key = await m.apiKey();
    expect((await me(m.auth)).statusCode).toBe(200); // warm the credential cache
    expect((await me(bearer(key))).statusCode).toBe(200);
    const res = await req('DELETE', `${MEMBERS}/${m.userId}`, a.auth);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { user_id: m.userId, removed: true } });
    errorOf(await me(m.auth), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(bearer(key)), 401, 'INVALID_API_KEY');
    errorOf(await req('POST', '/v1/auth/refresh', {}, { refresh_token: m.refreshToken }), 401, 'AUTH_TOKEN_INVALID');
    const audit = await auditOf(a.orgId, 'member.removed');
    expect(audit.map((r) => [r.target_id, r.details])).toEqual([[m.userId, { role: 'member', api_keys_revoked: 1 }]]);
    // invited again: the old key does not come back
    expect((await req('POST', MEMBERS, a.auth, { email: m.email, role: 'member' })).statusCode).toBe(201);
    errorOf(await me(bearer(key)), 401, 'INVALID_API_KEY');
    // their own organization is untouched
    const own = await req('POST', '/v1/auth/login', {}, { email: m.email, password: m.password });
    expect(own.statusCode).toBe(200);
  });

  it('refuses to remove the last owner (409 CONFLICT), even as self', async () => {
    const a = await newTenant(t.app);
    errorOf(await req('DELETE', `${MEMBERS}/${a.userId}`, a.auth), 409, 'CONFLICT');
    const b = await memberOf(a, 'owner');
    expect((await req('DELETE', `${MEMBERS}/${a.userId}`, b.auth)).statusCode).toBe(200);
    errorOf(await req('DELETE', `${MEMBERS}/${b.userId}`, b.auth), 409, 'CONFLICT');
  });

  it('members may leave but not remove others; admins cannot remove owners', async () => {
    const a = await newTenant(t.app);
    const m1 = await memberOf(a, 'member');
    const m2 = await memberOf(a, 'member');
    const admin = await memberOf(a, 'admin');
    errorOf(await req('DELETE', `${MEMBERS}/${m2.userId}`, m1.auth), 403, 'PERMISSION_DENIED');
    errorOf(await req('DELETE', `${MEMBERS}/${a.userId}`, admin.auth), 403, 'PERMISSION_DENIED');
    expect((await req('DELETE', `${MEMBERS}/${m1.userId}`, m1.auth)).statusCode).toBe(200);
    errorOf(await me(m1.auth), 401, 'AUTH_TOKEN_INVALID');
    expect((await req('DELETE', `${MEMBERS}/${m2.userId}`, admin.auth)).statusCode).toBe(200);
    errorOf(await req('DELETE', `${MEMBERS}/${m2.userId}`, admin.auth), 404, 'NOT_FOUND');
    errorOf(await req('DELETE', `${MEMBERS}/nope`, admin.auth), 400, 'INVALID_ID_FORMAT');
  });

  it('another tenant gets 404 and nothing changes', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    errorOf(await req('DELETE', `${MEMBERS}/${b.userId}`, a.auth), 404, 'NOT_FOUND');
    expect((await me(b.auth)).statusCode).toBe(200);
  });
});

describe('super-admins of the root organization', () => {
  it('only a super-admin demotes or removes another super-admin: a root owner gets 403 and nothing changes', async () => {
    const root = bearer(t.rootKey);
    const admin = await newTenant(t.app, { name: 'sa' });
    const owner = await newTenant(t.app, { name: 'ro' });
    try {
      expect((await req('POST', MEMBERS, root, { email: admin.email, role: 'super_admin' })).statusCode).toBe(201);
      expect((await req('POST', MEMBERS, root, { email: owner.email, role: 'owner' })).statusCode).toBe(201);
      const rootOrgId = (await me(root)).json().data.organization.id;
      const login = (await req('POST', '/v1/auth/login', {}, { email: owner.email, password: owner.password, organization_id: rootOrgId })).json().data;
      const asOwner = bearer(login.access_token);
      expect(errorOf(await req('PUT', `${MEMBERS}/${admin.userId}`, asOwner, { role: 'member' }), 403, 'PERMISSION_DENIED').message).toContain('super-admin');
      errorOf(await req('DELETE', `${MEMBERS}/${admin.userId}`, asOwner), 403, 'PERMISSION_DENIED');
      const still = (await req('GET', `${MEMBERS}?limit=100`, root)).json().data.find((m: { user_id: string }) => m.user_id === admin.userId);
      expect(still.role).toBe('super_admin');
      // A super-admin may: the root key acts as one.
      expect((await req('PUT', `${MEMBERS}/${admin.userId}`, root, { role: 'member' })).json().data.role).toBe('member');
    } finally {
      await req('DELETE', `${MEMBERS}/${admin.userId}`, root);
      await req('DELETE', `${MEMBERS}/${owner.userId}`, root);
    }
  });

  it('the last super-admin cannot be demoted or removed (409), by anyone', async () => {
    const { assertSuperAdminChange } = await import('./organizations.service.js');
    const sqlWith = (others: number) => ({ one: async () => ({ n: others }) }) as never;
    const superAdmin = { userId: 'u-1', orgId: 'o', role: 'super_admin' } as never;
    await expect(assertSuperAdminChange(sqlWith(0), superAdmin, 'u-1', 'super_admin')).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(assertSuperAdminChange(sqlWith(0), superAdmin, 'u-2', 'super_admin')).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(assertSuperAdminChange(sqlWith(1), superAdmin, 'u-2', 'super_admin')).resolves.toBeUndefined();
    await expect(assertSuperAdminChange(sqlWith(0), superAdmin, 'u-2', 'owner')).resolves.toBeUndefined();
  });
});
