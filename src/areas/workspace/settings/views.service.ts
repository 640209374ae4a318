import { actor, type ServiceContext } from '../../../core/context.js';
import { AppError, notFound } from '../../../core/errors.js';
import { audit } from '../../../core/audit.js';
import { uuidv7 } from '../../../core/ids.js';
import { assertBoundedJson } from '../common.js';
import { MAX_VIEWS_PER_USER, VIEW_FILTER_BOUNDS, type CreateViewInput } from './settings.schemas.js';
import { nonBlankText } from '../../../core/text.js';
import { lockNamed } from '../../../core/db/locks.js';
import { viewsRepo } from './settings.repo.js';

/** The caller's saved views in this organization, oldest first (at most 100 exist). */
export async function listViews(ctx: ServiceContext, page: { limit: number; offset: number }) {
  const p = actor(ctx);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const rows = await viewsRepo.page(sql, p.orgId, p.userId, page);
    const total = rows[0]?.total ?? (page.offset === 0 ? 0 : await viewsRepo.count(sql, p.orgId, p.userId));
    return { items: rows.map(({ total: _t, ...v }) => v), total };
  });
}

/** Creates a saved view; the 101st of a user in one organization is 409 CONFLICT (details.limit = 100). */
export async function createView(ctx: ServiceContext, input: CreateViewInput) {
  const p = actor(ctx);
  assertBoundedJson('filters', input.filters ?? {}, VIEW_FILTER_BOUNDS);
  if (input.sort) assertBoundedJson('sort', input.sort, VIEW_FILTER_BOUNDS);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    // Serializes creations of one user, so the limit holds under concurrent requests.
    await lockNamed(sql, `views:${p.orgId}:${p.userId}`);
    const n = await viewsRepo.count(sql, p.orgId, p.userId);
    if (n >= MAX_VIEWS_PER_USER) {
      throw new AppError('CONFLICT', `You already have ${MAX_VIEWS_PER_USER} saved views; delete one first`, { code: 'VIEW_LIMIT_REACHED', limit: MAX_VIEWS_PER_USER });
    }
    if (input.is_default) {
      await viewsRepo.clearDefault(sql, p.orgId, p.userId, input.resource);
    }
    const view = await viewsRepo.insert(sql, p.orgId, {
      id: uuidv7(), userId: p.userId, name: nonBlankText(input.name, 'name'), resource: input.resource,
      filters: input.filters ?? {}, sort: input.sort ?? null, columns: input.columns ?? null, isDefault: input.is_default ?? false,
    });
    await audit(sql, ctx, { action: 'saved_view.created', targetType: 'saved_view', targetId: view.id });
    return view;
  });
}

/** Deletes one of the caller's views; another user's view, or another organization's, is 404. */
export async function deleteView(ctx: ServiceContext, viewId: string) {
  const p = actor(ctx);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const n = await viewsRepo.remove(sql, p.orgId, p.userId, viewId);
    if (n === 0) throw notFound('Saved view');
    await audit(sql, ctx, { action: 'saved_view.deleted', targetType: 'saved_view', targetId: viewId });
    return { id: viewId, deleted: true };
  });
}
