import type { ServiceContext } from '../../core/context.js';
import { requirePermission } from '../../core/context.js';
import { AppError, conflict, notFound, validation } from '../../core/errors.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { lockNamed } from '../../core/db/locks.js';
import { assertStorableText, nonBlankText } from '../../core/text.js';
import { audit } from '../../core/audit.js';
import { enqueue } from '../../core/jobs.js';
import { uuidv7 } from '../../core/ids.js';
import type { Sql } from '../../core/db/database.js';
import * as repo from './documents.repo.js';
import { DEFAULT_LIST_LIMIT, MAX_CONTENT_BYTES, type CreateDocumentInput, type DocumentListItemT, type DocumentOutT, type ListDocumentsInput, type UpdateDocumentInput } from './documents.schemas.js';
import { documentsDeps } from './deps.js';
import { removeStoredFile } from './stored-files.js';
import { requireProject } from '../projects/project-access.js';
import { replaceContentInTx, roomsHear } from './collab.service.js';
import { validateDeck, validateWorkbook } from './sheet-model.js';
import { searchLanguage, toPrefixTsquery } from './search.js';
import { SEARCH_CACHE_DEPTH, searchCache, type SearchCache, type SearchCacheEntry } from './search-cache.js';

export const INDEX_JOB = 'documents.index';

/**
 * The caller may use documents at all (feature) and holds `permission`. Routes check this too; services
 * repeat it because MCP tools and the CLI call them directly.
 */
export function docAccess(ctx: ServiceContext, permission: string) {
  const p = requirePermission(ctx, permission);
  if (!p.org.features.includes('documents')) throw new AppError('FEATURE_DISABLED', 'The "documents" feature is not enabled for this organization', { feature: 'documents' });
  return p;
}

/** Spec 2.4 record; `folder_id` and `parent_id` name the same folder (create/update input says parent_id). */
export function toDocument(r: repo.DocumentRow): DocumentOutT {
  return {
    id: r.id, org_id: r.org_id, kind: r.kind, folder_id: r.parent_id, parent_id: r.parent_id, project_id: r.project_id,
    title: r.title, content: r.content, content_type: r.content_type,
    file_url: r.file_key ? `/v1/documents/${r.id}/file` : null, file_size: r.file_key ? r.file_size : null,
    tags: r.tags, metadata: r.metadata, is_indexed: r.is_indexed, indexed_at: r.indexed_at,
    created_by: r.created_by, created_at: r.created_at, updated_at: r.updated_at, deleted_at: r.deleted_at,
  };
}

/**
 * toDocument of a list row, plus the excerpt (and the rank of a search); built field by field, no spreads (hot in
 * lists). The rows come from a list statement, whose page was weighed (assertPageFits).
 */
function toListItem(r: repo.DocumentRow, withRank: boolean, rank?: number): DocumentListItemT {
  const item: DocumentListItemT = {
    id: r.id, org_id: r.org_id, kind: r.kind, folder_id: r.parent_id, parent_id: r.parent_id, project_id: r.project_id,
    title: r.title, content: r.content, content_type: r.content_type,
    file_url: r.file_key ? `/v1/documents/${r.id}/file` : null, file_size: r.file_key ? r.file_size : null,
    tags: r.tags, metadata: r.metadata, is_indexed: r.is_indexed, indexed_at: r.indexed_at,
    created_by: r.created_by, created_at: r.created_at, updated_at: r.updated_at, deleted_at: r.deleted_at,
    excerpt: r.excerpt ?? '',
  } as DocumentListItemT;
  if (withRank) item.rank = rank ?? r.rank ?? 0;
  return item;
}

/**
 * A list page carries the content of its documents (spec 2.4), up to repo.LIST_PAGE_CONTENT_BYTES in all: past that
 * the statement left the contents unread and the request is refused, naming what to change (a page without a
 * `limit` is asked again with fewer: listDocuments). A page of one document always fits (content is at most 10 MiB),
 * so every document can be listed.
 */
class PageContentTooLarge extends AppError {
  constructor(readonly bytes: number, limit: number) {
    const mib = (n: number) => `${Math.ceil(n / 1048576)} MiB`;
    super('INVALID_PARAMETER',
      `The documents of this page hold ${mib(bytes)} of content, more than one page carries (${mib(repo.LIST_PAGE_CONTENT_BYTES)}): ask for fewer with "limit" (it is ${limit}), or read the largest with GET /v1/documents/{id}`,
      { field: 'limit', maxBytes: repo.LIST_PAGE_CONTENT_BYTES, bytes });
  }
}
function assertPageFits(bytes: number, limit: number): void {
  if (bytes > repo.LIST_PAGE_CONTENT_BYTES) throw new PageContentTooLarge(bytes, limit);
}
const rowsFit = (rows: repo.DocumentRow[], limit: number) => assertPageFits(rows.length ? Number(rows[0].page_bytes ?? 0) : 0, limit);

/**
 * PostgreSQL text and jsonb cannot hold the NUL character (nor an unpaired surrogate): refuse it up front as a
 * validation error naming the input field (400) instead of letting the write fail (core assertStorableText).
 */
export const rejectNul = (value: unknown, field: string): void => assertStorableText(value, { nul: true, field });
const rejectNulFields = (input: Record<string, unknown>) => { for (const [k, v] of Object.entries(input)) rejectNul(v, k); };

/**
 * Spec 8 "document save content 10 MB", counted in UTF-8 bytes: over MAX_CONTENT_BYTES is 413 PAYLOAD_TOO_LARGE
 * (spec 7: details.maxBytes and details.limit). Checked here, before the safety gate and any write, so REST, MCP
 * and the CLI refuse alike. A string's UTF-8 size lies between its length and three times its length, which
 * settles most sizes without counting.
 */
export function assertContentSize(content: unknown): void {
  if (typeof content !== 'string') return;
  if (content.length * 3 <= MAX_CONTENT_BYTES) return;
  if (content.length > MAX_CONTENT_BYTES || Buffer.byteLength(content, 'utf8') > MAX_CONTENT_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `Field "content" is larger than the limit of ${MAX_CONTENT_BYTES} bytes (10 MiB) of UTF-8`,
      { field: 'content', maxBytes: MAX_CONTENT_BYTES, limit: MAX_CONTENT_BYTES });
  }
}

/**
 * A document's `metadata` (free-form JSON) is bounded like the spec's other free-form objects (alert-rule conditions
 * 64 KB): every list item and sync record carries it, so it must not grow with what a client sends (the body limit
 * of the document routes is 22 MiB, for content).
 */
export const MAX_METADATA_BYTES = 64 * 1024;
export function assertMetadataSize(metadata: unknown): void {
  if (metadata === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > MAX_METADATA_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `Field "metadata" is larger than the limit of ${MAX_METADATA_BYTES} bytes (64 KiB) of JSON; keep large data in content or a file`,
      { field: 'metadata', maxBytes: MAX_METADATA_BYTES, limit: MAX_METADATA_BYTES });
  }
}

/** The safety gate (spec 4.5): runs before anything is written; a refusal is 422 and nothing is stored. */
/** The strings of a free-form value (metadata): caller text stored and shown as given, so moderated like content. */
function textsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(textsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(textsIn);
  return [];
}

export async function moderate(ctx: Pick<ServiceContext, 'platform'>, texts: Array<string | undefined>): Promise<void> {
  const verdict = await documentsDeps(ctx.platform).moderation.check(texts.filter((t): t is string => !!t));
  if (verdict.flagged) {
    throw new AppError('CONTENT_POLICY_VIOLATION', 'The content was refused by the content policy', { categories: verdict.categories });
  }
}

async function checkRefs(sql: Sql, orgId: string, projectId: string | null | undefined, parentId: string | null | undefined, selfId?: string) {
  // Filed under an archived or deleted project: refused as for the project's tasks (409 PROJECT_ARCHIVED).
  if (projectId) await requireProject(sql, orgId, projectId, { writable: true, field: 'project_id' });
  if (parentId) {
    if (!(await repo.getDocument(sql, orgId, parentId))) throw notFound('Parent document', { field: 'parent_id' });
    // A move holds lockTree (updateDocument), so the check sees every move committed before it.
    if (selfId && (await repo.isSelfOrDescendant(sql, orgId, selfId, parentId))) {
      throw validation('A document cannot be moved under itself or one of its descendants', { field: 'parent_id' });
    }
  }
}

function publish(ctx: ServiceContext, type: string, orgId: string, id: string, data: Record<string, unknown> = {}) {
  ctx.platform.events.publish({ type, orgId, actorUserId: ctx.principal?.userId ?? null, targetType: 'document', targetId: id, data, at: new Date().toISOString() });
}

/** Creates a document (or, with `kind`, a sheet or deck); indexing is queued in the same transaction. */
export async function createDocument(ctx: ServiceContext, input: CreateDocumentInput & { kind?: 'document' | 'sheet' | 'deck' }): Promise<DocumentOutT> {
  const p = docAccess(ctx, 'document.create');
  assertContentSize(input.content);
  assertMetadataSize(input.metadata);
  rejectNulFields(input);
  await moderate(ctx, [input.title, input.content, ...(input.tags ?? []), ...textsIn(input.metadata)]);
  if (input.kind === 'sheet' && input.content !== undefined) validateWorkbook(input.content, ctx.platform.config.jsonMaxDepth);
  if (input.kind === 'deck' && input.content !== undefined) validateDeck(input.content, ctx.platform.config.jsonMaxDepth);
  const id = uuidv7();
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await checkRefs(sql, p.orgId, input.project_id, input.parent_id);
    const r = await repo.insertDocument(sql, p.orgId, {
      id, kind: input.kind ?? 'document', projectId: input.project_id ?? null, parentId: input.parent_id ?? null,
      title: nonBlankText(input.title, 'title'), content: input.content ?? '', contentType: input.content_type ?? 'markdown',
      tags: input.tags ?? [], metadata: input.metadata ?? {}, language: searchLanguage(input.metadata?.language), createdBy: p.userId,
    });
    await enqueue(sql, { orgId: p.orgId, kind: INDEX_JOB, payload: { id }, dedupeKey: id });
    await audit(sql, ctx, { action: 'document.created', targetType: 'document', targetId: id, details: { title: r.title, kind: r.kind } });
    return r;
  });
  ctx.platform.jobs.poke();
  publish(ctx, 'document.created', p.orgId, id, { title: row.title });
  return toDocument(row);
}

export async function getDocument(ctx: ServiceContext, input: { id: string }): Promise<DocumentOutT> {
  const p = docAccess(ctx, 'document.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => repo.getDocument(sql, p.orgId, input.id));
  if (!row) throw notFound('Document');
  return toDocument(row);
}

/** Lists with filters; with `search`, only indexed documents match, ranked by ts_rank (title weighs more than content). */
/**
 * `content: false` leaves the contents out (items carry `content: ""`), for callers that show titles and excerpts
 * only (the MCP list tools and resources/list): nothing is weighed, and a search then uses the search cache for its
 * ranking only (the items it remembers carry content).
 */
export async function listDocuments(ctx: ServiceContext, input: ListDocumentsInput, opts: { content?: boolean } = {}): Promise<ListPage> {
  if (input.limit !== undefined) return listPage(ctx, input, input.limit, opts);
  // No `limit`: the default page, with fewer documents when they hold more content than a page carries (the answer's
  // limit says how many, so the next page is still offset + limit). One asks at most a few times: each try scales
  // the page by how far over it was.
  for (let limit = DEFAULT_LIST_LIMIT; ;) {
    try {
      return await listPage(ctx, input, limit, opts);
    } catch (err) {
      if (!(err instanceof PageContentTooLarge) || limit === 1) throw err;
      limit = Math.max(1, Math.min(limit - 1, Math.floor((limit * repo.LIST_PAGE_CONTENT_BYTES) / err.bytes)));
    }
  }
}

type ListPage = { items: DocumentListItemT[]; total: number; limit: number; offset: number };

async function listPage(ctx: ServiceContext, input: ListDocumentsInput, limit: number, opts: { content?: boolean }): Promise<ListPage> {
  const p = docAccess(ctx, 'document.view');
  const offset = input.offset ?? 0;
  const searching = input.search !== undefined && input.search.trim() !== '';
  const tsquery = searching ? toPrefixTsquery(input.search!) : undefined;
  if (searching && !tsquery) return { items: [], total: 0, limit, offset };
  const sortBy = input.sort_by ?? (searching ? 'relevance' : 'updated_at');
  if (sortBy === 'relevance' && !searching) throw new AppError('INVALID_PARAMETER', 'sort_by "relevance" needs a search', { field: 'sort_by' });
  const filter: repo.ListFilter = {
    projectId: input.project_id, parentId: input.parent_id, kind: input.kind, tsquery: tsquery ?? undefined,
    queryConfig: searching ? searchLanguage(input.language) : undefined, sortBy, sortOrder: input.sort_order ?? 'desc', limit, offset,
    withContent: opts.content !== false,
  };
  if (searching && offset + limit <= SEARCH_CACHE_DEPTH) return searchPage(ctx, p.orgId, filter);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const rows = await repo.listDocuments(sql, p.orgId, filter);
    rowsFit(rows, limit);
    const total = rows.length ? Number(rows[0].total) : offset > 0 ? await repo.countDocuments(sql, p.orgId, filter) : 0;
    return { items: rows.map((r) => toListItem(r, searching)), total, limit, offset };
  });
}

/** A page of a search: the total and the list items of its positions (undefined where no row came back). */
type RankedPage = { total: number; items: Array<DocumentListItemT | undefined> };

/**
 * A page within the first SEARCH_CACHE_DEPTH matches of a search: from the search cache when the organization's
 * documents have not changed since it was filled (search-cache.ts), else ranked now and remembered. Only list items
 * the entry does not hold yet are read.
 */
async function searchPage(ctx: ServiceContext, orgId: string, filter: repo.ListFilter): Promise<ListPage> {
  const cache = searchCache(ctx.platform);
  const key = JSON.stringify([orgId, filter.tsquery, filter.queryConfig, filter.projectId ?? null, filter.parentId ?? null, filter.kind ?? null, filter.sortBy, filter.sortOrder]);
  const { limit, offset } = filter;
  return ctx.platform.db.tenant(orgId, async (sql) => {
    const peeked = cache.peek(key);
    const page = (peeked && (await fromCache(sql, cache, key, peeked, orgId, offset, offset + limit, filter.withContent !== false))) || (await rankInto(sql, cache, key, orgId, filter));
    // A hole only if the document was deleted after the ranking (the next search ranks again).
    return { items: page.items.filter((item): item is DocumentListItemT => item !== undefined), total: page.total, limit, offset };
  });
}

/**
 * Hit path, one round trip: the version this snapshot sees and the rows of the page's items the entry lacks. The page
 * is what the entry held when the statement was sent plus those rows, never items another request stored meanwhile
 * (search-cache.ts says why); undefined if the entry is stale.
 */
async function fromCache(sql: Sql, cache: SearchCache, key: string, entry: SearchCacheEntry, orgId: string, from: number, to: number, withContent: boolean): Promise<RankedPage | undefined> {
  if (!withContent) {
    // The ranking only: the page's rows are read without content, and not remembered (remembered items carry it).
    const r = await repo.versionAndRows(sql, orgId, entry.ids.slice(from, to), false);
    return cache.check(key, entry, r.version) ? { total: entry.total, items: pageItems(entry, r.rows, from, to) } : undefined;
  }
  const held = heldItems(entry, from, to);
  const missing = held.flatMap((item, i) => (item ? [] : [entry.ids[from + i]]));
  const r = await repo.versionAndRows(sql, orgId, missing);
  if (!cache.check(key, entry, r.version)) return undefined;
  // Weighed whole: items held from other pages count too.
  assertPageFits(held.reduce((n, item) => n + (item ? Buffer.byteLength(item.content) : 0), 0) + (r.rows.length ? Number(r.rows[0].page_bytes ?? 0) : 0), to - from);
  if (missing.length === 0) return { total: entry.total, items: held };
  const read = pageItems(entry, r.rows, from, to);
  cache.fill(key, entry, from, read);
  return { total: entry.total, items: held.map((item, i) => item ?? read[i]) };
}

/** Miss path: the version (after in-flight writes), the ranking, then the page's rows; remembered under `key`. */
async function rankInto(sql: Sql, cache: SearchCache, key: string, orgId: string, filter: repo.ListFilter): Promise<RankedPage> {
  const version = await repo.documentsVersion(sql, orgId);
  const top = await repo.searchTop(sql, orgId, filter, SEARCH_CACHE_DEPTH);
  const entry: SearchCacheEntry = { version, total: top.length ? Number(top[0].total) : 0, ids: top.map((r) => r.id), ranks: top.map((r) => r.rank), items: [] };
  cache.set(key, entry);
  const { offset, limit } = filter;
  const ids = entry.ids.slice(offset, offset + limit);
  const withContent = filter.withContent !== false;
  const rows = ids.length ? await repo.listRowsByIds(sql, orgId, ids, withContent) : [];
  if (!withContent) return { total: entry.total, items: pageItems(entry, rows, offset, offset + limit) };
  rowsFit(rows, limit);
  const read = pageItems(entry, rows, offset, offset + limit);
  cache.fill(key, entry, offset, read);
  return { total: entry.total, items: read };
}

/** How many of the positions from..to the entry has matches for. */
const pageLength = (entry: SearchCacheEntry, from: number, to: number) => Math.max(0, Math.min(to, entry.ids.length) - from);

/** The entry's list items at positions from..to (undefined where it holds none yet). */
function heldItems(entry: SearchCacheEntry, from: number, to: number): Array<DocumentListItemT | undefined> {
  return Array.from({ length: pageLength(entry, from, to) }, (_, i) => entry.items[from + i]);
}

/** List items of positions from..to built from `rows` (undefined where no row came back). */
function pageItems(entry: SearchCacheEntry, rows: repo.DocumentRow[], from: number, to: number): Array<DocumentListItemT | undefined> {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return Array.from({ length: pageLength(entry, from, to) }, (_, i) => {
    const r = byId.get(entry.ids[from + i]);
    return r && toListItem(r, true, entry.ranks[from + i]);
  });
}

/** Alias for tools: search is listDocuments with a `search` text. */
export async function searchDocuments(ctx: ServiceContext, input: ListDocumentsInput & { search: string }, opts: { content?: boolean } = {}) {
  return listDocuments(ctx, input, opts);
}

export async function updateDocument(ctx: ServiceContext, input: UpdateDocumentInput & { id: string }): Promise<DocumentOutT> {
  const p = docAccess(ctx, 'document.update');
  assertContentSize(input.content);
  assertMetadataSize(input.metadata);
  rejectNulFields(input);
  await moderate(ctx, [input.title, input.content, ...(input.tags ?? []), ...textsIn(input.metadata)]);
  const reindex = input.title !== undefined || input.content !== undefined || input.metadata?.language !== undefined;
  let crdt: Uint8Array | undefined;
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    // Moves of one organization's documents are checked one at a time: A under B, B under C and C under A sent
    // together would each pass a descendant check that cannot see the others, and make a cycle. Taken before the
    // row lock: a move waits for the parent's row (its foreign key), and that row's own move may hold it.
    if (input.parent_id) await lockNamed(sql, `documents-tree:${p.orgId}`);
    const before = await repo.getDocument(sql, p.orgId, input.id, { forUpdate: true });
    if (!before) throw notFound('Document');
    // Sheets and decks hold a JSON model (docs/documents.md); content that is not one is refused, nothing is written.
    if (before.kind === 'sheet' && input.content !== undefined) validateWorkbook(input.content, ctx.platform.config.jsonMaxDepth);
    if (before.kind === 'deck' && input.content !== undefined) validateDeck(input.content, ctx.platform.config.jsonMaxDepth);
    if (before.kind !== 'document' && input.content_type !== undefined) throw validation(`The content type of a ${before.kind} cannot change`, { field: 'content_type' });
    // A document keeps the project it has even once that project is deleted (soft: it can come back); only a move
    // to another project needs one that is not deleted. A client writing back what it read gets no 404.
    const movedTo = input.project_id !== before.project_id ? input.project_id : undefined;
    await checkRefs(sql, p.orgId, movedTo, input.parent_id, input.id);
    let r: repo.DocumentRow | undefined;
    try {
      r = await repo.updateDocument(sql, p.orgId, input.id, {
        title: input.title === undefined ? undefined : nonBlankText(input.title, 'title'), content: input.content, contentType: input.content_type, projectId: input.project_id, parentId: input.parent_id,
        tags: input.tags, metadata: input.metadata, language: input.metadata ? searchLanguage(input.metadata.language) : undefined, reindex,
      });
    } catch (err) {
      // Sheets and decks are unique per project and kind by name (as on create): 409, not a database error.
      if (isUniqueViolation(err, 'documents_project_kind_name')) throw conflict(`A ${before.kind === 'sheet' ? 'spreadsheet' : 'deck'} with this name already exists in this project`, { code: 'NAME_EXISTS', field: 'title' });
      throw err;
    }
    if (reindex) await enqueue(sql, { orgId: p.orgId, kind: INDEX_JOB, payload: { id: input.id }, dedupeKey: input.id });
    const changed = Object.keys(input).filter((k) => k !== 'id');
    await audit(sql, ctx, { action: 'document.updated', targetType: 'document', targetId: input.id, details: { fields: changed } });
    // Under the row lock taken above: concurrent content writes replace the collaborative text one after the other.
    if (input.content !== undefined && before.kind !== 'sheet') crdt = await replaceContentInTx(ctx.platform, sql, p.orgId, input.id, input.content);
    return r!;
  });
  if (reindex) ctx.platform.jobs.poke();
  if (crdt) roomsHear(ctx.platform, p.orgId, input.id, crdt);
  publish(ctx, 'document.updated', p.orgId, input.id);
  return toDocument(row);
}

/** Permanent delete: the row, its collaborative history, comments and its stored file. */
export async function deleteDocument(ctx: ServiceContext, input: { id: string }): Promise<{ id: string; deleted: boolean }> {
  const p = docAccess(ctx, 'document.delete');
  const gone = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const r = await repo.deleteDocument(sql, p.orgId, input.id);
    if (!r) throw notFound('Document');
    await audit(sql, ctx, { action: 'document.deleted', targetType: 'document', targetId: input.id });
    return r;
  });
  if (gone.file_key) await removeStoredFile(ctx, gone.file_key);
  publish(ctx, 'document.deleted', p.orgId, input.id);
  return { id: input.id, deleted: true };
}

/** Job handler: indexes the current title and content; a missing document (deleted since) is done. */
export async function runIndexJob(ctx: { platform: ServiceContext['platform'] }, job: { org_id: string; payload: Record<string, unknown> }): Promise<void> {
  const id = String(job.payload.id ?? '');
  await ctx.platform.db.tenant(job.org_id, (sql) => repo.indexDocument(sql, job.org_id, id));
}
