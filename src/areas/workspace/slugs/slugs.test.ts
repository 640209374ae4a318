import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp, awayFromWindowEnd } from '../../../../test/helpers.js';
import { createProject } from '../test-support.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const check = (headers: Record<string, string>, kind: string, slug: string) =>
  t.app.inject({ method: 'GET', url: `/v1/slugs/availability?kind=${encodeURIComponent(kind)}&slug=${encodeURIComponent(slug)}`, headers });

describe('slug availability', () => {
  it('answers every reason, with the exact Cache-Control', async () => {
    const a = await newTenant(t.app);
    const free = await check(a.auth, 'org', `fresh-${Date.now()}`);
    expect(free.statusCode).toBe(200);
    expect(free.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
    expect(free.json()).toEqual({ success: true, data: { available: true, reason: null } });
    const org = (await t.app.inject({ method: 'GET', url: '/v1/organizations/current', headers: a.auth })).json().data;
    expect((await check(a.auth, 'org', org.slug)).json().data).toEqual({ available: false, reason: 'taken' });
    expect((await check(a.auth, 'org', 'admin')).json().data).toEqual({ available: false, reason: 'reserved' });
    expect((await check(a.auth, 'project', 'Not_Valid')).json().data).toEqual({ available: false, reason: 'invalid_format' });
    expect((await check(a.auth, 'project', 'a--b')).json().data).toEqual({ available: false, reason: 'invalid_format' });
    expect((await check(a.auth, 'project', 'x'.repeat(150))).json().data).toEqual({ available: true, reason: null });
    expect((await check(a.auth, 'package', '0190b7a2-1c3d-7e4f-8a9b-0c1d2e3f4a5b')).json().data).toEqual({ available: false, reason: 'uuid_shaped' });
    expect((await check(a.auth, 'package', 'my-package')).json().data).toEqual({ available: true, reason: null });
  });

  it('project slugs are per organization, and a taken answer never names the owner', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const p = await createProject(t.app, a, 'Rocket Launch');
    const taken = await check(a.auth, 'project', p.slug);
    expect(taken.json()).toEqual({ success: true, data: { available: false, reason: 'taken' } });
    expect(taken.body).not.toContain(a.orgId);
    expect((await check(b.auth, 'project', p.slug)).json().data).toEqual({ available: true, reason: null });
  });

  it('400 INVALID_PARAMETER for a bad kind, a missing or empty slug, a slug over 256 chars', async () => {
    const a = await newTenant(t.app);
    const bad = await check(a.auth, 'team', 'abc');
    errorOf(bad, 400, 'INVALID_PARAMETER');
    expect(bad.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
    errorOf(await check(a.auth, 'org', ''), 400, 'INVALID_PARAMETER');
    errorOf(await check(a.auth, 'org', 'x'.repeat(257)), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/slugs/availability?kind=org', headers: a.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/slugs/availability?slug=abc', headers: a.auth }), 400, 'INVALID_PARAMETER');
    expect((await check(a.auth, 'org', 'x'.repeat(256))).json().data).toEqual({ available: true, reason: null });
  });

  it('401 without a credential; 403 for an API key without the projects scope', async () => {
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/slugs/availability?kind=org&slug=abc' }), 401, 'AUTH_REQUIRED');
    const a = await newTenant(t.app);
    const k = await a.apiKey(['documents:read']);
    errorOf(await check(bearer(k), 'org', 'abc'), 403, 'FORBIDDEN');
  });

  it('allows 60 requests per minute per user, then 429 with Retry-After', async () => {
    const a = await newTenant(t.app);
    await awayFromWindowEnd();
    for (let i = 0; i < 60; i++) expect((await check(a.auth, 'org', `s-${i}`)).statusCode).toBe(200);
    const r = await check(a.auth, 'org', 'one-more');
    errorOf(r, 429, 'RATE_LIMIT_EXCEEDED');
    expect(r.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expect(r.headers['x-ratelimit-limit']).toBe('60');
    // The budget is the user's: an API key of the same user shares it, so does HEAD (which would otherwise tell the
    // answer by its Content-Length), and so does the same user signed in to another organization; another user does not.
    const k = await a.apiKey(['projects:read']);
    errorOf(await check(bearer(k), 'org', 'x'), 429, 'RATE_LIMIT_EXCEEDED');
    expect((await t.app.inject({ method: 'HEAD', url: '/v1/slugs/availability?kind=org&slug=x', headers: a.auth })).statusCode).toBe(429);
    const other = (await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth, payload: { name: 'Second org' } })).json().data;
    const switched = (await t.app.inject({ method: 'POST', url: '/v1/auth/switch-organization', headers: a.auth, payload: { organization_id: other.id } })).json().data;
    errorOf(await check(bearer(switched.access_token), 'org', 'x'), 429, 'RATE_LIMIT_EXCEEDED');
    const b = await newTenant(t.app);
    expect((await check(b.auth, 'org', 'x')).statusCode).toBe(200);
  });
});
