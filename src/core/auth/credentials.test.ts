import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp } from '../../../test/helpers.js';
import { waitFor } from '../../areas/workspace/test-support.js';
import { CREDENTIALS_CHANNEL } from './credentials.js';

// Two server processes on one database, as in a horizontally scaled deployment. Their credential caches live for
// ten minutes here, so only the announcement can make the second one forget a revoked credential in time.
describe('a credential revoked on one instance', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await Promise.all([buildTestApp({ credentialCacheTtlMs: 600_000 }), buildTestApp({ credentialCacheTtlMs: 600_000 })]);
    await waitFor(async () => a.platform.db.listener.isLive(CREDENTIALS_CHANNEL) && b.platform.db.listener.isLive(CREDENTIALS_CHANNEL));
  });
  afterAll(async () => { await Promise.all([a?.close(), b?.close()]); });

  const me = (t: TestApp, token: string) => t.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } });

  it('is refused by every other instance within moments, although their caches still held it', async () => {
    const owner = await newTenant(a.app);
    const key = await owner.apiKey(['projects:read']);
    expect((await me(b, key)).statusCode).toBe(200); // now cached on b
    const keyId = (await a.platform.db.sys.one<{ id: string }>(`SELECT id FROM api_keys WHERE org_id = $1 AND scopes = ARRAY['projects:read']`, [owner.orgId]))!.id;
    const del = await a.app.inject({ method: 'DELETE', url: `/v1/api-keys/${keyId}`, headers: owner.auth });
    expect(del.statusCode).toBe(200);
    const refused = await waitFor(async () => { const r = await me(b, key); return r.statusCode === 401 ? r : null; }, 5_000, 10);
    expect(refused.json().error.code).toBe('INVALID_API_KEY');
  });

  it('a signed-out session is refused by the other instance too', async () => {
    const owner = await newTenant(a.app);
    expect((await me(b, owner.token)).statusCode).toBe(200);
    const out = await a.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: owner.auth });
    expect(out.statusCode).toBeLessThan(300);
    const refused = await waitFor(async () => { const r = await me(b, owner.token); return r.statusCode === 401 ? r : null; }, 5_000, 10);
    expect(refused.json().error.code).toBe('AUTH_TOKEN_INVALID');
  });
});
