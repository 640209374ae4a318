/** Membership changes that race each other: the invariants hold whatever the order the requests run in. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, type TestApp, type Tenant } from '../../../test/helpers.js';
import type { ServiceContext } from '../../core/context.js';
import { removeMember, updateMemberRole } from './organizations.service.js';
import { createApiKey } from './api-keys.service.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

type Headers = Record<string, string>;
const MEMBERS = '/v1/organizations/current/members';
const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const ROUNDS = 6;

/** A second user of `a`'s organization with `role`, signed in to it. */
async function memberOf(a: Tenant, role: string): Promise<Tenant & { auth: Headers }> {
  const u = await newTenant(t.app, { name: role });
  expect((await req('POST', MEMBERS, a.auth, { email: u.email, role })).statusCode).toBe(201);
  const login = (await req('POST', '/v1/auth/login', {}, { email: u.email, password: u.password, organization_id: a.orgId })).json().data;
  return { ...u, orgId: a.orgId, token: login.access_token, auth: bearer(login.access_token) };
}
const owners = async (orgId: string) => (await t.platform.db.sys.one<{ n: number }>(
  `SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND role IN ('owner', 'super_admin')`, [orgId]))!.n;

describe('the last owner under concurrent requests', () => {
  it('two owners removing each other at once: one succeeds, the other is refused, one owner remains', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const a = await newTenant(t.app);
      const c = await memberOf(a, 'owner');
      const [x, y] = await Promise.all([req('DELETE', `${MEMBERS}/${c.userId}`, a.auth), req('DELETE', `${MEMBERS}/${a.userId}`, c.auth)]);
      expect([x.statusCode, y.statusCode].filter((s) => s === 200)).toHaveLength(1);
      const loser = [x, y].find((r) => r.statusCode !== 200)!;
      expect([loser.statusCode, loser.json().error.code]).toEqual([401, 'AUTH_TOKEN_INVALID']); // its membership ended first
      expect(await owners(a.orgId)).toBe(1);
    }
  });

  it('two owners demoting each other, or each leaving, at once: an owner always remains', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const a = await newTenant(t.app);
      const c = await memberOf(a, 'owner');
      const demote = await Promise.all([req('PUT', `${MEMBERS}/${c.userId}`, a.auth, { role: 'member' }), req('PUT', `${MEMBERS}/${a.userId}`, c.auth, { role: 'member' })]);
      // The loser is refused: 409 when it ran while the other was changing its role, 403 when it ran after.
      const [first, second] = demote.map((r) => r.statusCode).sort();
      expect(first).toBe(200);
      expect([403, 409]).toContain(second);
      expect(await owners(a.orgId)).toBe(1);
      const b = await newTenant(t.app);
      const d = await memberOf(b, 'owner');
      const leave = await Promise.all([req('DELETE', `${MEMBERS}/${b.userId}`, b.auth), req('DELETE', `${MEMBERS}/${d.userId}`, d.auth)]);
      expect(leave.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      expect(await owners(b.orgId)).toBe(1);
    }
  });
});

describe('API keys created while their creator is removed', () => {
  it('every key the member managed to create is revoked with the removal; none works after a re-invitation', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const a = await newTenant(t.app);
      const m = await memberOf(a, 'admin');
      const create = () => req('POST', '/v1/api-keys', m.auth, { name: 'k', scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() });
      const results = await Promise.all([req('DELETE', `${MEMBERS}/${m.userId}`, a.auth), create(), create(), create(), create()]);
      expect(results[0].statusCode).toBe(200);
      const live = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1 AND created_by_user_id = $2 AND revoked_at IS NULL`, [a.orgId, m.userId]);
      expect(live!.n).toBe(0);
      // A key request that lost the race is refused as from a credential that ended (never 500).
      for (const r of results.slice(1)) expect([201, 401]).toContain(r.statusCode);
      expect((await req('POST', MEMBERS, a.auth, { email: m.email, role: 'admin' })).statusCode).toBe(201);
      for (const r of results.slice(1).filter((x) => x.statusCode === 201)) {
        expect((await req('GET', '/v1/projects', bearer(r.json().data.key))).statusCode).toBe(401);
      }
    }
  });
});

describe('a caller whose membership changed after its credential was read (a request in flight)', () => {
  it('is refused inside the transaction: 409 CONFLICT when its role changed, 401 AUTH_TOKEN_INVALID when it was removed', async () => {
    const a = await newTenant(t.app);
    const c = await memberOf(a, 'owner');
    const principal = await t.platform.credentials.resolve(c.token);
    const ctx: ServiceContext = { platform: t.platform, principal, requestId: 'stale-principal', ip: null };
    // Committed by another request between this one's credential check and its transaction (no cache invalidation).
    await t.platform.db.sys.exec(`UPDATE memberships SET role = 'member' WHERE org_id = $1 AND user_id = $2`, [a.orgId, c.userId]);
    await expect(removeMember(ctx, a.userId)).rejects.toMatchObject({ code: 'CONFLICT', status: 409, details: { reason: 'CONCURRENT_CHANGE' } });
    await expect(updateMemberRole(ctx, a.userId, 'member')).rejects.toMatchObject({ code: 'CONFLICT', status: 409 });
    await t.platform.db.sys.exec(`DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, [a.orgId, c.userId]);
    await expect(removeMember(ctx, a.userId)).rejects.toMatchObject({ code: 'AUTH_TOKEN_INVALID', status: 401 });
    await expect(createApiKey(ctx, { name: 'k', scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() }))
      .rejects.toMatchObject({ code: 'AUTH_TOKEN_INVALID', status: 401 });
    expect(await owners(a.orgId)).toBe(1);
    const keys = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1 AND created_by_user_id = $2`, [a.orgId, c.userId]);
    expect(keys!.n).toBe(0);
  });
});
