import { Type, type Static } from 'typebox';
import { strict, Timestamp, Uuid } from '../common.js';
import { OffsetQuery } from '../../../core/pagination.js';

export const NOTIFICATION_TYPES = ['info', 'success', 'warning', 'error', 'action_required'] as const;
export const CHANNELS = ['in_app', 'email', 'push', 'slack'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
export type Channel = (typeof CHANNELS)[number];

const lit = <T extends readonly string[]>(xs: T) => Type.Union(xs.map((x) => Type.Literal(x)));
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const NotificationOut = Type.Object({
  id: Uuid,
  notification_type: lit(NOTIFICATION_TYPES),
  title: Type.String(),
  body: NullableString,
  channel: lit(CHANNELS),
  is_read: Type.Boolean(),
  is_archived: Type.Boolean(),
  action_url: NullableString,
  event_type: NullableString,
  target_type: NullableString,
  target_id: NullableString,
  alert_rule_id: Type.Union([Uuid, Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type NotificationView = Static<typeof NotificationOut>;

export const ListQuery = Type.Object({
  is_read: Type.Optional(Type.Boolean()),
  is_archived: Type.Optional(Type.Boolean()),
  notification_type: Type.Optional(lit(NOTIFICATION_TYPES)),
  channel: Type.Optional(lit(CHANNELS)),
  ...OffsetQuery(25, 100),
});
export type ListQueryInput = { is_read?: boolean; is_archived?: boolean; notification_type?: NotificationType; channel?: Channel; limit: number; offset: number };

export const ListOut = Type.Object({
  notifications: Type.Array(NotificationOut),
  unread_count: Type.Integer({ description: 'Unread and not archived notifications of the caller, whatever the filters' }),
});

export const UpdateBody = Type.Object({
  is_read: Type.Optional(Type.Boolean()),
  is_archived: Type.Optional(Type.Boolean()),
}, { ...strict, minProperties: 1 });
export type UpdateInput = Static<typeof UpdateBody>;
export const IdParams = Type.Object({ id: Uuid });
