import type { Sql } from '../../core/db/database.js';

const KEY_COLS = `id, name, prefix, scopes, expires_at, revoked_at, last_used_at, created_by_user_id, created_at`;
export interface ApiKeyRow { id: string; name: string; prefix: string; scopes: string[] | null; expires_at: string; revoked_at: string | null; last_used_at: string | null; created_by_user_id: string; created_at: string }

export const apiKeysRepo = {
  /** Inserts a key (only its hash is stored) and returns it without the secret. */
  insert: async (sql: Sql, orgId: string, k: { id: string; prefix: string; hash: string; name: string; scopes: string[] | null; expiresAt: string; createdBy: string }) =>
    (await sql.one<ApiKeyRow>(`INSERT INTO api_keys (org_id, id, prefix, key_hash, name, scopes, expires_at, created_by_user_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLS}`, [orgId, k.id, k.prefix, k.hash, k.name, k.scopes, k.expiresAt, k.createdBy]))!,
  /** One page of the organization's keys, newest first: all of them with `all`, else those userId created. */
  page: (sql: Sql, orgId: string, all: boolean, userId: string, limit: number, offset: number) =>
    sql.query<ApiKeyRow>(`SELECT ${KEY_COLS} FROM api_keys WHERE org_id = $1 AND ($2 OR created_by_user_id = $3)
      ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`, [orgId, all, userId, limit, offset]),
  /** How many keys `page` pages through. */
  count: async (sql: Sql, orgId: string, all: boolean, userId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1 AND ($2 OR created_by_user_id = $3)`, [orgId, all, userId]))!.n,
  /** A key, its row locked for update; undefined when there is none. */
  byIdForUpdate: (sql: Sql, orgId: string, id: string) =>
    sql.one<ApiKeyRow>(`SELECT ${KEY_COLS} FROM api_keys WHERE org_id = $1 AND id = $2 FOR UPDATE`, [orgId, id]),
  /** Revokes a key (an earlier revocation keeps its time) and returns it; undefined when there is none. */
  revoke: (sql: Sql, orgId: string, id: string) =>
    sql.one<ApiKeyRow>(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE org_id = $1 AND id = $2 RETURNING ${KEY_COLS}`, [orgId, id]),
  /** Revokes every live key a user created in the organization; returns how many. */
  revokeCreatedBy: (sql: Sql, orgId: string, userId: string) =>
    sql.exec(`UPDATE api_keys SET revoked_at = now() WHERE org_id = $1 AND created_by_user_id = $2 AND revoked_at IS NULL`, [orgId, userId]),
  /** The key with this prefix in any organization (owner pool), with its hash; undefined when there is none. */
  byPrefix: (sql: Sql, prefix: string) =>
    sql.one<{ id: string; org_id: string; name: string; key_hash: string; revoked_at: string | null }>(
      `SELECT id, org_id, name, key_hash, revoked_at FROM api_keys WHERE prefix = $1`, [prefix]),
  /** Revokes the organization's live keys of these names except the one with `keepPrefix`; returns the revoked ids. */
  revokeNamedExcept: (sql: Sql, orgId: string, names: string[], keepPrefix: string) =>
    sql.query<{ id: string }>(`UPDATE api_keys SET revoked_at = now()
          WHERE org_id = $1 AND name = ANY ($2::text[]) AND prefix <> $3 AND revoked_at IS NULL RETURNING id`,
    [orgId, names, keepPrefix]),
  /** Sets a key's expiry (owner pool); returns how many rows changed. */
  setExpiry: (sql: Sql, id: string, expiresAt: string) =>
    sql.exec(`UPDATE api_keys SET expires_at = $2 WHERE id = $1`, [id, expiresAt]),
};
