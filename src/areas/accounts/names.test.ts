/** Account names with nothing visible in them (blank, or zero-width characters only) are refused, as everywhere. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, uniqueEmail, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const ZW = '\u200B\u200B';

describe('names with nothing visible', () => {
  it('are 400 VALIDATION_ERROR for a user, an organization (sign-up, create, rename) and an API key; nothing is created', async () => {
    const a = await newTenant(t.app);
    const register = (body: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/v1/auth/register',
      payload: { email: uniqueEmail(), password: 'a-long-enough-password-1', name: 'Ada', organization_name: 'Acme', ...body } });
    expect(errorOf(await register({ name: ZW }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'name', reason: 'BLANK' });
    expect(errorOf(await register({ organization_name: ZW }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'organization_name', reason: 'BLANK' });
    const orgs = async () => (await t.app.inject({ url: '/v1/organizations', headers: a.auth })).json().data.length as number;
    const before = await orgs();
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth, payload: { name: ZW } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'PUT', url: '/v1/organizations/current', headers: a.auth, payload: { name: ZW } }), 400, 'VALIDATION_ERROR');
    expect(await orgs()).toBe(before);
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: a.auth,
      payload: { name: ZW, scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() } }), 400, 'VALIDATION_ERROR');
    expect((await t.app.inject({ url: '/v1/api-keys', headers: a.auth })).json().data).toHaveLength(0);
  });
});
