import { Type, type Static } from 'typebox';
import { JsonObject, strict, Timestamp, Uuid } from '../common.js';
import { SYNC_PAGE_MAX } from '../../sync/sync.repo.js';

/** Bounds of stored JSON settings documents (organization settings, preferences). */
export const SETTINGS_BOUNDS = { maxBytes: 64 * 1024, maxDepth: 8 } as const;
export const VIEW_FILTER_BOUNDS = { maxBytes: 16 * 1024, maxDepth: 8 } as const;
export const MAX_VIEWS_PER_USER = 100;

export const THEME_MODES = ['light', 'dark', 'system'] as const;
export const STAY_LOGGED_IN_HOURS = [1, 8, 24, 168, 720] as const;
/**
 * BCP-47 language tag (RFC 5646 syntax): a 2-8 letter language then subtags of 1-8 letters or digits (en, en-US,
 * zh-Hant-TW, sr-Latn, en-US-x-twain), a private-use tag (x-klingon) or a grandfathered irregular one (i-klingon).
 */
export const BCP47 = '^(?:[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*|[xX](?:-[A-Za-z0-9]{1,8})+|[iI](?:-[A-Za-z0-9]{1,8})+)$';

export const OrgSettingsOut = Type.Object({ settings: JsonObject('The organization settings document'), updated_at: Timestamp });
export const PutOrgSettingsBody = Type.Object({
  settings: JsonObject('Top-level keys (1-200 chars) to set; a null value removes the key; keys not given are kept. Max 64 KB and depth 8 after merging.'),
}, strict);
export const KeyValueOut = Type.Object({ key: Type.String(), value: Type.Unknown() });

/**
 * The spec lists the notification keys it has seen, not all there are: other keys are accepted when their name is
 * 1-64 letters, digits, `_` or `-` and their value a boolean, with at most NOTIFICATION_KEYS_MAX keys in the object.
 */
export const NOTIFICATION_KEY = '^[A-Za-z0-9_-]{1,64}$';
export const NOTIFICATION_KEYS_MAX = 32;
const notificationExtras = {
  patternProperties: { [NOTIFICATION_KEY]: Type.Boolean() },
  additionalProperties: false,
  maxProperties: NOTIFICATION_KEYS_MAX,
} as const;
export const NotificationPrefs = Type.Object({
  emailNotifications: Type.Optional(Type.Boolean()),
  pushNotifications: Type.Optional(Type.Boolean()),
  weeklyDigest: Type.Optional(Type.Boolean()),
  mentionAlerts: Type.Optional(Type.Boolean()),
}, { ...notificationExtras, description: `The four named keys, plus other boolean keys (names 1-64 of A-Z a-z 0-9 _ -); at most ${NOTIFICATION_KEYS_MAX} keys, the four named ones included once defaults fill them in` });
const ThemeMode = Type.Union(THEME_MODES.map((m) => Type.Literal(m)));
const StayHours = Type.Union(STAY_LOGGED_IN_HOURS.map((h) => Type.Literal(h)), { description: 'Hours; clamped to the organization session_duration_days cap' });
const Language = Type.String({ pattern: BCP47, maxLength: 35, description: 'BCP-47 language tag' });

export const PersonalizationOut = Type.Object({
  themeMode: ThemeMode,
  language: Type.String(),
  stayLoggedInHours: StayHours,
  notifications: Type.Object({
    emailNotifications: Type.Boolean(), pushNotifications: Type.Boolean(), weeklyDigest: Type.Boolean(), mentionAlerts: Type.Boolean(),
  }, notificationExtras),
  /** The organization's cap in hours (session_duration_days * 24). */
  maxStayLoggedInHours: Type.Integer(),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});
export const PutPersonalizationBody = Type.Object({
  themeMode: ThemeMode,
  language: Language,
  notifications: NotificationPrefs,
  stayLoggedInHours: Type.Optional(StayHours),
}, strict);
export type PersonalizationInput = Static<typeof PutPersonalizationBody>;

export const PreferencesOut = Type.Object({ preferences: JsonObject(), updated_at: Type.Union([Timestamp, Type.Null()]) });
export const PutPreferencesBody = Type.Object({
  preferences: JsonObject('Top-level keys (1-200 chars) to set; a null value removes the key. Max 64 KB and depth 8 after merging (413 PAYLOAD_TOO_LARGE).'),
}, strict);

export const ProfileOut = Type.Object({
  id: Uuid, email: Type.String(), name: Type.String(), role: Type.String(),
  organization: Type.Object({ id: Uuid, name: Type.String(), slug: Type.String() }),
  language: Type.String(), themeMode: ThemeMode, created_at: Timestamp,
});
export const SecurityOut = Type.Object({
  mfa_enabled: Type.Boolean(),
  credential_kind: Type.Union([Type.Literal('user'), Type.Literal('api_key')]),
  session: Type.Union([Type.Object({ id: Uuid, mfa_at: Type.Union([Timestamp, Type.Null()]), created_at: Timestamp, expires_at: Timestamp }), Type.Null()]),
  active_sessions: Type.Integer(),
  active_api_keys: Type.Integer(),
  session_duration_days: Type.Integer(),
  step_up_window_seconds: Type.Integer(),
});
export const SkillsOut = Type.Object({
  skills: Type.Array(Type.Object({ key: Type.String(), name: Type.String(), description: Type.String(), enabled: Type.Boolean() })),
});
export const SyncConfigOut = Type.Object({
  enabled: Type.Boolean(),
  max_items: Type.Literal(SYNC_PAGE_MAX),
  sync_on_reconnect: Type.Boolean(),
  storage_limit_mb: Type.Integer(),
  resource_types: Type.Array(Type.String()),
});

export const ViewOut = Type.Object({
  id: Uuid, name: Type.String(), resource: Type.String(), filters: JsonObject(), sort: Type.Union([JsonObject(), Type.Null()]),
  columns: Type.Union([Type.Array(Type.String()), Type.Null()]), is_default: Type.Boolean(), created_at: Timestamp, updated_at: Timestamp,
});
export const CreateViewBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  resource: Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z][a-z0-9_.-]*$', description: 'What the view lists, e.g. tasks, projects, documents' }),
  filters: Type.Optional(JsonObject('Filter values of the list; max 16 KB, depth 8')),
  sort: Type.Optional(Type.Union([JsonObject(), Type.Null()])),
  columns: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 }), Type.Null()])),
  is_default: Type.Optional(Type.Boolean()),
}, strict);
export type CreateViewInput = Static<typeof CreateViewBody>;
export const ViewIdParams = Type.Object({ viewId: Uuid });
