import { Type, type Static } from 'typebox';
import { JsonObject, strict, Timestamp, Uuid } from '../common.js';
import { CHANNELS } from '../notifications/notifications.schemas.js';
import { EVENT_TYPES, EVENT_TYPE_DOC } from './event-types.js';

export const CONDITIONS_MAX_BYTES = 64 * 1024;
export const CONDITIONS_MAX_DEPTH = 8;
/**
 * Most alert rules one organization may have. Every event fans out to each matching rule x channel (one delivery and
 * one job each), so without a bound one request could queue thousands of deliveries; 100 rules of 4 channels is 400
 * at most. Rules cannot be deleted yet (spec 4.6: 501), so the bound is generous.
 */
export const MAX_ALERT_RULES_PER_ORG = 100;

// Any well-formed name is accepted (the spec leaves the catalogue open: "for example a task-overdue kind"); a rule
// fires for the types the platform emits (the catalogue below) and waits for any other until it is emitted.
const EVENT_TYPE_PATTERN = '^(?:[A-Za-z][A-Za-z0-9_.:-]*|\\*)$';
const EventType = Type.String({ minLength: 1, maxLength: 100, pattern: EVENT_TYPE_PATTERN, description: EVENT_TYPE_DOC, examples: [...EVENT_TYPES] });
const Channel = Type.Union(CHANNELS.map((c) => Type.Literal(c)));
const ConditionsDoc = 'Any JSON object of `path -> expected`; every entry must hold for the event (`$` keys are operators, other keys paths into the value; see docs/events.md). Max 64 KB serialized (413 PAYLOAD_TOO_LARGE), depth 8.';

export const CreateAlertRuleBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  event_type: Type.Optional(EventType),
  trigger_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: EVENT_TYPE_PATTERN, description: 'Alias of event_type (equal when both are given; without either the rule hears every catalogue type, `*`)' })),
  conditions: Type.Optional(JsonObject(ConditionsDoc)),
  condition: Type.Optional(JsonObject('More conditions: given with conditions, the entries of both must hold (a key in both must have one value)')),
  channels: Type.Optional(Type.Array(Channel, { minItems: 1, maxItems: 4, uniqueItems: true, description: "Default ['in_app']. slack delivers to slack_webhook_url (without one, slack deliveries are recorded failed). email deliveries need SMTP configured and push has no provider on this deployment: such deliveries are recorded as failed with the reason (GET .../deliveries)." })),
  slack_webhook_url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://', description: 'Slack incoming-webhook URL (https in production); stored sealed, never returned' })),
  is_enabled: Type.Optional(Type.Boolean({ default: true })),
}, strict);
export type CreateAlertRuleInput = Static<typeof CreateAlertRuleBody>;

export const AlertRuleOut = Type.Object({
  id: Uuid, org_id: Uuid, name: Type.String(), description: Type.Union([Type.String(), Type.Null()]),
  event_type: Type.String({ description: EVENT_TYPE_DOC }), trigger_type: Type.String({ description: 'Same as event_type' }),
  conditions: JsonObject(), channels: Type.Array(Channel), slack_webhook_configured: Type.Boolean(),
  is_enabled: Type.Boolean(), created_by: Type.Union([Uuid, Type.Null()]), created_at: Timestamp, updated_at: Timestamp,
});

export const DeliveryOut = Type.Object({
  id: Uuid, alert_rule_id: Uuid, event_type: Type.String(), channel: Channel,
  status: Type.Union([Type.Literal('pending'), Type.Literal('retrying'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(), last_error: Type.Union([Type.String(), Type.Null()]),
  target_type: Type.Union([Type.String(), Type.Null()]), target_id: Type.Union([Type.String(), Type.Null()]),
  delivered_at: Type.Union([Timestamp, Type.Null()]), created_at: Timestamp, updated_at: Timestamp,
});

export const RuleIdParams = Type.Object({ alertRuleId: Uuid });
