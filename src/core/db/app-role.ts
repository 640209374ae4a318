import pg from 'pg';
import { APP_ROLE } from './database.js';

/**
 * Refuses a database whose application role is missing or lacks its privileges, before the server starts. Requests
 * run as APP_ROLE (row-level security); the role is created by the first migration, and a role is not part of a
 * pg_dump: a dump restored into another PostgreSQL server without creating it first has neither the role nor its
 * grants. The server then started, /v1/health said ok, and every tenant request was a 500.
 */
export async function assertAppRole(ownerUrl: string, role = APP_ROLE): Promise<void> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ role: boolean; grants: boolean | null }>(`SELECT
        EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS role,
        CASE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) THEN has_table_privilege($1, 'public.projects', 'SELECT, INSERT, UPDATE, DELETE') END AS grants`, [role]);
    if (!rows[0].role) throw new Error(`The database has no role "${role}", which every request runs as (a pg_dump restored without it?): create it with CREATE ROLE ${role} NOLOGIN NOSUPERUSER NOBYPASSRLS; and restore the dump again (README, "Backups")`);
    if (!rows[0].grants) throw new Error(`The role "${role}" lacks its privileges on this database's tables (a pg_dump restored before the role existed?): restore the dump again now that the role exists (README, "Backups")`);
  } finally {
    await client.end();
  }
}
