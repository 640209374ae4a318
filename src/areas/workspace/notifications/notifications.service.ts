import { actor, type ServiceContext } from '../../../core/context.js';
import { notFound } from '../../../core/errors.js';
import { audit } from '../../../core/audit.js';
import { notificationsRepo } from './notifications.repo.js';
import type { ListQueryInput, UpdateInput } from './notifications.schemas.js';

/**
 * The caller's notifications in this organization, newest first. Filters are exact matches and apply only
 * when given (no default hides archived ones). An API key sees the notifications of the user who created it.
 */
export async function listNotifications(ctx: ServiceContext, q: ListQueryInput) {
  const p = actor(ctx);
  const rows = await ctx.platform.db.tenant(p.orgId, (sql) => notificationsRepo.list(sql, p.orgId, p.userId, q));
  const total = rows[0]?.total ?? 0;
  const unread = rows[0]?.unread ?? 0;
  const notifications = rows.filter((r) => r.id !== null).map(({ total: _t, unread: _u, ...n }) => n);
  return { notifications, unread_count: unread, total };
}

/** Marks read/unread and archived/unarchived; only the recipient may (others get 404). */
export async function updateNotification(ctx: ServiceContext, id: string, patch: UpdateInput) {
  const p = actor(ctx);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const n = await notificationsRepo.update(sql, p.orgId, p.userId, id, patch);
    if (!n) throw notFound('Notification');
    await audit(sql, ctx, { action: 'notification.updated', targetType: 'notification', targetId: id, details: { ...patch } });
    return n;
  });
}

export async function deleteNotification(ctx: ServiceContext, id: string) {
  const p = actor(ctx);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    if ((await notificationsRepo.remove(sql, p.orgId, p.userId, id)) === 0) throw notFound('Notification');
    await audit(sql, ctx, { action: 'notification.deleted', targetType: 'notification', targetId: id });
    return { id, deleted: true };
  });
}
