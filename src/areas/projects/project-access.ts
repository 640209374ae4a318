import { AppError, notFound } from '../../core/errors.js';
import type { Sql } from '../../core/db/database.js';
import { requirePermission, type ServiceContext } from '../../core/context.js';
import { projectsRepo } from './projects.repo.js';
import type { Page, Paged } from './projects.schemas.js';
import { splitTotal } from './project-parts.repo.js';

/**
 * 404 when the project is not in the caller's organization; with `writable`, 409 when it is archived or deleted.
 * `field` names the body field that referred to it (details.field of the 404).
 */
export async function requireProject(sql: Sql, orgId: string, projectId: string, opts: { writable?: boolean; field?: string } = {}): Promise<void> {
  const state = await projectsRepo.state(sql, orgId, projectId);
  if (!state) throw notFound('Project', opts.field ? { field: opts.field } : undefined);
  if (opts.writable && !state.is_active) {
    throw new AppError('CONFLICT', 'The project is archived; unarchive it (PUT is_active:true) before changing its content', { code: 'PROJECT_ARCHIVED' });
  }
}

export const clampPage = (page: Partial<Page> = {}): Page => ({
  limit: Math.min(Math.max(page.limit ?? 50, 1), 100),
  offset: Math.max(page.offset ?? 0, 0),
});

/**
 * A page of a project's sub-resource in one round trip: the project's existence (404) and the total are
 * only asked separately when the page comes back empty.
 */
export async function pageUnderProject<T>(sql: Sql, orgId: string, projectId: string, page: Page,
  list: () => Promise<Array<T & { total?: number }>>, count: () => Promise<number>): Promise<Paged<T>> {
  const { items, total } = splitTotal<T>(await list());
  if (total !== null) return { items, total, ...page };
  await requireProject(sql, orgId, projectId);
  return { items, total: page.offset === 0 ? 0 : await count(), ...page };
}

type PartLister<T> = {
  rows: (sql: Sql, orgId: string, projectId: string, limit: number, offset: number) => Promise<Array<T & { total?: number }>>;
  count: (sql: Sql, orgId: string, projectId: string) => Promise<number>;
};

/** The list route of a project's sub-resource (members, categories, phases, specs): `project.view`, one page. */
export async function listUnderProject<T>(ctx: ServiceContext, input: { projectId: string } & Partial<Page>, part: PartLister<T>): Promise<Paged<T>> {
  const p = requirePermission(ctx, 'project.view');
  const page = clampPage(input);
  return ctx.platform.db.tenant(p.orgId, (sql) => pageUnderProject<T>(sql, p.orgId, input.projectId, page,
    () => part.rows(sql, p.orgId, input.projectId, page.limit, page.offset),
    () => part.count(sql, p.orgId, input.projectId)));
}
