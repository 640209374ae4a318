import { notFound } from '../../core/errors.js';
import { requirePermission, type ServiceContext } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';
import { audit } from '../../core/audit.js';
import { partsRepo, type SpecRow } from './project-parts.repo.js';
import { listUnderProject, requireProject } from './project-access.js';
import type { CreateSpecInput, Page, Paged } from './projects.schemas.js';
import { nonBlankText } from '../../core/text.js';

/** Specs of a project, newest first. */
export async function listSpecs(ctx: ServiceContext, input: { projectId: string } & Partial<Page>): Promise<Paged<SpecRow>> {
  return listUnderProject<SpecRow>(ctx, input, { rows: partsRepo.specs, count: partsRepo.countSpecs });
}

/** Creates a spec (title required, content defaults to empty). */
export async function createSpec(ctx: ServiceContext, input: { projectId: string } & CreateSpecInput): Promise<SpecRow> {
  const p = requirePermission(ctx, 'project.update');
  const title = nonBlankText(input.title, 'title');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await requireProject(sql, p.orgId, input.projectId, { writable: true });
    const row = await partsRepo.insertSpec(sql, { orgId: p.orgId, id: uuidv7(), projectId: input.projectId, title, content: input.content ?? '', createdBy: p.userId });
    await audit(sql, ctx, { action: 'spec.created', targetType: 'spec', targetId: row.spec_id, details: { project_id: input.projectId, title } });
    return row;
  });
}

/** One spec by id (any project of the organization). */
export async function getSpec(ctx: ServiceContext, input: { specId: string }): Promise<SpecRow> {
  const p = requirePermission(ctx, 'project.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => partsRepo.spec(sql, p.orgId, input.specId));
  if (!row) throw notFound('Spec');
  return row;
}
