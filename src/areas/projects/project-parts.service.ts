import { AppError, conflict, notFound } from '../../core/errors.js';
import { requirePermission, type ServiceContext } from '../../core/context.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { uuidv7 } from '../../core/ids.js';
import { audit } from '../../core/audit.js';
import { partsRepo, type CategoryRow, type MemberRow, type PhaseRow } from './project-parts.repo.js';
import { listUnderProject, requireProject } from './project-access.js';
import type { AddMemberInput, CreateCategoryInput, CreatePhaseInput, Page, Paged } from './projects.schemas.js';
import { nonBlankText } from '../../core/text.js';

type ProjectRef = { projectId: string };

/** Members of a project, oldest first. */
export async function listProjectMembers(ctx: ServiceContext, input: ProjectRef & Partial<Page>): Promise<Paged<MemberRow>> {
  return listUnderProject<MemberRow>(ctx, input, { rows: partsRepo.members, count: partsRepo.countMembers });
}

/** Adds a member of the organization to the project; a user outside the organization is 404, an existing member 409. */
export async function addProjectMember(ctx: ServiceContext, input: ProjectRef & AddMemberInput): Promise<MemberRow> {
  const p = requirePermission(ctx, 'project.manage_members');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await requireProject(sql, p.orgId, input.projectId);
    if (!(await partsRepo.isOrgMember(sql, p.orgId, input.user_id))) throw notFound('User', { field: 'user_id' });
    const row = await partsRepo.addMember(sql, p.orgId, input.projectId, input.user_id, input.role);
    if (!row) throw conflict('This user is already a member of the project', { field: 'user_id', code: 'ALREADY_MEMBER' });
    await audit(sql, ctx, { action: 'project.member_added', targetType: 'project', targetId: input.projectId, details: { user_id: input.user_id, role: input.role } });
    return row;
  });
}

/** Categories of a project in creation order; `parent_id` links a sub-category to its parent. */
export async function listCategories(ctx: ServiceContext, input: ProjectRef & Partial<Page>): Promise<Paged<CategoryRow>> {
  return listUnderProject<CategoryRow>(ctx, input, { rows: partsRepo.categories, count: partsRepo.countCategories });
}

/** Creates a category; the parent must be a category of the same project, names are unique under one parent. */
export async function createCategory(ctx: ServiceContext, input: ProjectRef & CreateCategoryInput): Promise<CategoryRow> {
  const p = requirePermission(ctx, 'project.update');
  const name = nonBlankText(input.name, 'name');
  try {
    return await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
      await requireProject(sql, p.orgId, input.projectId, { writable: true });
      if (input.parent_id) {
        const parent = await partsRepo.categoryProject(sql, p.orgId, input.parent_id);
        if (!parent) throw notFound('Parent category', { field: 'parent_id' });
        if (parent.project_id !== input.projectId) throw new AppError('VALIDATION_ERROR', 'parent_id must be a category of the same project', { field: 'parent_id' });
      }
      const row = await partsRepo.insertCategory(sql, {
        orgId: p.orgId, id: uuidv7(), projectId: input.projectId, parentId: input.parent_id ?? null, name,
        description: input.description ?? null, color: input.color ?? null,
      });
      await audit(sql, ctx, { action: 'project.category_created', targetType: 'project_category', targetId: row.category_id, details: { project_id: input.projectId, name } });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'project_categories_name_key')) throw conflict(`A category named "${name}" already exists here`, { field: 'name', code: 'NAME_EXISTS' });
    throw err;
  }
}

/** Phases of a project ordered by sort_order (then creation). */
export async function listPhases(ctx: ServiceContext, input: ProjectRef & Partial<Page>): Promise<Paged<PhaseRow>> {
  return listUnderProject<PhaseRow>(ctx, input, { rows: partsRepo.phases, count: partsRepo.countPhases });
}

/** Creates a phase; without sort_order it goes after the last one. */
export async function createPhase(ctx: ServiceContext, input: ProjectRef & CreatePhaseInput): Promise<PhaseRow> {
  const p = requirePermission(ctx, 'project.update');
  const name = nonBlankText(input.name, 'name');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await requireProject(sql, p.orgId, input.projectId, { writable: true });
    if (input.sort_order === undefined) await partsRepo.lockPhaseOrder(sql, p.orgId, input.projectId);
    const row = await partsRepo.insertPhase(sql, {
      orgId: p.orgId, id: uuidv7(), projectId: input.projectId, name, description: input.description ?? null, sortOrder: input.sort_order ?? null,
    });
    await audit(sql, ctx, { action: 'project.phase_created', targetType: 'project_phase', targetId: row.phase_id, details: { project_id: input.projectId, name } });
    return row;
  });
}
