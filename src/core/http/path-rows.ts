import type { Database, Sql } from '../db/database.js';
import type { Principal } from '../auth/principal.js';
import { notFound, type AppError } from '../errors.js';
import { isUuid } from '../ids.js';

/**
 * The kinds of row a route's path id names (route config `fixture`), registered by their areas. Before a refusal
 * that comes ahead of the route's own look-up, the caller's organization is asked whether it has the row, so that
 * another organization's row (or none) is 404 NOT_FOUND, exactly as a random id, whatever else is wrong with the
 * request: a refusal by role or scope (the guard; design: accounts-and-tenancy, "Tenancy": never 403), and a body or
 * query the route's schema refuses (the error handler; ARCHITECTURE "Auth order": membership 404 before validation
 * 400). Only on those refusal paths is the row read: an accepted request pays nothing for it.
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

/** What a request's path names: the registered kind of row and its id (the route's one path parameter, a UUID). */
export interface PathTarget { row: PathRow; id: string }

/**
 * The row the route's path names (route config `fixture`), when it is a registered kind and the route has one path
 * parameter holding a UUID; null otherwise (with several, which one names the row is not known here).
 */
export function pathTargetOf(fixture: string | undefined, params: unknown): PathTarget | null {
  const row = pathRowOf(fixture);
  if (!row) return null;
  const values = Object.values((params ?? {}) as Record<string, unknown>);
  const id = values.length === 1 ? values[0] : undefined;
  return typeof id === 'string' && isUuid(id) ? { row, id: id.toLowerCase() } : null;
}

/** 404 NOT_FOUND, worded as the area's own, when the caller's organization has no such row; null when it has. */
export async function missingRow(db: Database, principal: Principal, target: PathTarget): Promise<AppError | null> {
  const found = await db.tenant(principal.orgId, (sql) => target.row.exists(sql, principal, target.id));
  return found ? null : notFound(target.row.what);
}
