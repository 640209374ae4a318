import { Type, type Static } from 'typebox';
import { SYNC_PAGE_MAX } from './sync.repo.js';
import { OffsetQuery } from '../../core/pagination.js';

const strict = { additionalProperties: false } as const;
export const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const Props = Type.Object({}, { additionalProperties: true });
const Label = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' });
/** Blank names are the service's `400` with `details.reason: "BLANK"` (core/text.ts), as on every create route. */
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const IdParams = Type.Object({ id: Uuid });
/** The six synced types (spec 4.12 leaves the sixth open: we chose `projects`). */
export const ResourceTypeParams = Type.Object({
  resourceType: Type.Union(['entities', 'relationships', 'documents', 'tasks', 'comments', 'projects'].map((t) => Type.Literal(t))),
});

export const SyncQuery = Type.Object({
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: 8_640_000_000_000, description: 'epoch milliseconds; omit for a bulk download' })),
  cursor: Type.Optional(Type.String({ maxLength: 500 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SYNC_PAGE_MAX, default: SYNC_PAGE_MAX })),
});
export const SyncPageOut = Type.Object({
  resource_type: Type.String(), mode: Type.Union([Type.Literal('bulk'), Type.Literal('delta')]),
  items: Type.Array(Type.Object({}, { additionalProperties: true })),
  deleted: Type.Array(Type.Object({ id: Uuid, deleted_at: Timestamp })),
  next_cursor: Type.Union([Type.String(), Type.Null()]), has_more: Type.Boolean(),
  server_time: Type.Integer({ description: 'use as `since` of the next pull once has_more is false' }),
});
export const OfflineSyncOut = Type.Object({
  enabled: Type.Boolean(), max_items: Type.Integer(), sync_on_reconnect: Type.Boolean(), storage_limit_mb: Type.Integer(),
  resource_types: Type.Array(Type.String()),
});

// Entities
export const CreateEntityBody = Type.Object({
  name: Name, entity_type: Label, description: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
  properties: Type.Optional(Props), project_id: Type.Optional(Nullable(Uuid)),
}, strict);
export const UpdateEntityBody = Type.Object({
  name: Type.Optional(Name), entity_type: Type.Optional(Label), description: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
  properties: Type.Optional(Props), project_id: Type.Optional(Nullable(Uuid)),
}, { ...strict, minProperties: 1 });
export type CreateEntityInput = Omit<Static<typeof CreateEntityBody>, 'properties'> & { properties?: Record<string, unknown> };
export type UpdateEntityInput = Partial<CreateEntityInput>;
export const ListEntitiesQuery = Type.Object({ entity_type: Type.Optional(Label), project_id: Type.Optional(Uuid), ...OffsetQuery(50, 100) });
export const EntityOut = Type.Object({
  id: Uuid, org_id: Uuid, project_id: Type.Union([Uuid, Type.Null()]), entity_type: Type.String(), name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]), properties: Props, created_by: Type.Union([Uuid, Type.Null()]),
  created_at: Timestamp, updated_at: Timestamp,
});

// Relationships
export const CreateRelationshipBody = Type.Object({
  source_entity_id: Uuid, target_entity_id: Uuid, relationship_type: Label, properties: Type.Optional(Props),
}, strict);
export const UpdateRelationshipBody = Type.Object({ relationship_type: Type.Optional(Label), properties: Type.Optional(Props) }, { ...strict, minProperties: 1 });
export type CreateRelationshipInput = Omit<Static<typeof CreateRelationshipBody>, 'properties'> & { properties?: Record<string, unknown> };
export type UpdateRelationshipInput = { relationship_type?: string; properties?: Record<string, unknown> };
export const ListRelationshipsQuery = Type.Object({ entity_id: Type.Optional(Uuid), relationship_type: Type.Optional(Label), ...OffsetQuery(50, 100) });
export const RelationshipOut = Type.Object({
  id: Uuid, org_id: Uuid, source_entity_id: Uuid, target_entity_id: Uuid, relationship_type: Type.String(), properties: Props,
  created_by: Type.Union([Uuid, Type.Null()]), created_at: Timestamp, updated_at: Timestamp,
});

// Comments
const TargetType = Type.Union([Type.Literal('document'), Type.Literal('task')]);
export const CreateCommentBody = Type.Object({ target_type: TargetType, target_id: Uuid, body: Type.String({ minLength: 1, maxLength: 20_000, pattern: '\\S' }) }, strict);
export const UpdateCommentBody = Type.Object({ body: Type.String({ minLength: 1, maxLength: 20_000, pattern: '\\S' }) }, strict);
export type CreateCommentInput = Static<typeof CreateCommentBody>;
export const ListCommentsQuery = Type.Object({ target_type: TargetType, target_id: Uuid, ...OffsetQuery(50, 100) });
export const CommentOut = Type.Object({
  id: Uuid, org_id: Uuid, target_type: Type.String(), target_id: Uuid, body: Type.String(), author_id: Type.Union([Uuid, Type.Null()]),
  created_at: Timestamp, updated_at: Timestamp,
});
export const DeletedOut = Type.Object({ id: Uuid, deleted: Type.Boolean() });
