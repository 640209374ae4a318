import { accountsRepo } from '../../accounts/accounts.repo.js';
import type { Platform } from '../../../core/context.js';
import type { Job } from '../../../core/jobs.js';
import type { PlatformEvent } from '../../../core/events.js';
import { workspaceAdapters } from '../adapters.js';
import { notificationsRepo } from '../notifications/notifications.repo.js';
import { alertRulesRepo, type RuleRow } from './alert-rules.repo.js';
import { actionUrlOf, describeEvent, EMAIL_NOT_CONFIGURED } from './dispatch.js';

/** A failure that retrying cannot fix (not configured, rule gone): recorded as failed at once. */
class PermanentFailure extends Error {}

const typeOf = (eventType: string) => (eventType === 'task.overdue' ? 'warning' as const : 'info' as const);

/**
 * The `alert.deliver` job: performs one delivery and records the attempt. A transient failure is recorded
 * (status retrying) and rethrown so the runner retries with backoff; the last attempt, or a permanent
 * failure, leaves status failed with the reason. Deliveries are at least once: a send that succeeds
 * but whose record fails is sent again.
 */
export function deliveryHandler(platform: Platform) {
  return async (job: Job): Promise<void> => {
    const orgId = job.org_id;
    const deliveryId = String(job.payload.delivery_id);
    const { db } = platform;
    const found = await db.tenant(orgId, async (sql) => {
      const d = await alertRulesRepo.delivery(sql, orgId, deliveryId);
      return d ? { d, rule: await alertRulesRepo.byId(sql, orgId, d.alert_rule_id) } : null;
    });
    if (!found || found.d.status === 'delivered' || found.d.status === 'failed') return;
    const { d, rule } = found;
    const event = d.event as unknown as PlatformEvent;
    try {
      if (!rule) throw new PermanentFailure('The alert rule no longer exists');
      // Queued while its creator was a member, delivered after the removal: the events are no longer theirs to get.
      const creator = rule.created_by;
      if (!creator || !(await db.tenant(orgId, (sql) => accountsRepo.membership(sql, orgId, creator)))) {
        throw new PermanentFailure('The rule\'s creator is no longer a member of the organization');
      }
      if (d.channel === 'in_app') {
        await db.tenantTx(orgId, async (sql) => {
          await notificationsRepo.insert(sql, orgId, {
            userId: creator, type: typeOf(event.type), title: `${rule.name}: ${describeEvent(event)}`.slice(0, 500),
            body: rule.description, channel: 'in_app', actionUrl: actionUrlOf(event), eventType: event.type,
            targetType: event.targetType, targetId: event.targetId, alertRuleId: rule.id,
          });
          await alertRulesRepo.recordAttempt(sql, orgId, deliveryId, job.attempts, 'delivered', 'delivered', null);
        });
        return;
      }
      await send(platform, orgId, rule, creator, d.channel, event);
      await db.tenant(orgId, (sql) => alertRulesRepo.recordAttempt(sql, orgId, deliveryId, job.attempts, 'delivered', 'delivered', null));
    } catch (err) {
      const permanent = err instanceof PermanentFailure;
      const final = permanent || job.attempts >= job.max_attempts;
      const message = String((err as Error)?.message ?? err).slice(0, 1000);
      await db.tenant(orgId, (sql) => alertRulesRepo.recordAttempt(sql, orgId, deliveryId, job.attempts, 'failed', final ? 'failed' : 'retrying', message));
      if (!permanent) throw err;
      platform.log.warn({ deliveryId, channel: d.channel, reason: message }, 'alert delivery failed permanently');
    }
  };
}

async function send(platform: Platform, orgId: string, rule: RuleRow, creator: string, channel: string, event: PlatformEvent): Promise<void> {
  const { mailer, slack } = workspaceAdapters(platform);
  const line = describeEvent(event);
  switch (channel) {
    case 'email': {
      if (!mailer.configured) throw new PermanentFailure(EMAIL_NOT_CONFIGURED);
      const user = await platform.db.tenant(orgId, (sql) => alertRulesRepo.userContact(sql, creator));
      if (!user || !user.is_active) throw new PermanentFailure('The rule creator has no active account');
      const url = actionUrlOf(event);
      await mailer.send({
        to: [user.email], subject: `[Alert] ${rule.name}: ${line}`.slice(0, 250),
        text: [line, '', `Rule: ${rule.name}`, `Event: ${event.type} at ${event.at}`, url ? `Link: ${url}` : null, '',
          JSON.stringify(event.data ?? {}, null, 2)].filter((l) => l !== null).join('\n'),
      });
      return;
    }
    case 'slack': {
      if (!rule.slack_webhook_url_sealed) throw new PermanentFailure('The rule has no Slack webhook URL (slack_webhook_url); create a rule with one');
      await slack.post(platform.box.open(rule.slack_webhook_url_sealed), { text: `*${rule.name}*: ${line} (${event.type})` });
      return;
    }
    default:
      throw new PermanentFailure(`Channel "${channel}" is not available on this deployment`);
  }
}
