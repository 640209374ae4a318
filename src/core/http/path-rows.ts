import type { Sql } from '../db/database.js';
import type { Principal } from '../auth/principal.js';

/**
 * The kinds of row a route's path id names (route config `fixture`), registered by their areas: the guard asks
 * whether the caller's organization has the row before it answers a refusal by role or scope, so that another
 * organization's row is 404 NOT_FOUND, never 403 (design: accounts-and-tenancy, "Tenancy"), exactly as a random id.
 */
export interface PathRow {
  /** As the area's own 404 names it (`Project not found`). */
  what: string;
  exists(sql: Sql, principal: Principal, id: string): Promise<boolean>;
}

const kinds = new Map<string, PathRow>();

/**
 * `table` has `org_id` and the id in `column`; `ownedBy`: a column naming the user a row belongs to (saved views,
 * notifications), for rows only their user reaches: another user's is not found either.
 */
export function registerPathRow(kind: string, what: string, table: string, opts: { column?: string; ownedBy?: string } = {}): void {
  const owner = opts.ownedBy ? ` AND ${opts.ownedBy} = $3` : '';
  const statement = `SELECT 1 AS found FROM ${table} WHERE org_id = $1 AND ${opts.column ?? 'id'} = $2${owner} LIMIT 1`;
  kinds.set(kind, {
    what,
    exists: async (sql, p, id) => !!(await sql.one(statement, opts.ownedBy ? [p.orgId, id, p.userId] : [p.orgId, id])),
  });
}

export const pathRowOf = (kind: string | undefined): PathRow | undefined => (kind ? kinds.get(kind) : undefined);
