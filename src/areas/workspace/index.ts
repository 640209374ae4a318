import type { FastifyInstance } from 'fastify';
import { registerPathRow } from '../../core/http/path-rows.js';
import type { Platform } from '../../core/context.js';
import type { PlatformEvent } from '../../core/events.js';
import { DELIVERY_CONCURRENCY } from '../../core/jobs.js';
import bootstrapRoutes from './bootstrap/bootstrap.routes.js';
import settingsRoutes from './settings/settings.routes.js';
import slugRoutes from './slugs/slugs.routes.js';
import notificationRoutes from './notifications/notifications.routes.js';
import alertRuleRoutes from './alert-rules/alert-rules.routes.js';
import { createBuiltInNotifications, owesBuiltInNotifications } from './notifications/subscriber.js';
import { enabledRuleTypes } from './alert-rules/enabled-rule-types.js';
import { checkOverdueAfter, OVERDUE_SCAN_MS, scanOverdueTasks } from './notifications/overdue.js';
import { DELIVERY_JOB, EMAIL_DELIVERY_JOB, queueAlertDeliveries } from './alert-rules/dispatch.js';
import { deliveryHandler } from './alert-rules/delivery.js';
import { workspaceAdapters } from './adapters.js';
import { RETENTION_EVERY_MS } from '../../core/retention.js';
import { purgeWorkspace } from './retention.js';

/**
 * Turns one bus event into its in-app notifications and alert deliveries, in one transaction (so either
 * both are recorded or neither); a failing attempt is retried once, then logged. Most events owe nothing
 * (no recipient, no enabled rule for their type): the in-memory EnabledRuleTypes says so, without a database read.
 */
export async function handleWorkspaceEvent(platform: Platform, event: PlatformEvent): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (!owesBuiltInNotifications(event)
        && !(await enabledRuleTypes(platform.db).has(event.orgId, event.type))) return;
      const queued = await platform.db.tenantTx(event.orgId, async (sql) => {
        await createBuiltInNotifications(sql, event);
        return queueAlertDeliveries(sql, event, { emailConfigured: workspaceAdapters(platform).mailer.configured });
      });
      if (queued > 0) platform.jobs.poke();
      return;
    } catch (err) {
      if (attempt >= 2) { platform.log.error({ err, type: event.type, orgId: event.orgId }, 'workspace: event not turned into notifications'); return; }
    }
  }
}

/** Workspace (spec 4.6 minus privacy): bootstrap, settings, slugs, notifications, alert rules. */
export default async function workspaceArea(app: FastifyInstance) {
  registerPathRow('alert_rule', 'Alert rule', 'alert_rules');
  registerPathRow('saved_view', 'Saved view', 'saved_views', { ownedBy: 'user_id' });
  registerPathRow('notification', 'Notification', 'notifications', { ownedBy: 'user_id' });
  const { platform } = app;
  await app.register(bootstrapRoutes);
  await app.register(settingsRoutes);
  await app.register(slugRoutes);
  await app.register(notificationRoutes);
  await app.register(alertRuleRoutes);

  // Deliveries wait on outside peers (Slack, the SMTP server): capped, so hanging ones never take every slot.
  platform.jobs.register(DELIVERY_JOB, deliveryHandler(platform), { concurrency: DELIVERY_CONCURRENCY });
  if (workspaceAdapters(platform).mailer.configured) platform.jobs.register(EMAIL_DELIVERY_JOB, deliveryHandler(platform), { concurrency: DELIVERY_CONCURRENCY });
  platform.jobs.every('workspace.overdue-tasks', OVERDUE_SCAN_MS, async () => { await scanOverdueTasks(platform); });
  platform.jobs.every('workspace.retention', RETENTION_EVERY_MS, async () => { await purgeWorkspace(platform.db.sys); });
  enabledRuleTypes(platform.db); // subscribes now, so the listener is live by the first event
  const unsubscribe = platform.events.subscribe((e) => (e.orgId ? handleWorkspaceEvent(platform, e) : undefined));
  const unsubscribeOverdue = platform.events.subscribe((e) => checkOverdueAfter(platform, e));
  app.addHook('onClose', async () => { unsubscribe(); unsubscribeOverdue(); workspaceAdapters(platform).mailer.close(); });
}
