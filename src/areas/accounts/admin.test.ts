import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp } from '../../../test/helpers.js';
import { checkNeeds } from '../../core/http/guard.js';
import { ROLE_PERMISSIONS, type Role } from '../../core/auth/permissions.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { sha256Hex } from '../../core/crypto.js';

let t: TestApp;
let root: Record<string, string>;
beforeAll(async () => { t = await buildTestApp(); root = bearer(t.rootKey); });
afterAll(async () => { await t.close(); });

type Headers = Record<string, string>;
const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const me = (headers: Headers) => req('GET', '/v1/me', headers);
const RANDOM_ID = '0190a000-0000-7000-8000-000000000000';

describe('admin access', () => {
  it('the root key reads /v1/me as the root super-admin with every scope', async () => {
    const d = (await me(root)).json().data;
    expect(d).toMatchObject({ role: 'super_admin', organization: { is_root: true }, credential: { kind: 'api_key', legacy: false } });
    expect(d.credential.scopes).toEqual(expect.arrayContaining(['admin', 'mcp:*', 'vision', 'projects:write']));
    expect(d.permissions).toContain('platform.admin');
  });

  it('tenants, their keys and non-super-admin members of the root organization get 403 FORBIDDEN', async () => {
    const a = await newTenant(t.app);
    const routes: Array<['GET' | 'PUT' | 'POST' | 'DELETE', string, unknown?]> = [
      ['GET', '/v1/admin/organizations'],
      ['PUT', `/v1/admin/organizations/${a.orgId}/entitlements`, { plan_tier: 'enterprise' }],
      ['POST', `/v1/admin/organizations/${a.orgId}/scim-tokens`, { name: 'x' }],
      ['DELETE', `/v1/admin/organizations/${a.orgId}`],
    ];
    const rootAdmin = await newTenant(t.app, { name: 'rootadmin' });
    expect((await req('POST', '/v1/organizations/current/members', root, { email: rootAdmin.email, role: 'admin' })).statusCode).toBe(201);
    const rootOrgId = (await me(root)).json().data.organization.id;
    const login = (await req('POST', '/v1/auth/login', {}, { email: rootAdmin.email, password: rootAdmin.password, organization_id: rootOrgId })).json().data;
    // a root-organization key without the admin scope
    const rootScoped = (await req('POST', '/v1/api-keys', root, { name: 'no admin', scopes: ['settings:write'], expires_at: new Date(Date.now() + 86_400_000).toISOString() })).json().data.key;
    for (const who of [a.auth, bearer(await a.apiKey(['settings:write'])), bearer(login.access_token), bearer(rootScoped)]) {
      for (const [method, url, body] of routes) errorOf(await req(method, url, who, body), 403, 'FORBIDDEN');
    }
    errorOf(await req('GET', '/v1/admin/organizations', {}), 401, 'AUTH_REQUIRED');
    expect((await me(a.auth)).statusCode).toBe(200);
  });

  it('only a root super-admin can mint a key with the admin scope', async () => {
    const res = await req('POST', '/v1/api-keys', root, { name: 'ops', scopes: ['admin'], expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    expect(res.statusCode).toBe(201);
    expect((await req('GET', '/v1/admin/organizations', bearer(res.json().data.key))).statusCode).toBe(200);
  });
});

describe('GET /v1/admin/organizations', () => {
  it('lists every organization with offset pagination', async () => {
    const a = await newTenant(t.app);
    const first = await req('GET', '/v1/admin/organizations?limit=100', root);
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.pagination).toMatchObject({ limit: 100, offset: 0 });
    expect(body.pagination.total).toBeGreaterThanOrEqual(2);
    let ids: string[] = body.data.map((o: { id: string }) => o.id);
    for (let offset = 100; body.pagination.total > offset; offset += 100) {
      ids = ids.concat((await req('GET', `/v1/admin/organizations?limit=100&offset=${offset}`, root)).json().data.map((o: { id: string }) => o.id));
    }
    expect(ids).toContain(a.orgId);
    expect(body.data.find((o: { is_root: boolean }) => o.is_root)).toBeDefined();
    const page = (await req('GET', '/v1/admin/organizations?limit=1&offset=1', root)).json();
    expect(page.data).toHaveLength(1);
    expect(page.pagination).toMatchObject({ limit: 1, offset: 1, has_more: page.pagination.total > 2 });
    errorOf(await req('GET', '/v1/admin/organizations?limit=1000', root), 400, 'INVALID_PARAMETER');
    errorOf(await req('GET', '/v1/admin/organizations?offset=x', root), 400, 'INVALID_PARAMETER');
  });
});

describe('PUT /v1/admin/organizations/{orgId}/entitlements', () => {
  it('sets plan tier, subscription status and features, visible at once in /v1/me; audited in the organization', async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey(['projects:read']);
    expect((await me(a.auth)).json().data.organization.features).toContain('chat'); // cached now
    expect((await me(bearer(key))).statusCode).toBe(200);
    const res = await req('PUT', `/v1/admin/organizations/${a.orgId}/entitlements`, root, { plan_tier: 'team', subscription_status: 'past_due', features: ['documents', 'mcp'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: a.orgId, plan_tier: 'team', subscription_status: 'past_due', features: ['documents', 'mcp'] });
    for (const who of [a.auth, bearer(key)]) {
      expect((await me(who)).json().data.organization).toMatchObject({ plan_tier: 'team', subscription_status: 'past_due', features: ['documents', 'mcp'] });
    }
    // a partial update keeps the rest
    const partial = (await req('PUT', `/v1/admin/organizations/${a.orgId}/entitlements`, root, { subscription_status: 'active' })).json().data;
    expect(partial).toMatchObject({ plan_tier: 'team', subscription_status: 'active', features: ['documents', 'mcp'] });
    expect((await me(a.auth)).json().data.organization.subscription_status).toBe('active');
    const audit = await t.platform.db.sys.query<{ details: Record<string, unknown>; actor_api_key_id: string; credential_kind: string }>(
      `SELECT details, actor_api_key_id, credential_kind FROM audit_log WHERE org_id = $1 AND action = 'organization.entitlements_changed' ORDER BY id`, [a.orgId]);
    expect(audit.map((r) => r.details)).toEqual([{ plan_tier: 'team', subscription_status: 'past_due', features: ['documents', 'mcp'] }, { subscription_status: 'active' }]);
    expect(audit[0]).toMatchObject({ credential_kind: 'api_key', actor_api_key_id: (await me(root)).json().data.credential.api_key_id });
    // features can be emptied
    expect((await req('PUT', `/v1/admin/organizations/${a.orgId}/entitlements`, root, { features: [] })).json().data.features).toEqual([]);
  });

  it('validates the body; unknown organization is 404', async () => {
    const a = await newTenant(t.app);
    for (const body of [{}, { plan_tier: 'gold' }, { subscription_status: 'trialing' }, { features: ['teleport'] }, { features: ['chat', 'chat'] }, { is_root: true }]) {
      errorOf(await req('PUT', `/v1/admin/organizations/${a.orgId}/entitlements`, root, body), 400, 'VALIDATION_ERROR');
    }
    errorOf(await req('PUT', `/v1/admin/organizations/${RANDOM_ID}/entitlements`, root, { plan_tier: 'pro' }), 404, 'NOT_FOUND');
    errorOf(await req('PUT', '/v1/admin/organizations/xyz/entitlements', root, { plan_tier: 'pro' }), 400, 'INVALID_ID_FORMAT');
  });
});

describe('POST /v1/admin/organizations/{orgId}/scim-tokens', () => {
  it('creates a token shown once (201), stored hashed and audited', async () => {
    const a = await newTenant(t.app);
    const res = await req('POST', `/v1/admin/organizations/${a.orgId}/scim-tokens`, root, { name: 'Okta' });
    expect(res.statusCode).toBe(201);
    const d = res.json().data;
    expect(d).toEqual({ id: expect.any(String), name: 'Okta', token: expect.stringMatching(/^scim_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/), created_at: expect.any(String) });
    const row = await t.platform.db.sys.one<{ token_hash: string; org_id: string }>(`SELECT token_hash, org_id FROM scim_tokens WHERE id = $1`, [d.id]);
    expect(row).toEqual({ token_hash: sha256Hex(d.token), org_id: a.orgId });
    expect(await t.platform.db.sys.one(`SELECT 1 FROM audit_log WHERE org_id = $1 AND action = 'scim_token.created' AND target_id = $2`, [a.orgId, d.id])).toBeDefined();
    errorOf(await req('POST', `/v1/admin/organizations/${RANDOM_ID}/scim-tokens`, root, { name: 'x' }), 404, 'NOT_FOUND');
    errorOf(await req('POST', `/v1/admin/organizations/${a.orgId}/scim-tokens`, root, {}), 400, 'VALIDATION_ERROR');
    errorOf(await req('POST', `/v1/admin/organizations/${a.orgId}/scim-tokens`, root, { name: 'x', token: 'mine' }), 400, 'VALIDATION_ERROR');
  });
});

describe('DELETE /v1/admin/organizations/{orgId}', () => {
  it('soft-deletes a tenant: its tokens and keys fail at once; it disappears from the list', async () => {
    const a = await newTenant(t.app);
    const key = await a.apiKey();
    expect((await me(a.auth)).statusCode).toBe(200);
    const res = await req('DELETE', `/v1/admin/organizations/${a.orgId}`, root);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: a.orgId, deleted: true });
    errorOf(await me(a.auth), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await me(bearer(key)), 401, 'INVALID_API_KEY');
    errorOf(await req('DELETE', `/v1/admin/organizations/${a.orgId}`, root), 404, 'NOT_FOUND');
    errorOf(await req('PUT', `/v1/admin/organizations/${a.orgId}/entitlements`, root, { plan_tier: 'pro' }), 404, 'NOT_FOUND');
    const rootOrgId = (await me(root)).json().data.organization.id;
    expect(await t.platform.db.sys.one(`SELECT 1 FROM audit_log WHERE org_id = $1 AND action = 'organization.deleted' AND target_id = $2`, [rootOrgId, a.orgId])).toBeDefined();
  });

  it('refuses the root organization (409 CONFLICT) and unknown ids (404)', async () => {
    const rootOrgId = (await me(root)).json().data.organization.id;
    errorOf(await req('DELETE', `/v1/admin/organizations/${rootOrgId}`, root), 409, 'CONFLICT');
    errorOf(await req('DELETE', `/v1/admin/organizations/${RANDOM_ID}`, root), 404, 'NOT_FOUND');
    expect((await me(root)).statusCode).toBe(200);
  });
});

/** A principal for the route guard's unit tests. */
function principal(over: Partial<Principal> & { role?: Role } = {}, org: Partial<Principal['org']> = {}): Principal {
  const role = over.role ?? 'owner';
  return {
    kind: 'user', userId: 'u', email: 'u@example.test', name: 'U', orgId: 'o', role,
    permissions: ROLE_PERMISSIONS[role], scopes: null, legacyKey: false, sessionId: 's', mfaAt: null,
    ...over,
    org: { id: 'o', name: 'O', slug: 'o', planTier: 'pro', subscriptionStatus: 'active', features: ['documents'], isRoot: false, sessionDurationDays: 30, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', ...org },
  };
}
function codeOf(fn: () => void): string | null {
  try { fn(); return null; } catch (e) { if (e instanceof AppError) return e.code; throw e; }
}

describe('route guard: entitlements (checkNeeds)', () => {
  it('FEATURE_DISABLED (403) when the organization lacks the feature', () => {
    expect(codeOf(() => checkNeeds({ feature: 'chat' }, principal()))).toBe('FEATURE_DISABLED');
    expect(codeOf(() => checkNeeds({ feature: 'documents' }, principal()))).toBeNull();
    try { checkNeeds({ feature: 'chat' }, principal()); } catch (e) { expect((e as AppError).status).toBe(403); expect((e as AppError).details).toEqual({ feature: 'chat' }); }
  });

  it('BILLING_SUBSCRIPTION_* (402) unless the subscription is active', () => {
    const sub = (s: string) => codeOf(() => checkNeeds({ subscription: true }, principal({}, { subscriptionStatus: s })));
    expect(sub('active')).toBeNull();
    expect(sub('none')).toBe('BILLING_SUBSCRIPTION_REQUIRED');
    expect(sub('past_due')).toBe('BILLING_SUBSCRIPTION_PAST_DUE');
    expect(sub('cancelled')).toBe('BILLING_SUBSCRIPTION_CANCELLED');
    try { checkNeeds({ subscription: true }, principal({}, { subscriptionStatus: 'past_due' })); } catch (e) { expect((e as AppError).status).toBe(402); }
  });

  it('follows the auth order: credential kind, root, feature, subscription, scope, permission', () => {
    const key = principal({ kind: 'api_key', scopes: ['projects:read'], role: 'viewer' }, { subscriptionStatus: 'none', features: [] });
    expect(codeOf(() => checkNeeds({ credentials: ['user'], feature: 'chat' }, key))).toBe('FORBIDDEN');
    expect(codeOf(() => checkNeeds({ feature: 'chat', subscription: true, scope: 'chat:write', permission: 'org.delete' }, key))).toBe('FEATURE_DISABLED');
    expect(codeOf(() => checkNeeds({ subscription: true, scope: 'chat:write', permission: 'org.delete' }, key))).toBe('BILLING_SUBSCRIPTION_REQUIRED');
    expect(codeOf(() => checkNeeds({ scope: 'chat:write', permission: 'org.delete' }, key))).toBe('FORBIDDEN');
    expect(codeOf(() => checkNeeds({ scope: 'projects:read', permission: 'org.delete' }, key))).toBe('PERMISSION_DENIED');
    expect(codeOf(() => checkNeeds({ scope: 'projects:read', permission: 'project.view' }, key))).toBeNull();
    // write implies read; sessions and legacy keys are not limited by scopes
    expect(codeOf(() => checkNeeds({ scope: 'projects:read' }, principal({ kind: 'api_key', scopes: ['projects:write'] })))).toBeNull();
    expect(codeOf(() => checkNeeds({ scope: 'projects:write' }, principal({ kind: 'api_key', scopes: ['projects:read'] })))).toBe('FORBIDDEN');
    expect(codeOf(() => checkNeeds({ scope: 'projects:write' }, principal({ kind: 'api_key', scopes: null, legacyKey: true })))).toBeNull();
    expect(codeOf(() => checkNeeds({ scope: 'projects:write' }, principal()))).toBeNull();
  });

  it('rootOnly: root super-admins (sessions, or keys with the admin scope) only', () => {
    const needs = { rootOnly: true };
    expect(codeOf(() => checkNeeds(needs, principal({ role: 'super_admin' }, { isRoot: true })))).toBeNull();
    expect(codeOf(() => checkNeeds(needs, principal({ role: 'super_admin', kind: 'api_key', scopes: ['admin'] }, { isRoot: true })))).toBeNull();
    expect(codeOf(() => checkNeeds(needs, principal({ role: 'super_admin', kind: 'api_key', scopes: ['settings:write'] }, { isRoot: true })))).toBe('FORBIDDEN');
    expect(codeOf(() => checkNeeds(needs, principal({ role: 'admin' }, { isRoot: true })))).toBe('FORBIDDEN');
    expect(codeOf(() => checkNeeds(needs, principal({ role: 'owner' })))).toBe('FORBIDDEN');
  });
});
