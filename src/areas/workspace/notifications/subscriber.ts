import type { Sql } from '../../../core/db/database.js';
import type { PlatformEvent } from '../../../core/events.js';
import { actionUrlOf, describeEvent } from '../alert-rules/dispatch.js';
import { notificationsRepo } from './notifications.repo.js';
import type { NotificationType } from './notifications.schemas.js';

/** Events that notify their recipients in the app, whatever the alert rules say. */
const BUILT_IN: Record<string, { type: NotificationType; pref?: string }> = {
  'task.assigned': { type: 'action_required' },
  'task.mentioned': { type: 'info', pref: 'mentionAlerts' },
  'task.overdue': { type: 'warning' },
};

/** Whether the event may owe anyone a built-in notification (a recipient other than the actor); no database work. */
export function owesBuiltInNotifications(event: PlatformEvent): boolean {
  return !!BUILT_IN[event.type] && !!event.recipients?.some((u) => u !== event.actorUserId);
}

/**
 * Creates the in-app notifications an event owes its recipients (task assigned, mentioned, overdue),
 * in the caller's transaction. The actor is not notified of their own action, and a user who turned
 * mentionAlerts off in their personalization gets no mention notifications.
 */
export async function createBuiltInNotifications(sql: Sql, event: PlatformEvent): Promise<number> {
  const rule = BUILT_IN[event.type];
  if (!rule || !owesBuiltInNotifications(event)) return 0;
  let recipients = [...new Set(event.recipients)].filter((u) => u !== event.actorUserId);
  if (recipients.length === 0) return 0;
  // Only members of the organization (a recipient removed meanwhile is skipped).
  recipients = await notificationsRepo.membersAmong(sql, event.orgId, recipients);
  if (rule.pref) {
    const off = new Set(await notificationsRepo.optedOutAmong(sql, event.orgId, recipients, rule.pref));
    recipients = recipients.filter((u) => !off.has(u));
  }
  const title = describeEvent(event, 'recipient');
  for (const userId of recipients) {
    await notificationsRepo.insert(sql, event.orgId, {
      userId, type: rule.type, title, body: null, channel: 'in_app', actionUrl: actionUrlOf(event),
      eventType: event.type, targetType: event.targetType, targetId: event.targetId,
    });
  }
  return recipients.length;
}
