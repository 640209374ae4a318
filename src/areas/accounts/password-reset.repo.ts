import type { Sql } from '../../core/db/database.js';

export const passwordTokensRepo = {
  /** Deletes the user's expired tokens, and for a reset also their unused reset tokens; returns how many went. */
  deleteReplaced: (sql: Sql, userId: string, purpose: string) =>
    sql.exec(`DELETE FROM password_tokens WHERE user_id = $1 AND ((purpose = $2 AND $2 = 'reset' AND used_at IS NULL) OR expires_at <= now())`, [userId, purpose]),
  /** Stores a token by its hash; returns the row count (1). */
  insert: (sql: Sql, t: { hash: string; userId: string; purpose: string; expiresAt: string }) =>
    sql.exec(`INSERT INTO password_tokens (token_hash, user_id, purpose, expires_at) VALUES ($1, $2, $3, $4)`, [t.hash, t.userId, t.purpose, t.expiresAt]),
  /** The token with this hash, its row locked for update; undefined when there is none. */
  byHashForUpdate: (sql: Sql, hash: string) =>
    sql.one<{ user_id: string; purpose: string; expires_at: string; used_at: string | null }>(
      `SELECT user_id, purpose, expires_at, used_at FROM password_tokens WHERE token_hash = $1 FOR UPDATE`, [hash]),
  /** Deletes one unused token by its hash (one whose e-mail could not be sent). */
  deleteUnused: (sql: Sql, hash: string) => sql.exec(`DELETE FROM password_tokens WHERE token_hash = $1 AND used_at IS NULL`, [hash]),
  /** Marks every unused token of the user as used; returns how many. */
  spendAllOf: (sql: Sql, userId: string) =>
    sql.exec(`UPDATE password_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [userId]),
};
