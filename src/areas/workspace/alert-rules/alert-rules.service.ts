import { actor, requirePermission, type ServiceContext } from '../../../core/context.js';
import { AppError, notFound, validation } from '../../../core/errors.js';
import { audit } from '../../../core/audit.js';
import { uuidv7 } from '../../../core/ids.js';
import { privateUrlProblem } from '../../../core/net/public-address.js';
import { assertBoundedJson } from '../common.js';
import { assertConditions } from './conditions.js';
import { alertRulesRepo, ruleView } from './alert-rules.repo.js';
import { CONDITIONS_MAX_BYTES, CONDITIONS_MAX_DEPTH, MAX_ALERT_RULES_PER_ORG, type CreateAlertRuleInput } from './alert-rules.schemas.js';
import { lockNamed } from '../../../core/db/locks.js';
import { enabledRuleTypes } from './enabled-rule-types.js';
import { ANY_EVENT_TYPE, matchableEventType } from './event-types.js';
import { nonBlankText } from '../../../core/text.js';
import { sameJsonValue } from '../../../core/json-value.js';

/**
 * `conditions` and `condition` (spec 4.6 lists both in the body): either alone, or both, whose entries must then all
 * hold (the same entry given in both is one entry); a key given in both with different values is a contradiction the
 * rule could never satisfy: 400 naming it.
 */
function mergedConditions(conditions: Record<string, unknown> | undefined, condition: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!conditions || !condition) return conditions ?? condition ?? {};
  for (const [key, value] of Object.entries(condition)) {
    if (Object.prototype.hasOwnProperty.call(conditions, key) && !sameJsonValue(conditions[key], value)) {
      throw validation(`condition.${key} and conditions.${key} differ; give the entry once`, { field: `condition.${key}` });
    }
  }
  return { ...conditions, ...condition };
}

/**
 * Creates an alert rule. event_type and its alias trigger_type: equal when both are given, `*` (every catalogue type)
 * when neither is; conditions and condition: either, or both (all their entries must hold). Channels default to
 * in_app; slack delivers to slack_webhook_url. A rule is configuration: email, push and slack rules are accepted
 * whatever can be delivered today, and a delivery that cannot be made (no SMTP configured, no push provider, a slack
 * rule without a webhook URL: the answer says `slack_webhook_configured: false`) is recorded as failed with the
 * reason, never dropped. An organization has at most
 * MAX_ALERT_RULES_PER_ORG rules: the next is 409 CONFLICT (details.code ALERT_RULE_LIMIT_REACHED), like saved views.
 */
export async function createAlertRule(ctx: ServiceContext, input: CreateAlertRuleInput) {
  const p = requirePermission(ctx, 'alert_rule.manage');
  // The same type in two spellings (`task-overdue`, `task.overdue`) is one type, as rules match them (event-types.ts).
  if (input.event_type && input.trigger_type && matchableEventType(input.event_type) !== matchableEventType(input.trigger_type)) {
    throw validation('event_type and trigger_type are aliases; give one, or the same value', { field: 'trigger_type' });
  }
  const eventType = input.event_type ?? input.trigger_type ?? ANY_EVENT_TYPE;
  const bounds = { maxBytes: CONDITIONS_MAX_BYTES, maxDepth: CONDITIONS_MAX_DEPTH };
  // Each is checked under the name the client sent, so errors name that field.
  for (const field of ['conditions', 'condition'] as const) {
    const given = input[field] as Record<string, unknown> | undefined;
    if (given) { assertBoundedJson(field, given, bounds); assertConditions(given, field); }
  }
  const conditions = mergedConditions(input.conditions as Record<string, unknown> | undefined, input.condition as Record<string, unknown> | undefined);
  if (input.conditions && input.condition) assertBoundedJson('conditions', conditions, bounds);
  const channels = input.channels ?? ['in_app'];
  if (input.slack_webhook_url && !channels.includes('slack')) {
    throw validation('slack_webhook_url is only used with the "slack" channel', { field: 'slack_webhook_url' });
  }
  if (input.slack_webhook_url && !URL.canParse(input.slack_webhook_url)) {
    throw validation('slack_webhook_url is not a valid URL', { field: 'slack_webhook_url', reason: 'INVALID_URL' });
  }
  if (input.slack_webhook_url && ctx.platform.config.nodeEnv === 'production' && !input.slack_webhook_url.startsWith('https://')) {
    throw validation('slack_webhook_url must use https', { field: 'slack_webhook_url' });
  }
  const privateProblem = input.slack_webhook_url && !ctx.platform.config.webhookAllowPrivateHosts ? privateUrlProblem(input.slack_webhook_url) : null;
  if (privateProblem) {
    throw new AppError('VALIDATION_ERROR', `slack_webhook_url ${privateProblem}; it must be a public internet address`, { field: 'slack_webhook_url', reason: 'PRIVATE_ADDRESS' });
  }
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    // Serializes the organization's rule creations, so concurrent requests cannot pass the limit.
    await lockNamed(sql, `alert-rules:${p.orgId}`);
    if ((await alertRulesRepo.count(sql, p.orgId)) >= MAX_ALERT_RULES_PER_ORG) {
      throw new AppError('CONFLICT', `This organization already has ${MAX_ALERT_RULES_PER_ORG} alert rules, the most it may have`,
        { code: 'ALERT_RULE_LIMIT_REACHED', limit: MAX_ALERT_RULES_PER_ORG });
    }
    const r = await alertRulesRepo.insert(sql, {
      org_id: p.orgId, id: uuidv7(), name: nonBlankText(input.name, 'name'), description: input.description ?? null, event_type: eventType,
      conditions, channels, slack_webhook_url_sealed: input.slack_webhook_url ? ctx.platform.box.seal(input.slack_webhook_url) : null,
      is_enabled: input.is_enabled ?? true, created_by: p.userId,
    });
    await audit(sql, ctx, { action: 'alert_rule.created', targetType: 'alert_rule', targetId: r.id, details: { event_type: eventType, channels } });
    return r;
  });
  // Before answering: an event this client causes next must see the rule (the announcement may still be on its way).
  enabledRuleTypes(ctx.platform.db).forget(p.orgId);
  return ruleView(row);
}

export async function listAlertRules(ctx: ServiceContext, page: { limit: number; offset: number }) {
  const p = actor(ctx);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const rows = await alertRulesRepo.list(sql, p.orgId, page);
    const total = rows[0]?.total ?? (page.offset === 0 ? 0 : await alertRulesRepo.count(sql, p.orgId));
    return { items: rows.map(({ total: _t, ...r }) => ruleView(r)), total };
  });
}

/** Every delivery a rule caused, newest first, with its status, attempts and last error. */
export async function listDeliveries(ctx: ServiceContext, ruleId: string, page: { limit: number; offset: number }) {
  const p = actor(ctx);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    if (!(await alertRulesRepo.byId(sql, p.orgId, ruleId))) throw notFound('Alert rule');
    const rows = await alertRulesRepo.deliveries(sql, p.orgId, ruleId, page);
    // A page past the end has no row to carry count(*) OVER (): count apart, so `total` stays exact (spec 2.1).
    const total = rows[0]?.total ?? (page.offset === 0 ? 0 : await alertRulesRepo.countDeliveries(sql, p.orgId, ruleId));
    return { items: rows.map(({ total: _t, ...d }) => d), total };
  });
}

/**
 * Spec 4.6 and part 9: update and delete are reserved and always answer 501, for any id — a foreign id and a
 * random id get the same answer, so nothing is enumerable.
 */
export async function reservedRuleOperation(ctx: ServiceContext, _ruleId: string): Promise<never> {
  actor(ctx);
  throw new AppError('NOT_IMPLEMENTED', 'Alert rule update and delete are not implemented yet; create a new rule (and leave this one) instead');
}
