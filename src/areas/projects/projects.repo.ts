import type { Sql } from '../../core/db/database.js';
import type { Project, ProjectStatusFilter } from './projects.schemas.js';
import { lockNamed } from '../../core/db/locks.js';

export const PROJECT_COLS = `p.id, p.org_id, p.name, p.slug, p.description, p.prefix, p.visibility, p.category_id, p.owner_scope,
  p.is_active, p.created_by_user_id, p.created_at, p.updated_at, p.archived_at, p.deleted_at, p.settings`;

/** The status filter's condition on the projects row aliased `a`. */
const statusWhere = (status: ProjectStatusFilter, a = 'p') => ({
  active: `AND ${a}.is_active`,
  archived: `AND NOT ${a}.is_active AND ${a}.deleted_at IS NULL`,
  deleted: `AND NOT ${a}.is_active AND ${a}.deleted_at IS NOT NULL`,
  all: '',
})[status];

/** The status filter's total, from the per-organization counters kept by migration 0052's trigger (exact: same transaction). */
const countOf = (status: ProjectStatusFilter) => `(SELECT COALESCE((SELECT ${({
  active: 'c.active', archived: 'c.archived', deleted: 'c.deleted', all: 'c.active + c.archived + c.deleted',
})[status]} FROM project_counts c WHERE c.org_id = $1), 0))`;

/**
 * The list statement of one status filter: page and total in one round trip. The total is read from
 * project_counts (one row) instead of counting the organization's projects on every page (docs/benchmarks.md:
 * with 10,000 projects the count was most of the statement's time). Exported for the EXPLAIN test.
 */
export const listProjectsSql = (status: ProjectStatusFilter) =>
  `SELECT ${PROJECT_COLS}, ${countOf(status)}::int AS total FROM projects p
   WHERE p.org_id = $1 ${statusWhere(status)} ORDER BY p.id DESC LIMIT $2 OFFSET $3`;

type Row = Project & { total?: number };

export const projectsRepo = {
  async list(sql: Sql, orgId: string, status: ProjectStatusFilter, limit: number, offset: number) {
    const rows = await sql.query<Row>(listProjectsSql(status), [orgId, limit, offset]);
    // Past the last page there are no rows to carry the count; ask once more (rare).
    const total = rows.length ? rows[0].total! : offset === 0 ? 0 : await projectsRepo.count(sql, orgId, status);
    for (const r of rows) delete r.total;
    return { items: rows as Project[], total };
  },

  async count(sql: Sql, orgId: string, status: ProjectStatusFilter): Promise<number> {
    return (await sql.one<{ n: number }>(`SELECT ${countOf(status)}::int AS n`, [orgId]))!.n;
  },

  byId: (sql: Sql, orgId: string, id: string, forUpdate = false) =>
    sql.one<Project>(`SELECT ${PROJECT_COLS} FROM projects p WHERE p.org_id = $1 AND p.id = $2${forUpdate ? ' FOR NO KEY UPDATE' : ''}`, [orgId, id]),

  /** Whether a project exists (any state) and whether it is active; used by sub-resources. */
  state: (sql: Sql, orgId: string, id: string) =>
    sql.one<{ is_active: boolean }>(`SELECT is_active FROM projects WHERE org_id = $1 AND id = $2`, [orgId, id]),

  slugTaken: async (sql: Sql, orgId: string, slug: string, exceptId: string | null = null) =>
    !!(await sql.one(`SELECT 1 FROM projects WHERE org_id = $1 AND slug = $2 AND id IS DISTINCT FROM $3`, [orgId, slug, exceptId])),

  /** Serializes project creation and unarchiving per organization, so the plan limit holds under concurrency. */
  lockOrgProjects: (sql: Sql, orgId: string) => lockNamed(sql, `projects:${orgId}`),

  countActive: async (sql: Sql, orgId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE org_id = $1 AND is_active`, [orgId]))!.n,

  insert: (sql: Sql, p: { orgId: string; id: string; name: string; slug: string; description: string | null; visibility: string; settings: object; createdBy: string }) =>
    sql.one<Project>(`WITH ins AS (
        INSERT INTO projects (org_id, id, name, slug, description, visibility, settings, created_by_user_id)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *
      ), owner AS (
        INSERT INTO project_members (org_id, project_id, user_id, role) SELECT org_id, id, created_by_user_id, 'owner' FROM ins
      ) SELECT ${PROJECT_COLS} FROM ins p`,
      [p.orgId, p.id, p.name, p.slug, p.description, p.visibility, p.settings, p.createdBy]) as Promise<Project>,

  /** Applies the given fields; `undefined` keeps a column, `description: null` clears it. */
  update: (sql: Sql, orgId: string, id: string, f: { name?: string; slug?: string; description?: string | null; visibility?: string; settings?: object; isActive?: boolean; deleted?: boolean }) =>
    sql.one<Project>(`UPDATE projects p SET
        name = COALESCE($3::text, name), slug = COALESCE($4::text, slug),
        description = CASE WHEN $5::boolean THEN $6::text ELSE description END,
        visibility = COALESCE($7::text, visibility), settings = COALESCE($8::jsonb, settings),
        is_active = COALESCE($9::boolean, is_active),
        archived_at = CASE WHEN $9::boolean IS NULL THEN archived_at WHEN $9::boolean THEN NULL WHEN is_active THEN now() ELSE archived_at END,
        deleted_at = CASE WHEN $10::boolean THEN COALESCE(deleted_at, now()) WHEN $9::boolean THEN NULL ELSE deleted_at END,
        updated_at = now()
      WHERE p.org_id = $1 AND p.id = $2 RETURNING ${PROJECT_COLS}`,
      [orgId, id, f.name ?? null, f.slug ?? null, f.description !== undefined, f.description ?? null, f.visibility ?? null,
        f.settings ?? null, f.isActive ?? null, f.deleted ?? false]),
};
