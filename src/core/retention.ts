import type { Sql } from './db/database.js';

/**
 * Retention: rows that have served their purpose are deleted by their area, once an hour on one node
 * (`platform.jobs.every`), a batch per statement so no purge holds locks or grows a transaction for long.
 * docs/decisions.md, "Retention", lists what is kept how long, and what is kept for good.
 */
export const RETENTION_EVERY_MS = 3_600_000;
/** Rows one purge statement deletes at most. */
export const PURGE_BATCH = 5_000;

/**
 * Deletes the rows of `table` matching `where` (SQL over the table's columns, unqualified; its parameters start at $2),
 * PURGE_BATCH at a time, until none is left; returns how many went. Runs as the owner (every organization).
 */
export async function purge(sys: Sql, table: string, where: string, params: unknown[] = []): Promise<number> {
  const statement = `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT $1))`;
  let total = 0;
  for (;;) {
    const n = await sys.exec(statement, [PURGE_BATCH, ...params]);
    total += n;
    if (n < PURGE_BATCH) return total;
  }
}
