import type { Sql } from './database.js';

/**
 * Takes the transaction-scoped advisory lock named `name` (waits for it; released at commit or rollback). For
 * serializing a check-then-write that no row lock covers: an organization's owners, a slug, a project's phase
 * order. Names carry their kind as a prefix (`org-owners:<org id>`), so unrelated locks never collide by design.
 */
export async function lockNamed(sql: Sql, name: string): Promise<void> {
  await sql.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [name]);
}
