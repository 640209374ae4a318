import { Type, type Static } from 'typebox';
import { OffsetQuery } from '../../core/pagination.js';
import { SlugInput } from '../../core/slugs.js';

/** The largest phase sort_order a client may send, and the largest the platform gives one it numbers itself. */
export const MAX_SORT_ORDER = 1_000_000;

const strict = { additionalProperties: false } as const;
export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
const Settings = Type.Object({}, { additionalProperties: true });

export const ProjectIdParams = Type.Object({ projectId: Uuid });

export const PROJECT_STATUSES = ['active', 'archived', 'deleted', 'all'] as const;
export type ProjectStatusFilter = (typeof PROJECT_STATUSES)[number];

export const ListProjectsQuery = Type.Object({
  status: Type.Optional(Type.Union(PROJECT_STATUSES.map((s) => Type.Literal(s)), { default: 'active', description: 'active (default), archived, deleted or all' })),
  ...OffsetQuery(50, 100),
});

/** Spec 2.2 full record. */
export const ProjectOut = Type.Object({
  id: Uuid, org_id: Uuid, name: Type.String(), slug: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.Union([Type.String(), Type.Null()]),
  visibility: Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('internal')]),
  category_id: Type.Union([Type.String(), Type.Null()]),
  owner_scope: Type.String(),
  is_active: Type.Boolean(),
  created_by_user_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp, updated_at: Timestamp,
  archived_at: Type.Union([Timestamp, Type.Null()]),
  deleted_at: Type.Union([Timestamp, Type.Null()]),
  settings: Settings,
});
export type Project = Static<typeof ProjectOut>;

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Type.String({ maxLength: 4096 });
const Visibility = Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('internal')]);

export const CreateProjectBody = Type.Object({
  name: Name, slug: Type.Optional(SlugInput), description: Type.Optional(Type.Union([Description, Type.Null()])),
  visibility: Type.Optional(Visibility), settings: Type.Optional(Settings),
}, strict);
export type CreateProjectInput = Static<typeof CreateProjectBody>;

export const UpdateProjectBody = Type.Object({
  name: Type.Optional(Name), slug: Type.Optional(SlugInput), description: Type.Optional(Type.Union([Description, Type.Null()])),
  visibility: Type.Optional(Visibility), is_active: Type.Optional(Type.Boolean()), settings: Type.Optional(Settings),
}, { ...strict, minProperties: 1 });
export type UpdateProjectInput = Static<typeof UpdateProjectBody>;

export const DeletedProjectOut = Type.Object({ id: Uuid, is_active: Type.Literal(false) });

// Members
export const MemberOut = Type.Object({
  user_id: Uuid, role: Type.String(), email: Type.String(), name: Type.String(), created_at: Timestamp,
});
export const AddMemberBody = Type.Object({
  user_id: Uuid,
  role: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_-]*$' }),
}, strict);
export type AddMemberInput = Static<typeof AddMemberBody>;

// Categories
export const CategoryOut = Type.Object({
  category_id: Uuid, project_id: Uuid, parent_id: Type.Union([Uuid, Type.Null()]), name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]), color: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp, updated_at: Timestamp,
});
export const CreateCategoryBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  parent_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
  color: Type.Optional(Type.Union([Type.String({ pattern: '^#[0-9a-fA-F]{6}$' }), Type.Null()])),
}, strict);
export type CreateCategoryInput = Static<typeof CreateCategoryBody>;

// Phases
export const PhaseOut = Type.Object({
  phase_id: Uuid, project_id: Uuid, name: Type.String(), description: Type.Union([Type.String(), Type.Null()]),
  sort_order: Type.Integer(), created_at: Timestamp, updated_at: Timestamp,
});
export const CreatePhaseBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  sort_order: Type.Optional(Type.Integer({ minimum: -MAX_SORT_ORDER, maximum: MAX_SORT_ORDER })),
}, strict);
export type CreatePhaseInput = Static<typeof CreatePhaseBody>;

// Specs
export const SpecOut = Type.Object({
  spec_id: Uuid, project_id: Uuid, title: Type.String(), content: Type.String(), created_at: Timestamp, updated_at: Timestamp,
});
export const CreateSpecBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 500 }),
  content: Type.Optional(Type.String({ maxLength: 1_000_000 })),
}, strict);
export type CreateSpecInput = Static<typeof CreateSpecBody>;

export const PageQuery = Type.Object(OffsetQuery(50, 100));
export interface Page { limit: number; offset: number }
export interface Paged<T> { items: T[]; total: number; limit: number; offset: number }
