import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { purgeAccounts } from './retention.js';

let t: TestApp;
let a: Tenant;
beforeAll(async () => { t = await buildTestApp(); a = await newTenant(t.app); });
afterAll(async () => { await t?.close(); });

describe('retention of sign-in sessions and tokens', () => {
  it('deletes sessions ended over 30 days ago with their refresh tokens, and refresh tokens spent over 30 days ago; the rest stays', async () => {
    const sys = t.platform.db.sys;
    // [session, expires (days from now), revoked (days ago, or null)]
    const sessions: Array<[string, number, number | null]> = [
      ['expired-31', -31, null], ['revoked-31', 300, 31], ['revoked-29', 300, 29], ['expired-29', -29, null], ['live', 300, null],
    ];
    const ids: Record<string, string> = {};
    for (const [name, expires, revoked] of sessions) {
      ids[name] = (await sys.one<{ id: string }>(`INSERT INTO sessions (org_id, id, user_id, expires_at, revoked_at)
        VALUES ($1, gen_random_uuid(), $2, now() + make_interval(days => $3), now() - make_interval(days => $4)) RETURNING id`,
      [a.orgId, a.userId, expires, revoked]))!.id;
      await sys.exec(`INSERT INTO refresh_tokens (org_id, token_hash, session_id) VALUES ($1, $2, $3)`, [a.orgId, `retention-${name}`, ids[name]]);
    }
    await sys.exec(`INSERT INTO refresh_tokens (org_id, token_hash, session_id, used_at) VALUES
      ($1, 'retention-spent-31', $2, now() - interval '31 days'), ($1, 'retention-spent-29', $2, now() - interval '29 days')`, [a.orgId, ids.live]);
    await purgeAccounts(sys);
    const left = await sys.query<{ id: string }>(`SELECT id FROM sessions WHERE id = ANY($1::uuid[])`, [Object.values(ids)]);
    expect(Object.entries(ids).filter(([, id]) => left.some((r) => r.id === id)).map(([name]) => name)).toEqual(['revoked-29', 'expired-29', 'live']);
    const tokens = await sys.query<{ token_hash: string }>(`SELECT token_hash FROM refresh_tokens WHERE token_hash LIKE 'retention-%' AND org_id = $1 ORDER BY token_hash`, [a.orgId]);
    expect(tokens.map((r) => r.token_hash)).toEqual(['retention-expired-29', 'retention-live', 'retention-revoked-29', 'retention-spent-29']);
  });

  it('a refresh token of a purged session is refused like any unknown one', async () => {
    const b = await newTenant(t.app);
    const refresh = b.refreshToken;
    await t.platform.db.sys.exec(`UPDATE sessions SET revoked_at = now() - interval '31 days' WHERE org_id = $1`, [b.orgId]);
    await purgeAccounts(t.platform.db.sys);
    expect(await t.platform.db.sys.query(`SELECT 1 FROM refresh_tokens WHERE org_id = $1 UNION ALL SELECT 1 FROM sessions WHERE org_id = $1`, [b.orgId])).toEqual([]);
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: refresh } });
    expect([res.statusCode, res.json().error.code]).toEqual([401, 'AUTH_TOKEN_INVALID']);
  });
});
