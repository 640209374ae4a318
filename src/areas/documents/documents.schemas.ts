import { Type, type Static } from 'typebox';
import { OffsetQuery } from '../../core/pagination.js';
import { HandlerCheckedQuery } from '../../core/http/query-values.js';

const strict = { additionalProperties: false } as const;
export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
const NullableTs = Type.Union([Timestamp, Type.Null()]);
const NullableUuid = Type.Union([Uuid, Type.Null()]);

/**
 * Spec 8: document save content 10 MB, counted in UTF-8 bytes (10,485,760 allowed). The service checks it
 * (assertContentSize: 413 PAYLOAD_TOO_LARGE, for REST and MCP alike); the schema has no maxLength on content,
 * since a character count would answer 400 first for ASCII content just over the limit.
 */
export const MAX_CONTENT_BYTES = 10 * 1024 * 1024;
/**
 * The body limit of a request that carries document content (REST create and update, and the MCP endpoint, whose
 * tools take the same content). JSON escaping doubles the common characters ("\n", "\"", "\\"), so the body
 * may be twice the content limit plus room for the other fields; anything larger is 413 PAYLOAD_TOO_LARGE too.
 */
export const DOCUMENT_BODY_LIMIT = 2 * MAX_CONTENT_BYTES + 2 * 1024 * 1024;
const Content = Type.String({ description: 'Up to 10,485,760 bytes of UTF-8 (10 MiB); more is 413 PAYLOAD_TOO_LARGE' });
export const CONTENT_TYPES = ['markdown', 'plain', 'rich_text'] as const;
export const DOCUMENT_KINDS = ['document', 'sheet', 'deck'] as const;

/** Blank titles are the service's `400` with `details.reason: "BLANK"` (core/text.ts), as on every create route. */
const Title = Type.String({ minLength: 1, maxLength: 500 });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, uniqueItems: true });
const Metadata = Type.Object({}, { additionalProperties: true, description: 'Free-form JSON object; `language` (e.g. "en", "de") picks the search language' });

export const IdParams = Type.Object({ id: Uuid });

export const CreateDocumentBody = Type.Object({
  title: Title,
  content: Type.Optional(Content),
  content_type: Type.Optional(Type.Union(CONTENT_TYPES.map((c) => Type.Literal(c)), { default: 'markdown' })),
  project_id: Type.Optional(NullableUuid),
  parent_id: Type.Optional(NullableUuid),
  tags: Type.Optional(Tags),
  metadata: Type.Optional(Metadata),
}, strict);
export type CreateDocumentInput = Omit<Static<typeof CreateDocumentBody>, 'metadata'> & { metadata?: Record<string, unknown> };

export const UpdateDocumentBody = Type.Object({
  title: Type.Optional(Title),
  content: Type.Optional(Content),
  content_type: Type.Optional(Type.Union(CONTENT_TYPES.map((c) => Type.Literal(c)))),
  project_id: Type.Optional(NullableUuid),
  parent_id: Type.Optional(NullableUuid),
  tags: Type.Optional(Tags),
  metadata: Type.Optional(Metadata),
}, strict);
export type UpdateDocumentInput = Omit<Static<typeof UpdateDocumentBody>, 'metadata'> & { metadata?: Record<string, unknown> };

/** Documents per list page when the request names no `limit`. */
export const DEFAULT_LIST_LIMIT = 50;
export const SORT_FIELDS = ['relevance', 'created_at', 'updated_at', 'title'] as const;
export const ListDocumentsQuery = Type.Object({
  project_id: Type.Optional(Uuid),
  parent_id: Type.Optional(Uuid),
  kind: Type.Optional(Type.Union(DOCUMENT_KINDS.map((k) => Type.Literal(k)))),
  search: Type.Optional(Type.String({ maxLength: 200 })),
  language: Type.Optional(Type.String({ pattern: '^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$', description: 'BCP-47 language of the search text (default en)' })),
  sort_by: Type.Optional(Type.Union(SORT_FIELDS.map((s) => Type.Literal(s)), { description: 'default: relevance with search, else updated_at' })),
  sort_order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
  ...OffsetQuery(50, 100),
  // No default inserted by validation: the service applies it, and a default page shrinks to what it can carry.
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `default ${DEFAULT_LIST_LIMIT}, fewer when those documents hold more than 32 MiB of content (the answer's pagination.limit says how many)` })),
});
export type ListDocumentsInput = Static<typeof ListDocumentsQuery>;

const documentFields = {
  id: Uuid, org_id: Uuid, kind: Type.String(),
  folder_id: NullableUuid, parent_id: NullableUuid, project_id: NullableUuid,
  title: Type.String(), content_type: Type.String(),
  file_url: Type.Union([Type.String(), Type.Null()]), file_size: Type.Union([Type.Integer(), Type.Null()]),
  tags: Type.Array(Type.String()), metadata: Type.Object({}, { additionalProperties: true }),
  is_indexed: Type.Boolean(), indexed_at: NullableTs,
  created_by: NullableUuid, created_at: Timestamp, updated_at: Timestamp, deleted_at: NullableTs,
};

/** Spec 2.4 full record. */
export const DocumentOut = Type.Object({ ...documentFields, content: Type.String() });
export type DocumentOutT = Static<typeof DocumentOut>;

/** List item: the record (spec 2.4), its first 200 characters as `excerpt` and, in a search, the rank. */
export const DocumentListItem = Type.Object({
  ...documentFields, content: Type.String(), excerpt: Type.String({ description: 'the first 200 characters of content' }), rank: Type.Optional(Type.Number()),
});
export type DocumentListItemT = Static<typeof DocumentListItem>;

export const PaginationOut = Type.Object({ total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer(), has_more: Type.Boolean() });
export const DocumentListOut = Type.Object({ items: Type.Array(DocumentListItem), pagination: PaginationOut });

export const DeletedOut = Type.Object({ id: Uuid, deleted: Type.Boolean() });

// Files
/**
 * Signed-URL parameters. No limits in the validated schema: any malformed, altered or repeated value must be 401
 * UNAUTHORIZED (spec 4.5), which the service decides, not a 400 from the schema. The document shows the one
 * spelling the service accepts (files.service.ts, CANONICAL_*).
 */
export const FileQuery = Type.Object({
  org: HandlerCheckedQuery(Type.String({ format: 'uuid', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'organization id of a signed URL (lower case)' })),
  exp: HandlerCheckedQuery(Type.Integer({ minimum: 1, maximum: 999_999_999_999, description: 'expiry of a signed URL, unix seconds' })),
  sig: HandlerCheckedQuery(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'hex HMAC-SHA256 over {org}:{id}:{exp} (lower case)' })),
});
export const SignedUrlBody = Type.Object({
  expires_in: Type.Optional(Type.Integer({ minimum: 60, maximum: 7 * 86400, default: 3600, description: 'seconds, default 3600' })),
}, strict);
export const SignedUrlOut = Type.Object({ url: Type.String(), expires_at: Timestamp, expires_in: Type.Integer() });
export const FileOut = Type.Object({ id: Uuid, file_url: Type.String(), file_size: Type.Integer(), content_type: Type.String() });
