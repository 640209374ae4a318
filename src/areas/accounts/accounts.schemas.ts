import { Type, type Static } from 'typebox';
import { ALL_FEATURES, SUBSCRIPTION_STATUSES } from '../../core/config.js';
import { PLAN_TIERS } from '../../core/pricing.js';
import { SlugInput } from '../../core/slugs.js';
import { ROLES } from '../../core/auth/permissions.js';

const strict = { additionalProperties: false } as const;
export const Uuid = Type.String({ format: 'uuid' });
export const Email = Type.String({ format: 'email', maxLength: 320 });
export const Timestamp = Type.String({ format: 'date-time' });
/** A display name: 1-200 characters; a blank one is the services' `400` with `details.reason: "BLANK"` (core/text.ts). */
const Name = () => Type.String({ minLength: 1, maxLength: 200 });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const UserOut = Type.Object({ id: Uuid, email: Type.String(), name: Type.String() });
export const OrganizationOut = Type.Object({
  id: Uuid, name: Type.String(), slug: Type.String(), plan_tier: Type.String(), subscription_status: Type.String(),
  features: Type.Array(Type.String()), settings: Type.Object({}, { additionalProperties: true }),
  session_duration_days: Type.Integer(), is_root: Type.Boolean(), created_at: Timestamp, updated_at: Timestamp,
  role: Type.Optional(Type.String()),
});

export const TokensOut = Type.Object({
  user: UserOut, organization: OrganizationOut,
  access_token: Type.String(), refresh_token: Type.String(), expires_in: Type.Integer(), token_type: Type.Literal('Bearer'),
});
export const MfaChallengeOut = Type.Object({ mfa_required: Type.Literal(true), mfa_token: Type.String() });

export const RegisterBody = Type.Object({
  email: Email,
  password: Type.String({ minLength: 12, maxLength: 256 }),
  name: Name(),
  organization_name: Name(),
}, strict);
export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 256 }),
  organization_id: Type.Optional(Uuid),
}, strict);
export const MfaVerifyBody = Type.Object({ mfa_token: Type.String({ minLength: 1, maxLength: 4096 }), code: Type.String({ pattern: '^[0-9]{6}$' }) }, strict);
export const CodeBody = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) }, strict);
export const RefreshBody = Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 512 }) }, strict);
export const SwitchOrgBody = Type.Object({ organization_id: Uuid }, strict);

export const MeOut = Type.Object({
  user: UserOut,
  organization: Type.Omit(OrganizationOut, ['role', 'settings'], { description: 'As GET /v1/organizations/current, without role (below) and settings (they need settings:read)' }),
  role: Type.String(),
  permissions: Type.Array(Type.String(), { description: "The role's named permissions. An API key acts within them and within its scopes (credential.scopes): a route needs both its permission and its scope" }),
  credential_kind: Type.Union([Type.Literal('user'), Type.Literal('api_key')], { description: 'Same as credential.kind' }),
  credential: Type.Object({
    kind: Type.Union([Type.Literal('user'), Type.Literal('api_key')]),
    api_key_id: Type.Optional(Uuid), scopes: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    session_id: Type.Optional(Uuid), mfa_at: Type.Optional(Type.Union([Timestamp, Type.Null()])), legacy: Type.Boolean(),
  }),
});

export const CreateOrgBody = Type.Object({
  name: Name(),
  slug: Type.Optional(SlugInput),
}, strict);
export const UpdateOrgBody = Type.Object({
  name: Type.Optional(Name()),
  settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
  session_duration_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
}, { ...strict, minProperties: 1 });

export const MemberOut = Type.Object({ user_id: Uuid, email: Type.String(), name: Type.String(), role: Type.String(), created_at: Timestamp });
/** DELETE .../members/{userId}: who was removed (spec 2.1: a success carries the envelope). */
export const MemberRemovedOut = Type.Object({ user_id: Uuid, removed: Type.Literal(true) });
export const AddMemberBody = Type.Object({
  email: Email, role: Type.Union(ROLES.map((r) => Type.Literal(r))), name: Type.Optional(Name()),
}, strict);
export const UpdateMemberBody = Type.Object({ role: Type.Union(ROLES.map((r) => Type.Literal(r))) }, strict);
export const UserIdParams = Type.Object({ userId: Uuid });

export const ApiKeyOut = Type.Object({
  id: Uuid, name: Type.String(), prefix: Type.String(), scopes: Type.Union([Type.Array(Type.String()), Type.Null()]),
  expires_at: Timestamp, revoked_at: Nullable(Timestamp), last_used_at: Nullable(Timestamp),
  created_by_user_id: Uuid, created_at: Timestamp, key: Type.Optional(Type.String()),
});
export const CreateApiKeyBody = Type.Object({
  name: Name(),
  // Omitted or null: a legacy key (spec 4.2 and 9: "keys without explicit scopes"; the design's "null = legacy key").
  scopes: Type.Optional(Type.Union([
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100, uniqueItems: true }),
    Type.Null({ description: 'null (or omitted): a legacy key (the creator\'s full role; deprecated, every response carries the Deprecation header)' }),
  ])),
  expires_at: Timestamp,
}, strict);
export const IdParams = Type.Object({ id: Uuid });
export const OrgIdParams = Type.Object({ orgId: Uuid });

export const EntitlementsBody = Type.Object({
  plan_tier: Type.Optional(Type.Union(PLAN_TIERS.map((t) => Type.Literal(t)))),
  subscription_status: Type.Optional(Type.Union(SUBSCRIPTION_STATUSES.map((t) => Type.Literal(t)))),
  features: Type.Optional(Type.Array(Type.Union(ALL_FEATURES.map((f) => Type.Literal(f))), { uniqueItems: true })),
}, { ...strict, minProperties: 1 });
export const ScimTokenBody = Type.Object({ name: Name() }, strict);
export const ScimTokenOut = Type.Object({ id: Uuid, name: Type.String(), token: Type.String(), created_at: Timestamp });

export type RegisterInput = Static<typeof RegisterBody>;
export type LoginInput = Static<typeof LoginBody>;
export type CreateOrgInput = Static<typeof CreateOrgBody>;
export type UpdateOrgInput = Static<typeof UpdateOrgBody>;
export type AddMemberInput = Static<typeof AddMemberBody>;
export type CreateApiKeyInput = Static<typeof CreateApiKeyBody>;
export type EntitlementsInput = Static<typeof EntitlementsBody>;

export const PasswordResetBody = Type.Object({ email: Email }, strict);
export const PasswordResetOut = Type.Object({ accepted: Type.Literal(true) });
export const PasswordConfirmBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 512 }),
  password: Type.String({ minLength: 12, maxLength: 256 }),
}, strict);
export const PasswordConfirmOut = Type.Object({ password_set: Type.Literal(true) });
