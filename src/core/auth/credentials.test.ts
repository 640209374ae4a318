import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp } from '../../../test/helpers.js';
import { waitFor } from '../../areas/workspace/test-support.js';
import { CREDENTIALS_CHANNEL } from './credentials.js';

// Two server processes on one database, as in a horizontally scaled deployment, with ten-minute credential caches:
// only an invalidation (local or announced) and the expiry bounds of an entry can end a cached credential.
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  [a, b] = await Promise.all([buildTestApp({ credentialCacheTtlMs: 600_000 }), buildTestApp({ credentialCacheTtlMs: 600_000 })]);
  await waitFor(async () => a.platform.db.listener.isLive(CREDENTIALS_CHANNEL) && b.platform.db.listener.isLive(CREDENTIALS_CHANNEL));
});
afterAll(async () => { await Promise.all([a?.close(), b?.close()]); });

const me = (t: TestApp, token: string) => t.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } });

describe('a credential revoked on one instance', () => {
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

const sessionIdOf = async (t: TestApp, token: string) => (await t.platform.credentials.resolve(token)).sessionId!;

describe('CredentialResolver.onChange', () => {
  it('calls listeners after a local invalidation and after another instance announces one; unsubscribe stops them', async () => {
    let local = 0;
    let remote = 0;
    const offA = a.platform.credentials.onChange(() => { local++; });
    const offB = b.platform.credentials.onChange(() => { remote++; });
    const before = a.platform.credentials.changes;
    a.platform.credentials.invalidate();
    expect(local).toBe(1); // synchronously, after the cache was emptied
    expect(a.platform.credentials.changes).toBe(before + 1);
    await waitFor(async () => remote >= 1, 5_000, 10);
    // Other test files share the database and announce their own changes at any moment: both listeners may have
    // heard more by now; what unsubscribing must do is stop them hearing anything after it.
    offA(); offB();
    const [localAtOff, remoteAtOff] = [local, remote];
    a.platform.credentials.invalidate();
    await a.platform.credentials.settled();
    await new Promise((r) => setTimeout(r, 200));
    expect(local).toBe(localAtOff);
    expect(remote).toBe(remoteAtOff);
  });
});

describe('access tokens and session expiry', () => {
  it('an access token whose session has expired is 401 AUTH_TOKEN_EXPIRED', async () => {
    const u = await newTenant(a.app);
    await a.platform.db.sys.exec(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [await sessionIdOf(a, u.token)]);
    a.platform.credentials.invalidate();
    const err = errorOf(await me(a, u.token), 401, 'AUTH_TOKEN_EXPIRED');
    expect(err.message).toBe('Session has expired; sign in again');
  });

  it('a cached access token stops at its session\'s expiry, although the token and the cache entry would last longer', async () => {
    const u = await newTenant(a.app);
    await a.platform.db.sys.exec(`UPDATE sessions SET expires_at = now() + interval '2 seconds' WHERE id = $1`, [await sessionIdOf(a, u.token)]);
    a.platform.credentials.invalidate();
    expect((await me(a, u.token)).statusCode).toBe(200); // cached now, for ten minutes
    const err = await waitFor(async () => { const r = await me(a, u.token); return r.statusCode === 401 ? r : null; }, 5_000, 100);
    expect(errorOf(err, 401, 'AUTH_TOKEN_EXPIRED').message).toBe('Session has expired; sign in again');
  });

  it('recheck (open sockets) follows the session behind a token: revoked is 401 AUTH_TOKEN_INVALID, expired 401 AUTH_TOKEN_EXPIRED', async () => {
    const u = await newTenant(a.app);
    const p = await a.platform.credentials.resolve(u.token);
    expect((await a.platform.credentials.recheck(p)).role).toBe('owner');
    await a.platform.db.sys.exec(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [p.sessionId]);
    await expect(a.platform.credentials.recheck(p)).rejects.toMatchObject({ code: 'AUTH_TOKEN_EXPIRED' });
    await a.platform.db.sys.exec(`UPDATE sessions SET revoked_at = now() WHERE id = $1`, [p.sessionId]);
    await expect(a.platform.credentials.recheck(p)).rejects.toMatchObject({ code: 'AUTH_TOKEN_INVALID' });
  });
});

describe('the credential cache', () => {
  // Entries are planted directly: other test files revoke keys on the same database, and every such announcement
  // empties this process's cache, so a test that waited for real entries to expire could not tell why they went.
  type Entry = { principal: unknown; until: number };
  const internals = () => a.platform.credentials as unknown as { cache: Map<string, Entry> };

  it('deletes an entry looked up after its TTL', async () => {
    const owner = await newTenant(a.app);
    const principal = await a.platform.credentials.resolve(owner.token);
    internals().cache.set('planted-expired', { principal, until: Date.now() - 1 });
    expect(a.platform.credentials.cached('planted-expired')).toBeUndefined();
    expect(internals().cache.has('planted-expired')).toBe(false);
  });

  it('sweeps the expired entries of tokens that never come back at the next insertion, stopping at the first live one', async () => {
    const owner = await newTenant(a.app);
    const principal = await a.platform.credentials.resolve(owner.token);
    const key = await owner.apiKey(['projects:read']);
    const { cache } = internals();
    // Another file's credential notice empties the cache at any moment: a try during which one came proves nothing
    // and is made again (changes counts every clear).
    for (let attempt = 1; ; attempt++) {
      const seen = a.platform.credentials.changes;
      cache.clear(); // as after an invalidation: the entries below are the oldest
      cache.set('planted-expired-1', { principal, until: Date.now() - 2 });
      cache.set('planted-expired-2', { principal, until: Date.now() - 1 });
      cache.set('planted-live', { principal, until: Date.now() + 600_000 });
      await a.platform.credentials.resolve(key);
      if (a.platform.credentials.changes !== seen && attempt < 10) continue;
      expect(['planted-expired-1', 'planted-expired-2', 'planted-live', key].map((k) => cache.has(k))).toEqual([false, false, true, true]);
      break;
    }
  });

  it('moves a re-resolved token to the end, so the map stays in expiry order', async () => {
    const owner = await newTenant(a.app);
    const key = await owner.apiKey(['projects:read']);
    const principal = await a.platform.credentials.resolve(owner.token);
    const { cache } = internals();
    // As above: a try during which another file's credential notice came (it empties the cache, and a lookup under
    // way then is answered but not cached) is made again.
    for (let attempt = 1; ; attempt++) {
      const seen = a.platform.credentials.changes;
      cache.clear();
      cache.set(key, { principal, until: Date.now() - 1 }); // expired, at the front
      cache.set('planted-live', { principal, until: Date.now() + 600_000 });
      await a.platform.credentials.resolve(key);
      if (a.platform.credentials.changes !== seen && attempt < 10) continue;
      expect([...cache.keys()].slice(-1)).toEqual([key]);
      break;
    }
  });
});

describe('last use of API keys', () => {
  const written = () => (a.platform.credentials as unknown as { lastUsedWritten: Map<string, number> }).lastUsedWritten;

  it('remembers only the last minute\'s writes: a key used once is forgotten a minute later, at the next write', async () => {
    const owner = await newTenant(a.app);
    const [first, second] = [await owner.apiKey(['projects:read']), await owner.apiKey(['projects:read'])];
    const idOf = async (key: string) => (await a.platform.credentials.resolve(key)).apiKeyId!;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_600_000 }); // later than every write so far
    try {
      const firstId = await idOf(first);
      expect(written().has(firstId)).toBe(true);
      vi.setSystemTime(Date.now() + 61_000);
      const secondId = await idOf(second);
      expect([written().has(firstId), written().has(secondId)]).toEqual([false, true]);
      expect([...written().values()].every((at) => Date.now() - at < 60_000)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
