import type { Sql } from '../../core/db/database.js';
import { lockNamed } from '../../core/db/locks.js';
import { MAX_SORT_ORDER } from './projects.schemas.js';

export interface MemberRow { user_id: string; role: string; email: string; name: string; created_at: string }
export interface CategoryRow { category_id: string; project_id: string; parent_id: string | null; name: string; description: string | null; color: string | null; created_at: string; updated_at: string }
export interface PhaseRow { phase_id: string; project_id: string; name: string; description: string | null; sort_order: number; created_at: string; updated_at: string }
export interface SpecRow { spec_id: string; project_id: string; title: string; content: string; created_at: string; updated_at: string }

type WithTotal<T> = T & { total?: number };
/** Splits the `count(*) OVER ()` column off a page of rows. */
export function splitTotal<T>(rows: WithTotal<T>[]): { items: T[]; total: number | null } {
  const total = rows.length ? rows[0].total! : null;
  for (const r of rows) delete r.total;
  return { items: rows as T[], total };
}

const MEMBER_COLS = `pm.user_id, pm.role, u.email, u.name, pm.created_at`;
const CATEGORY_COLS = `c.id AS category_id, c.project_id, c.parent_id, c.name, c.description, c.color, c.created_at, c.updated_at`;
const PHASE_COLS = `ph.id AS phase_id, ph.project_id, ph.name, ph.description, ph.sort_order, ph.created_at, ph.updated_at`;
const SPEC_COLS = `s.id AS spec_id, s.project_id, s.title, s.content, s.created_at, s.updated_at`;

export const partsRepo = {
  members: (sql: Sql, orgId: string, projectId: string, limit: number, offset: number) =>
    sql.query<WithTotal<MemberRow>>(`SELECT ${MEMBER_COLS}, count(*) OVER () AS total FROM project_members pm JOIN users u ON u.id = pm.user_id
      WHERE pm.org_id = $1 AND pm.project_id = $2 ORDER BY pm.created_at, pm.user_id LIMIT $3 OFFSET $4`, [orgId, projectId, limit, offset]),
  countMembers: async (sql: Sql, orgId: string, projectId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM project_members WHERE org_id = $1 AND project_id = $2`, [orgId, projectId]))!.n,
  /**
   * Whether the user is a member of the organization, holding the membership until the transaction ends: a removal
   * running now (which takes the user's project memberships with it, migration 0058) waits for this write and then
   * removes it too, or this finds the membership gone.
   */
  isOrgMember: async (sql: Sql, orgId: string, userId: string) =>
    !!(await sql.one(`SELECT 1 FROM memberships WHERE org_id = $1 AND user_id = $2 FOR KEY SHARE`, [orgId, userId])),
  /** Inserts the member and returns it, or nothing when the user already is one. */
  addMember: (sql: Sql, orgId: string, projectId: string, userId: string, role: string) =>
    sql.one<MemberRow>(`WITH ins AS (
        INSERT INTO project_members (org_id, project_id, user_id, role) VALUES ($1, $2, $3, $4)
        ON CONFLICT DO NOTHING RETURNING *
      ) SELECT ${MEMBER_COLS} FROM ins pm JOIN users u ON u.id = pm.user_id`, [orgId, projectId, userId, role]),

  categories: (sql: Sql, orgId: string, projectId: string, limit: number, offset: number) =>
    sql.query<WithTotal<CategoryRow>>(`SELECT ${CATEGORY_COLS}, count(*) OVER () AS total FROM project_categories c
      WHERE c.org_id = $1 AND c.project_id = $2 ORDER BY c.id LIMIT $3 OFFSET $4`, [orgId, projectId, limit, offset]),
  countCategories: async (sql: Sql, orgId: string, projectId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM project_categories WHERE org_id = $1 AND project_id = $2`, [orgId, projectId]))!.n,
  categoryProject: (sql: Sql, orgId: string, id: string) =>
    sql.one<{ project_id: string }>(`SELECT project_id FROM project_categories WHERE org_id = $1 AND id = $2`, [orgId, id]),
  insertCategory: (sql: Sql, c: { orgId: string; id: string; projectId: string; parentId: string | null; name: string; description: string | null; color: string | null }) =>
    sql.one<CategoryRow>(`INSERT INTO project_categories AS c (org_id, id, project_id, parent_id, name, description, color)
      VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${CATEGORY_COLS}`,
      [c.orgId, c.id, c.projectId, c.parentId, c.name, c.description, c.color]) as Promise<CategoryRow>,

  phases: (sql: Sql, orgId: string, projectId: string, limit: number, offset: number) =>
    sql.query<WithTotal<PhaseRow>>(`SELECT ${PHASE_COLS}, count(*) OVER () AS total FROM project_phases ph
      WHERE ph.org_id = $1 AND ph.project_id = $2 ORDER BY ph.sort_order, ph.id LIMIT $3 OFFSET $4`, [orgId, projectId, limit, offset]),
  countPhases: async (sql: Sql, orgId: string, projectId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM project_phases WHERE org_id = $1 AND project_id = $2`, [orgId, projectId]))!.n,
  /** Serializes "after the last phase" per project, so phases created at once get distinct places. */
  lockPhaseOrder: (sql: Sql, orgId: string, projectId: string) =>
    lockNamed(sql, `phases:${orgId}:${projectId}`),

  /** sort_order defaults to one past the last phase, at most the largest value a client may send (1,000,000; ties go by id). */
  insertPhase: (sql: Sql, ph: { orgId: string; id: string; projectId: string; name: string; description: string | null; sortOrder: number | null }) =>
    sql.one<PhaseRow>(`INSERT INTO project_phases AS ph (org_id, id, project_id, name, description, sort_order)
      VALUES ($1, $2, $3, $4, $5, COALESCE($6::int, (SELECT least(COALESCE(max(sort_order), 0) + 1, ${MAX_SORT_ORDER}) FROM project_phases WHERE org_id = $1 AND project_id = $3)))
      RETURNING ${PHASE_COLS}`, [ph.orgId, ph.id, ph.projectId, ph.name, ph.description, ph.sortOrder]) as Promise<PhaseRow>,

  specs: (sql: Sql, orgId: string, projectId: string, limit: number, offset: number) =>
    sql.query<WithTotal<SpecRow>>(`SELECT ${SPEC_COLS}, count(*) OVER () AS total FROM specs s
      WHERE s.org_id = $1 AND s.project_id = $2 ORDER BY s.id DESC LIMIT $3 OFFSET $4`, [orgId, projectId, limit, offset]),
  countSpecs: async (sql: Sql, orgId: string, projectId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM specs WHERE org_id = $1 AND project_id = $2`, [orgId, projectId]))!.n,
  spec: (sql: Sql, orgId: string, id: string) =>
    sql.one<SpecRow>(`SELECT ${SPEC_COLS} FROM specs s WHERE s.org_id = $1 AND s.id = $2`, [orgId, id]),
  insertSpec: (sql: Sql, s: { orgId: string; id: string; projectId: string; title: string; content: string; createdBy: string }) =>
    sql.one<SpecRow>(`INSERT INTO specs AS s (org_id, id, project_id, title, content, created_by) VALUES ($1, $2, $3, $4, $5, $6)
      RETURNING ${SPEC_COLS}`, [s.orgId, s.id, s.projectId, s.title, s.content, s.createdBy]) as Promise<SpecRow>,
};
