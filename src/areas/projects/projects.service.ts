import { AppError, notFound } from '../../core/errors.js';
import { actor, requirePermission, type ServiceContext } from '../../core/context.js';
import { isUniqueViolation, type Sql } from '../../core/db/database.js';
import { uuidv7 } from '../../core/ids.js';
import { audit } from '../../core/audit.js';
import { assertSlug, slugify } from '../../core/slugs.js';
import { tierLimits } from '../../core/pricing.js';
import { projectsRepo } from './projects.repo.js';
import type { CreateProjectInput, Paged, Project, ProjectStatusFilter, UpdateProjectInput } from './projects.schemas.js';
import { emit } from './task.events.js';
import { sameJsonValue } from '../../core/json-value.js';
import { nonBlankText } from '../../core/text.js';

const slugExists = (slug: string) => new AppError('PROJECT_SLUG_EXISTS', `Project slug "${slug}" is already used in this organization`, { field: 'slug' });

/**
 * Takes the organization's project lock, then checks the plan limit. The lock is taken on every plan, unlimited
 * ones included: it also serializes the probe for a free generated slug ("-2", "-3", ...), without which two
 * concurrent creations from the same name both pick the same slug and the second fails with PROJECT_SLUG_EXISTS
 * although it sent no slug.
 */
async function lockAndAssertUnderProjectLimit(sql: Sql, ctx: ServiceContext): Promise<void> {
  const p = actor(ctx);
  await projectsRepo.lockOrgProjects(sql, p.orgId);
  const max = tierLimits(p.org.planTier).max_projects;
  if (max === null) return;
  if ((await projectsRepo.countActive(sql, p.orgId)) >= max) {
    throw new AppError('PROJECT_LIMIT_REACHED', `The ${p.org.planTier} plan allows ${max} active projects; archive one or upgrade the plan`, { limit: max, plan_tier: p.org.planTier });
  }
}

/** Lists projects newest first; `status` is active (default), archived, deleted or all. */
export async function listProjects(ctx: ServiceContext, input: { status?: ProjectStatusFilter; limit?: number; offset?: number } = {}): Promise<Paged<Project>> {
  const p = requirePermission(ctx, 'project.view');
  const status = input.status ?? 'active';
  const limit = Math.min(Math.max(input.limit ?? 50, 1), 100);
  const offset = Math.max(input.offset ?? 0, 0);
  const { items, total } = await ctx.platform.db.tenant(p.orgId, (sql) => projectsRepo.list(sql, p.orgId, status, limit, offset));
  return { items, total, limit, offset };
}

/** One project in any state (archived and soft-deleted projects stay readable; their data is kept). */
export async function getProject(ctx: ServiceContext, input: { projectId: string }): Promise<Project> {
  const p = requirePermission(ctx, 'project.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => projectsRepo.byId(sql, p.orgId, input.projectId));
  if (!row) throw notFound('Project');
  return row;
}

/** Creates a project (slug generated from the name when omitted); the creator becomes its owner member. */
export async function createProject(ctx: ServiceContext, input: CreateProjectInput): Promise<Project> {
  const p = requirePermission(ctx, 'project.create');
  const name = nonBlankText(input.name, 'name');
  if (input.slug !== undefined) assertSlug(input.slug);
  let slug = input.slug ?? slugify(name);
  try {
    const project = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
      await lockAndAssertUnderProjectLimit(sql, ctx);
      if (input.slug !== undefined) {
        if (await projectsRepo.slugTaken(sql, p.orgId, slug)) throw slugExists(slug);
      } else {
        const base = slug;
        for (let i = 2; await projectsRepo.slugTaken(sql, p.orgId, slug); i++) slug = i < 20 ? `${base}-${i}` : `${base}-${uuidv7().slice(-8)}`;
      }
      const row = await projectsRepo.insert(sql, {
        orgId: p.orgId, id: uuidv7(), name, slug, description: input.description ?? null,
        visibility: input.visibility ?? 'private', settings: input.settings ?? {}, createdBy: p.userId,
      });
      await audit(sql, ctx, { action: 'project.created', targetType: 'project', targetId: row.id, details: { slug: row.slug, name: row.name } });
      return row;
    });
    emit(ctx, 'project.created', project.id, { project_id: project.id, name: project.name, slug: project.slug });
    return project;
  } catch (err) {
    if (isUniqueViolation(err, 'projects_slug_key')) throw slugExists(slug);
    throw err;
  }
}

/**
 * Updates the given fields; `description: null` clears it. `is_active:false` archives, `is_active:true`
 * unarchives (also restores a soft-deleted project) and counts against the plan's project limit.
 */
export async function updateProject(ctx: ServiceContext, input: { projectId: string } & UpdateProjectInput): Promise<Project> {
  const p = requirePermission(ctx, 'project.update');
  const { projectId, ...fields } = input;
  if (Object.keys(fields).length === 0) throw new AppError('VALIDATION_ERROR', 'Send at least one field to change');
  if (fields.name !== undefined) nonBlankText(fields.name, 'name');
  if (fields.slug !== undefined) assertSlug(fields.slug);
  try {
    const { before, after, changed } = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
      const before = await projectsRepo.byId(sql, p.orgId, projectId, true);
      if (!before) throw notFound('Project');
      // A PUT that changes nothing (every given field already has its value) writes, audits and emits nothing, as
      // for tasks; the current project is the answer.
      const wanted: Record<string, unknown> = { ...fields, ...(fields.name !== undefined ? { name: fields.name.trim() } : {}) };
      const differs = (k: string) => !sameJsonValue((before as Record<string, unknown>)[k], wanted[k]);
      if (!Object.keys(wanted).some(differs)) return { before, after: before, changed: [] as string[] };
      if (fields.slug !== undefined && fields.slug !== before.slug && await projectsRepo.slugTaken(sql, p.orgId, fields.slug, projectId)) throw slugExists(fields.slug);
      if (fields.is_active === true && !before.is_active) await lockAndAssertUnderProjectLimit(sql, ctx);
      const after = (await projectsRepo.update(sql, p.orgId, projectId, {
        name: fields.name?.trim(), slug: fields.slug, description: fields.description, visibility: fields.visibility,
        settings: fields.settings, isActive: fields.is_active,
      }))!;
      const changed = Object.keys(fields).filter((k) => !sameJsonValue((before as Record<string, unknown>)[k], (after as Record<string, unknown>)[k]));
      await audit(sql, ctx, { action: 'project.updated', targetType: 'project', targetId: projectId, details: { fields: changed } });
      if (before.is_active !== after.is_active) {
        await audit(sql, ctx, { action: after.is_active ? 'project.unarchived' : 'project.archived', targetType: 'project', targetId: projectId });
      }
      return { before, after, changed };
    });
    if (!changed.length) return after;
    const data = { project_id: projectId, name: after.name, slug: after.slug };
    emit(ctx, 'project.updated', projectId, { ...data, fields: changed });
    if (before.is_active !== after.is_active) emit(ctx, after.is_active ? 'project.unarchived' : 'project.archived', projectId, data);
    return after;
  } catch (err) {
    if (isUniqueViolation(err, 'projects_slug_key')) throw slugExists(fields.slug ?? '');
    throw err;
  }
}

/** Soft delete: `is_active` false and `deleted_at` set; data and slug are kept, the project leaves listings. */
export async function deleteProject(ctx: ServiceContext, input: { projectId: string }): Promise<{ id: string; is_active: false }> {
  const p = requirePermission(ctx, 'project.update'); // spec part 3: "caller may update"
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const before = await projectsRepo.byId(sql, p.orgId, input.projectId, true);
    if (!before) throw notFound('Project');
    // Deleting a deleted project answers the same and changes nothing: no second event, audit row or timestamp.
    if (!before.is_active && before.deleted_at !== null) return null;
    const row = (await projectsRepo.update(sql, p.orgId, input.projectId, { isActive: false, deleted: true }))!;
    await audit(sql, ctx, { action: 'project.deleted', targetType: 'project', targetId: input.projectId, details: { slug: row.slug } });
    return { row, wasActive: before.is_active };
  });
  if (!row) return { id: input.projectId, is_active: false };
  const data = { project_id: input.projectId, name: row.row.name, slug: row.row.slug };
  // is_active changes, so project.archived as for a PUT: a later restore's project.unarchived then has its pair.
  if (row.wasActive) emit(ctx, 'project.archived', input.projectId, data);
  emit(ctx, 'project.deleted', input.projectId, data);
  return { id: input.projectId, is_active: false };
}
