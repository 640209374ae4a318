import type { Sql } from '../../../core/db/database.js';

export const slugsRepo = {
  /** Whether a project of the organization has the slug. */
  projectSlugTaken: async (sql: Sql, orgId: string, slug: string) =>
    !!(await sql.one(`SELECT 1 FROM projects WHERE org_id = $1 AND slug = $2`, [orgId, slug])),
  /** Whether the SaaS builder's saas_packages table exists yet. */
  packagesTableExists: async (sql: Sql) =>
    !!(await sql.one<{ t: string | null }>(`SELECT to_regclass('public.saas_packages')::text AS t`))?.t,
  /** Whether any package has the slug (global); needs the saas_packages table. */
  packageSlugTaken: async (sql: Sql, slug: string) =>
    !!(await sql.one(`SELECT 1 FROM saas_packages WHERE slug = $1 LIMIT 1`, [slug])),
};
