import type { Sql } from '../../../core/db/database.js';
import type { PlatformEvent } from '../../../core/events.js';
import { enqueue } from '../../../core/jobs.js';
import { uuidv7 } from '../../../core/ids.js';
import { alertRulesRepo } from './alert-rules.repo.js';
import { matchesConditions } from './conditions.js';
import { ruleWants } from './event-types.js';

export const DELIVERY_JOB = 'alert.deliver';
/**
 * E-mail deliveries have their own job kind, registered only on nodes with SMTP configured, so a node
 * without it never claims (and fails) one.
 */
export const EMAIL_DELIVERY_JOB = 'alert.deliver.email';
export const EMAIL_NOT_CONFIGURED = 'E-mail is not configured on this deployment (SMTP_URL, SMTP_FROM)';
/** Attempts per delivery; the runner waits 2, 4, 8, 16 s between them. */
export const DELIVERY_MAX_ATTEMPTS = 5;

/**
 * Matches the enabled rules of the event's organization (same event_type, conditions hold) and records one
 * delivery per rule and channel, each with its durable job, in the caller's transaction: a delivery exists
 * exactly when its job does. Returns how many deliveries were queued.
 */
export async function queueAlertDeliveries(sql: Sql, event: PlatformEvent, opts: { emailConfigured: boolean }): Promise<number> {
  const rules = (await alertRulesRepo.enabledFor(sql, event.orgId, event.type))
    .filter((r) => ruleWants(r.event_type, event.type) && matchesConditions(r.conditions, event));
  let n = 0;
  for (const rule of rules) {
    for (const channel of rule.channels) {
      const id = uuidv7();
      // Without SMTP here, an e-mail delivery is recorded as failed at once, with the reason.
      const failedWith = channel === 'email' && !opts.emailConfigured ? EMAIL_NOT_CONFIGURED : undefined;
      await alertRulesRepo.insertDelivery(sql, {
        orgId: event.orgId, id, ruleId: rule.id, eventType: event.type, targetType: event.targetType ?? null, targetId: event.targetId ?? null, channel, event, failedWith,
      });
      if (failedWith) continue;
      await enqueue(sql, { orgId: event.orgId, kind: channel === 'email' ? EMAIL_DELIVERY_JOB : DELIVERY_JOB, payload: { delivery_id: id }, maxAttempts: DELIVERY_MAX_ATTEMPTS });
      n++;
    }
  }
  return n;
}

/**
 * One line describing an event, for notification titles, e-mail subjects and Slack messages. `to`: `recipient` for the
 * people the event is about (the mentioned members' own notifications), `watcher` for an alert rule's audience, who
 * may not be among them.
 */
export function describeEvent(e: Pick<PlatformEvent, 'type' | 'targetType' | 'targetId' | 'data'>, to: 'recipient' | 'watcher' = 'watcher'): string {
  const d = e.data ?? {};
  const what = typeof d.title === 'string' ? `"${d.title}"` : typeof d.name === 'string' ? `"${d.name}"` : `${e.targetType} ${e.targetId}`;
  switch (e.type) {
    case 'task.overdue': return `Task ${what} is overdue${typeof d.due_date === 'string' ? ` (due ${d.due_date})` : ''}`;
    case 'task.assigned': return `Task ${what} was assigned`;
    case 'task.mentioned': return to === 'recipient' ? `You were mentioned in task ${what}` : `Members were mentioned in task ${what}`;
    case 'task.created': return `Task ${what} was created`;
    case 'task.completed': return `Task ${what} was completed`;
    case 'task.status_changed': return `Task ${what} moved${typeof d.from === 'string' ? ` from ${d.from}` : ''}${typeof d.to === 'string' ? ` to ${d.to}` : ''}`;
    case 'task.updated': return `Task ${what} was updated`;
    case 'task.deleted': return `Task ${what} was deleted`;
    case 'project.created': return `Project ${what} was created`;
    case 'project.archived': return `Project ${what} was archived`;
    case 'project.unarchived': return `Project ${what} was restored`;
    case 'project.updated': return `Project ${what} was updated`;
    case 'project.deleted': return `Project ${what} was deleted`;
    default: return `${e.type} on ${what}`;
  }
}

/** Where a user sees the event's target in the API. */
export function actionUrlOf(e: Pick<PlatformEvent, 'targetType' | 'targetId' | 'data'>): string | null {
  if (e.targetType === 'task' && e.targetId) return `/v1/tasks/${e.targetId}`;
  if (e.targetType === 'project' && e.targetId) return `/v1/projects/${e.targetId}`;
  return null;
}
