import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

describe('smoke', () => {
  it('registers and reads /v1/me with JWT and API key', async () => {
    const a = await newTenant(t.app);
    const me = await t.app.inject({ method: 'GET', url: '/v1/me', headers: a.auth });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.organization.id).toBe(a.orgId);
    const key = await a.apiKey(['projects:read']);
    const me2 = await t.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    expect(me2.statusCode).toBe(200);
    expect(me2.json().data.credential.kind).toBe('api_key');
    expect(me2.headers['x-ratelimit-limit']).toBeDefined();
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/me' }), 401, 'AUTH_REQUIRED');
    const root = await t.app.inject({ method: 'GET', url: '/v1/admin/organizations', headers: bearer(t.rootKey) });
    expect(root.statusCode).toBe(200);
  });
});
