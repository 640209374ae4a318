import type { Sql } from '../../core/db/database.js';
import { purge } from '../../core/retention.js';

/**
 * Days a sign-in session is kept after it ended (expired or revoked), with its refresh tokens, and a spent refresh
 * token after it was spent. A spent token is kept so that presenting it again (a stolen token replayed) is seen as
 * reuse and ends its session (docs/accounts.md); one spent over 30 days ago is answered as unknown, which refuses it too.
 */
export const ENDED_SESSION_DAYS = 30;
export const SPENT_REFRESH_DAYS = 30;

/** Deletes ended sessions and their refresh tokens, spent refresh tokens and expired password tokens; returns how many rows. */
export async function purgeAccounts(sys: Sql): Promise<number> {
  let total = 0;
  // Tokens first: a session is deleted only once none of its tokens is left, so a purge cut short leaves no token
  // whose session is gone.
  total += await purge(sys, 'refresh_tokens', `(org_id, session_id) IN (SELECT org_id, id FROM sessions
    WHERE LEAST(expires_at, revoked_at) < now() - make_interval(days => $2))`, [ENDED_SESSION_DAYS]);
  total += await purge(sys, 'sessions', `LEAST(expires_at, revoked_at) < now() - make_interval(days => $2)`, [ENDED_SESSION_DAYS]);
  total += await purge(sys, 'refresh_tokens', `used_at < now() - make_interval(days => $2)`, [SPENT_REFRESH_DAYS]);
  total += await purge(sys, 'password_tokens', `expires_at < now() - interval '1 day'`);
  return total;
}
