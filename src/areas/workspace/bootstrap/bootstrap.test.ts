import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp } from '../../../../test/helpers.js';
import { createProject, memberOf } from '../test-support.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const get = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/v1/bootstrap', headers });

describe('GET /v1/bootstrap', () => {
  it('returns the four slices with a weak ETag and the exact Cache-Control', async () => {
    const a = await newTenant(t.app);
    const p = await createProject(t.app, a, 'Bootstrap One');
    const r = await get(a.auth);
    expect(r.statusCode).toBe(200);
    expect(r.headers['cache-control']).toBe('private, max-age=15, stale-while-revalidate=60');
    expect(r.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    const d = r.json().data;
    expect(d.user).toEqual({ id: a.userId, email: a.email, name: 'Test User' });
    expect(d.organizations).toEqual([expect.objectContaining({ id: a.orgId, role: 'owner', is_current: true })]);
    expect(d.projects).toEqual([expect.objectContaining({ id: p.id, name: 'Bootstrap One', slug: p.slug })]);
    expect(d.settings).toMatchObject({ organization: {}, personalization: { themeMode: 'system' }, preferences: {} });
  });

  it('304 with no body on a matching If-None-Match (weak or strong form, in a list); 200 otherwise', async () => {
    const a = await newTenant(t.app);
    const etag = (await get(a.auth)).headers.etag as string;
    for (const inm of [etag, etag.slice(2), `"nope", ${etag}`, '*']) {
      const r = await get({ ...a.auth, 'if-none-match': inm });
      expect(r.statusCode).toBe(304);
      expect(r.body).toBe('');
      expect(r.headers.etag).toBe(etag);
      expect(r.headers['cache-control']).toBe('private, max-age=15, stale-while-revalidate=60');
    }
    expect((await get({ ...a.auth, 'if-none-match': 'W/"other"' })).statusCode).toBe(200);
  });

  it('a long If-None-Match list is read like a short one (a condition, not a field to validate)', async () => {
    const a = await newTenant(t.app);
    const etag = (await get(a.auth)).headers.etag as string;
    const others = Array.from({ length: 120 }, (_, i) => `W/"stale-${i}-${'x'.repeat(20)}"`).join(', ');
    expect((await get({ ...a.auth, 'if-none-match': others })).statusCode).toBe(200);
    expect((await get({ ...a.auth, 'if-none-match': `${others}, ${etag}` })).statusCode).toBe(304);
  });

  it('the ETag changes when any slice changes', async () => {
    const a = await newTenant(t.app);
    const seen = new Set<string>();
    const tag = async () => (await get(a.auth)).headers.etag as string;
    seen.add(await tag());
    expect(await tag()).toBe([...seen][0]);
    await createProject(t.app, a, 'Changes projects');
    seen.add(await tag());
    await t.app.inject({ method: 'PUT', url: '/v1/settings/org', headers: a.auth, payload: { settings: { x: 1 } } });
    seen.add(await tag());
    await t.app.inject({ method: 'PUT', url: '/v1/settings/personalization', headers: a.auth, payload: { themeMode: 'dark', language: 'en', notifications: {} } });
    seen.add(await tag());
    await t.app.inject({ method: 'PUT', url: '/v1/settings/preferences', headers: a.auth, payload: { preferences: { y: 2 } } });
    seen.add(await tag());
    await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth, payload: { name: 'Second org' } });
    seen.add(await tag());
    expect(seen.size).toBe(6);
  });

  it('a change of the user slice (name, e-mail) changes the ETag; the old ETag then gets 200 with the new data, not 304', async () => {
    // No route changes a user's name or e-mail (GET /v1/settings/profile is read-only), so the row is changed directly.
    const a = await newTenant(t.app);
    const first = await get(a.auth);
    const etag0 = first.headers.etag as string;
    expect(first.json().data.user).toEqual({ id: a.userId, email: a.email, name: 'Test User' });
    expect((await get({ ...a.auth, 'if-none-match': etag0 })).statusCode).toBe(304);

    await t.platform.db.sys.exec(`UPDATE users SET name = $2 WHERE id = $1`, [a.userId, 'Renamed User']);
    const renamed = await get(a.auth);
    const etag1 = renamed.headers.etag as string;
    expect(etag1).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(etag1).not.toBe(etag0);
    expect(renamed.json().data.user).toEqual({ id: a.userId, email: a.email, name: 'Renamed User' });
    const stale = await get({ ...a.auth, 'if-none-match': etag0 });
    expect(stale.statusCode).toBe(200);
    expect(stale.headers.etag).toBe(etag1);
    expect(stale.json().data.user.name).toBe('Renamed User');
    expect((await get({ ...a.auth, 'if-none-match': etag1 })).statusCode).toBe(304);

    const email = `renamed-${a.userId}@example.test`;
    await t.platform.db.sys.exec(`UPDATE users SET email = $2 WHERE id = $1`, [a.userId, email]);
    const moved = await get(a.auth);
    const etag2 = moved.headers.etag as string;
    expect(new Set([etag0, etag1, etag2]).size).toBe(3);
    expect(moved.json().data.user).toEqual({ id: a.userId, email, name: 'Renamed User' });
    for (const old of [etag0, etag1]) expect((await get({ ...a.auth, 'if-none-match': old })).statusCode).toBe(200);
    expect((await get({ ...a.auth, 'if-none-match': etag2 })).statusCode).toBe(304);
  });

  it('the settings slice equals what the settings routes answer', async () => {
    const a = await newTenant(t.app);
    await t.app.inject({ method: 'PUT', url: '/v1/settings/personalization', headers: a.auth, payload: { themeMode: 'light', language: 'fr', notifications: { weeklyDigest: true }, stayLoggedInHours: 8 } });
    await t.app.inject({ method: 'PUT', url: '/v1/settings/preferences', headers: a.auth, payload: { preferences: { a: 1 } } });
    await t.app.inject({ method: 'PUT', url: '/v1/settings/org', headers: a.auth, payload: { settings: { b: 2 } } });
    const s = (await get(a.auth)).json().data.settings;
    expect(s.personalization).toEqual((await t.app.inject({ method: 'GET', url: '/v1/settings/personalization', headers: a.auth })).json().data);
    expect(s.preferences).toEqual({ a: 1 });
    expect(s.organization).toEqual({ b: 2 });
  });

  it('lists only active projects of the organization, at most 50', async () => {
    const a = await newTenant(t.app);
    const keep = await createProject(t.app, a, 'Keep me');
    const arch = await createProject(t.app, a, 'Archive me');
    const ar = await t.app.inject({ method: 'PUT', url: `/v1/projects/${arch.id}`, headers: a.auth, payload: { is_active: false } });
    expect(ar.statusCode).toBe(200);
    const ids = (await get(a.auth)).json().data.projects.map((p: { id: string }) => p.id);
    expect(ids).toContain(keep.id);
    expect(ids).not.toContain(arch.id);
    await t.platform.db.tenant(a.orgId, (sql) => sql.exec(`INSERT INTO projects (org_id, id, name, slug)
      SELECT $1, gen_random_uuid(), 'p' || g, 'bulk-' || g FROM generate_series(1, 60) g`, [a.orgId]));
    expect((await get(a.auth)).json().data.projects).toHaveLength(50);
  });

  it('a slice the credential may not read is null; a member sees both organizations', async () => {
    const a = await newTenant(t.app);
    const k = await a.apiKey(['settings:read']);
    const r = await get(bearer(k));
    expect(r.statusCode).toBe(200);
    expect(r.json().data.projects).toBeNull();
    expect(r.json().data.settings).not.toBeNull();
    const m = await memberOf(t.app, a);
    const orgs = (await get(m.auth)).json().data.organizations;
    expect(orgs.map((o: { id: string }) => o.id).sort()).toEqual([a.orgId, m.home.orgId].sort());
    expect(orgs.find((o: { id: string }) => o.id === a.orgId).is_current).toBe(true);
    // The member's API key is bound to the organization it was made in, and sees only that one.
    const key = (await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: m.auth, payload: { name: 'k', scopes: ['settings:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() } })).json().data.key;
    expect((await get(bearer(key))).json().data.organizations.map((o: { id: string }) => o.id)).toEqual([a.orgId]);
  });

  it('401 without a credential', async () => {
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/bootstrap' }), 401, 'AUTH_REQUIRED');
  });
});
