import { actor, type ServiceContext } from '../../../core/context.js';
import { AppError, notFound } from '../../../core/errors.js';
import { audit } from '../../../core/audit.js';
import { uuidv7 } from '../../../core/ids.js';
import { assertBoundedJson } from '../common.js';
import { MAX_VIEWS_PER_USER, VIEW_FILTER_BOUNDS, type CreateViewInput } from './settings.schemas.js';
import { nonBlankText } from '../../../core/text.js';
import { lockNamed } from '../../../core/db/locks.js';

const COLS = 'id, name, resource, filters, sort, columns, is_default, created_at, updated_at';
interface ViewRow { id: string; name: string; resource: string; filters: Record<string, unknown>; sort: Record<string, unknown> | null; columns: string[] | null; is_default: boolean; created_at: string; updated_at: string }

/** The caller's saved views in this organization, oldest first (at most 100 exist). */
export async function listViews(ctx: ServiceContext, page: { limit: number; offset: number }) {
  const p = actor(ctx);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const rows = await sql.query<ViewRow & { total: number }>(`SELECT ${COLS}, count(*) OVER ()::int AS total FROM saved_views
      WHERE org_id = $1 AND user_id = $2 ORDER BY id LIMIT $3 OFFSET $4`, [p.orgId, p.userId, page.limit, page.offset]);
    const total = rows[0]?.total ?? (page.offset === 0 ? 0 : (await sql.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM saved_views WHERE org_id = $1 AND user_id = $2`, [p.orgId, p.userId]))!.n);
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
    const n = (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM saved_views WHERE org_id = $1 AND user_id = $2`, [p.orgId, p.userId]))!.n;
    if (n >= MAX_VIEWS_PER_USER) {
      throw new AppError('CONFLICT', `You already have ${MAX_VIEWS_PER_USER} saved views; delete one first`, { code: 'VIEW_LIMIT_REACHED', limit: MAX_VIEWS_PER_USER });
    }
    if (input.is_default) {
      await sql.exec(`UPDATE saved_views SET is_default = false, updated_at = now() WHERE org_id = $1 AND user_id = $2 AND resource = $3 AND is_default`, [p.orgId, p.userId, input.resource]);
    }
    const view = (await sql.one<ViewRow>(`INSERT INTO saved_views (org_id, id, user_id, name, resource, filters, sort, columns, is_default)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLS}`,
      [p.orgId, uuidv7(), p.userId, nonBlankText(input.name, 'name'), input.resource, input.filters ?? {}, input.sort ?? null, input.columns ?? null, input.is_default ?? false]))!;
    await audit(sql, ctx, { action: 'saved_view.created', targetType: 'saved_view', targetId: view.id });
    return view;
  });
}

/** Deletes one of the caller's views; another user's view, or another organization's, is 404. */
export async function deleteView(ctx: ServiceContext, viewId: string) {
  const p = actor(ctx);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const n = await sql.exec(`DELETE FROM saved_views WHERE org_id = $1 AND id = $2 AND user_id = $3`, [p.orgId, viewId, p.userId]);
    if (n === 0) throw notFound('Saved view');
    await audit(sql, ctx, { action: 'saved_view.deleted', targetType: 'saved_view', targetId: viewId });
    return { id: viewId, deleted: true };
  });
}
