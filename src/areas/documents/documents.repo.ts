import type { Sql } from '../../core/db/database.js';

export interface DocumentRow {
  org_id: string; id: string; kind: string; project_id: string | null; parent_id: string | null;
  title: string; content: string; content_type: string; tags: string[]; metadata: Record<string, unknown>;
  is_indexed: boolean; indexed_at: string | null; file_key: string | null; file_size: number | null;
  file_content_type: string | null; file_deleted_at: string | null;
  created_by: string | null; created_at: string; updated_at: string; deleted_at: string | null;
  excerpt?: string; rank?: number; total?: number;
  /** List statements: the bytes of content on the page; over LIST_PAGE_CONTENT_BYTES, `content` is null (not read). */
  page_bytes?: number;
}

const COLS = `org_id, id, kind, project_id, parent_id, title, content, content_type, tags, metadata, is_indexed, indexed_at,
  file_key, file_size, file_content_type, file_deleted_at, created_by, created_at, updated_at, deleted_at`;
/**
 * How much content one list page carries: spec 2.4 lists `content` among a document's fields and 4.5 lists
 * documents as `items`, so list items have it; a page of documents near the 10 MiB limit each would otherwise be a
 * response of up to a gigabyte. A page over this is refused (documents.service.ts, `400 INVALID_PARAMETER` naming
 * `limit`), and the statement does not even read its contents: they are toasted values, read only when output.
 */
export const LIST_PAGE_CONTENT_BYTES = 32 * 1024 * 1024;
/** List columns but the content, from alias `a`. */
const listColsOf = (a: string) => `${a}.org_id, ${a}.id, ${a}.kind, ${a}.project_id, ${a}.parent_id, ${a}.title, left(${a}.content, 200) AS excerpt,
  ${a}.content_type, ${a}.tags, ${a}.metadata, ${a}.is_indexed, ${a}.indexed_at, ${a}.file_key, ${a}.file_size, ${a}.file_content_type,
  ${a}.file_deleted_at, ${a}.created_by, ${a}.created_at, ${a}.updated_at, ${a}.deleted_at`;
/** The content of the rows of one page (alias `a`), unless the page holds more than LIST_PAGE_CONTENT_BYTES. */
const pageContentOf = (a: string) => `CASE WHEN sum(octet_length(${a}.content)) OVER () <= ${LIST_PAGE_CONTENT_BYTES} THEN ${a}.content END AS content,
  sum(octet_length(${a}.content)) OVER ()::float8 AS page_bytes`;
/**
 * A list page's columns from documents `a`: every row of the statement is on the page (no LIMIT after it). Without
 * content (callers that show titles only): `content` '' and nothing weighed.
 */
const LIST_COLS = (a: string, withContent = true) => (withContent ? `${listColsOf(a)}, ${pageContentOf(a)}` : `${listColsOf(a)}, ''::text AS content, 0::float8 AS page_bytes`);

export interface NewDocument {
  id: string; kind: string; projectId: string | null; parentId: string | null; title: string; content: string;
  contentType: string; tags: string[]; metadata: Record<string, unknown>; language: string; createdBy: string | null;
}

export async function insertDocument(sql: Sql, orgId: string, d: NewDocument): Promise<DocumentRow> {
  return (await sql.one<DocumentRow>(`INSERT INTO documents (org_id, id, kind, project_id, parent_id, title, content, content_type, tags, metadata, language, created_by)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::regconfig, $12) RETURNING ${COLS}`,
  [orgId, d.id, d.kind, d.projectId, d.parentId, d.title, d.content, d.contentType, d.tags, d.metadata, d.language, d.createdBy]))!;
}

/**
 * When a document of the organization was deleted (permanently), from the offline-sync tombstone the sync trigger
 * (migration 0041) writes on delete; undefined when it never existed here (or its tombstone is gone).
 */
export async function deletedAt(sql: Sql, orgId: string, id: string): Promise<string | undefined> {
  return (await sql.one<{ at: string }>(`SELECT changed_at AS at FROM sync_changes
    WHERE org_id = $1 AND resource_type = 'documents' AND id = $2 AND deleted`, [orgId, id]))?.at;
}

export async function getDocument(sql: Sql, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<DocumentRow | undefined> {
  return sql.one<DocumentRow>(`SELECT ${COLS} FROM documents WHERE org_id = $1 AND id = $2${opts.forUpdate ? ' FOR UPDATE' : ''}`, [orgId, id]);
}

/** A document's kind (`document`, `folder`, `sheet`, `deck`...), undefined when there is none. */
export async function documentKind(sql: Sql, orgId: string, id: string): Promise<string | undefined> {
  return (await sql.one<{ kind: string }>(`SELECT kind FROM documents WHERE org_id = $1 AND id = $2`, [orgId, id]))?.kind;
}

/** A document's content, its row locked with `forUpdate`; undefined when there is none. */
export async function documentContent(sql: Sql, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<string | undefined> {
  return (await sql.one<{ content: string }>(`SELECT content FROM documents WHERE org_id = $1 AND id = $2${opts.forUpdate ? ' FOR UPDATE' : ''}`, [orgId, id]))?.content;
}

/** Replaces the content (as a content PUT does: a new content version, to be indexed again). */
export async function replaceContent(sql: Sql, orgId: string, id: string, content: string): Promise<void> {
  await sql.exec(`UPDATE documents SET content = $3, is_indexed = false, content_version = content_version + 1, updated_at = now()
    WHERE org_id = $1 AND id = $2`, [orgId, id, content]);
}

export interface DocumentPatch {
  title?: string; content?: string; contentType?: string; projectId?: string | null; parentId?: string | null;
  tags?: string[]; metadata?: Record<string, unknown>; language?: string; reindex: boolean;
}

/** Applies the given fields; a title or content change clears is_indexed until the index job runs again. */
export async function updateDocument(sql: Sql, orgId: string, id: string, p: DocumentPatch): Promise<DocumentRow | undefined> {
  const has = (k: keyof DocumentPatch) => p[k] !== undefined;
  return sql.one<DocumentRow>(`UPDATE documents SET
      title = CASE WHEN $3 THEN $4 ELSE title END,
      content = CASE WHEN $5 THEN $6 ELSE content END,
      content_type = CASE WHEN $7 THEN $8 ELSE content_type END,
      project_id = CASE WHEN $9 THEN $10::uuid ELSE project_id END,
      parent_id = CASE WHEN $11 THEN $12::uuid ELSE parent_id END,
      tags = CASE WHEN $13 THEN $14::text[] ELSE tags END,
      metadata = CASE WHEN $15 THEN $16::jsonb ELSE metadata END,
      language = CASE WHEN $17 THEN $18::regconfig ELSE language END,
      is_indexed = CASE WHEN $19 THEN false ELSE is_indexed END,
      content_version = content_version + CASE WHEN $19 THEN 1 ELSE 0 END,
      updated_at = now()
    WHERE org_id = $1 AND id = $2 RETURNING ${COLS}`,
  [orgId, id, has('title'), p.title ?? null, has('content'), p.content ?? null, has('contentType'), p.contentType ?? null,
    p.projectId !== undefined, p.projectId ?? null, p.parentId !== undefined, p.parentId ?? null, has('tags'), p.tags ?? null,
    has('metadata'), p.metadata ?? null, has('language'), p.language ?? null, p.reindex]);
}

/**
 * Deletes a document; its children move to the top level as a change of theirs (`updated_at` moves, as for any
 * other change of `parent_id`), which the foreign key's own SET NULL would not do.
 */
export async function deleteDocument(sql: Sql, orgId: string, id: string): Promise<{ file_key: string | null } | undefined> {
  return sql.one(`WITH moved AS (UPDATE documents SET parent_id = NULL, updated_at = now() WHERE org_id = $1 AND parent_id = $2)
    DELETE FROM documents WHERE org_id = $1 AND id = $2 RETURNING file_key`, [orgId, id]);
}

/** Whether `candidate` is `id` itself or one of its descendants (moving a folder under itself would make a cycle). */
export async function isSelfOrDescendant(sql: Sql, orgId: string, id: string, candidate: string): Promise<boolean> {
  const r = await sql.one(`WITH RECURSIVE up AS (
      SELECT id, parent_id, 1 AS depth FROM documents WHERE org_id = $1 AND id = $3
      UNION ALL SELECT d.id, d.parent_id, up.depth + 1 FROM documents d JOIN up ON d.org_id = $1 AND d.id = up.parent_id WHERE up.depth < 1000)
    SELECT 1 FROM up WHERE id = $2 LIMIT 1`, [orgId, id, candidate]);
  return !!r;
}

export interface ListFilter {
  projectId?: string; parentId?: string; kind?: string;
  /** to_tsquery text (terms joined by &, the last one a prefix) and the query languages. */
  tsquery?: string; queryConfig?: string;
  sortBy: 'relevance' | 'created_at' | 'updated_at' | 'title'; sortOrder: 'asc' | 'desc'; limit: number; offset: number;
  /** false: a plain list without the contents (content '', page_bytes 0), for callers that show titles only. */
  withContent?: boolean;
}

/** ORDER BY of the plain list (columns of documents). */
const ORDER: Record<string, Record<string, string>> = {
  created_at: { desc: 'created_at DESC, id DESC', asc: 'created_at ASC, id ASC' },
  updated_at: { desc: 'updated_at DESC, id DESC', asc: 'updated_at ASC, id ASC' },
  title: { desc: 'lower(title) DESC, id DESC', asc: 'lower(title) ASC, id ASC' },
};
/** ORDER BY of a search (columns of documents_search_candidates(), prefixed `m`). */
const SEARCH_ORDER: Record<string, Record<string, string>> = {
  relevance: { desc: 'm.match_rank DESC, m.match_updated_at DESC, m.match_id DESC', asc: 'm.match_rank ASC, m.match_updated_at ASC, m.match_id ASC' },
  created_at: { desc: 'm.match_created_at DESC, m.match_id DESC', asc: 'm.match_created_at ASC, m.match_id ASC' },
  updated_at: { desc: 'm.match_updated_at DESC, m.match_id DESC', asc: 'm.match_updated_at ASC, m.match_id ASC' },
  title: { desc: 'm.match_title_key DESC, m.match_id DESC', asc: 'm.match_title_key ASC, m.match_id ASC' },
};

const FILTERS = (a: string) => `${a}.org_id = $1 AND ($2::uuid IS NULL OR ${a}.project_id = $2) AND ($3::uuid IS NULL OR ${a}.parent_id = $3) AND ($4::text IS NULL OR ${a}.kind = $4)`;

/** The list statement of a filter: plain or search (exported for tests). */
export function listDocumentsSql(f: Pick<ListFilter, 'tsquery' | 'sortBy' | 'sortOrder' | 'withContent'>): string {
  if (f.tsquery === undefined) {
    // The total is an uncorrelated subquery (once, from an index), not count(*) OVER (), which would read every
    // document of the organization in full before LIMIT.
    // The page is cut first, then its content is weighed (a window over the page alone, not every document).
    return `SELECT ${LIST_COLS('p', f.withContent !== false)}, 0::float8 AS rank, p.total FROM (
        SELECT d.*, (SELECT count(*) FROM documents c WHERE ${FILTERS('c')}) AS total
          FROM documents d WHERE ${FILTERS('d')}
         ORDER BY ${ORDER[f.sortBy][f.sortOrder]} LIMIT $5 OFFSET $6) p
      ORDER BY ${ORDER[f.sortBy][f.sortOrder]}`;
  }
  // Matches come from documents_search_candidates() (migrations 0045, 0048): one GIN scan under the tenant rule,
  // with rank and sort keys; they are counted, sorted and paged, and only the page is read from documents.
  const order = SEARCH_ORDER[f.sortBy][f.sortOrder];
  // The page keeps the sort keys, so the outer ORDER BY repeats the same order over 50 rows (a top-N sort inside,
  // no full sort of every match for a row number).
  return `WITH page AS (
      SELECT m.*, count(*) OVER () AS total
        FROM documents_search_candidates(app_search_query($8::regconfig, $7), $2, $3, $4) m
       ORDER BY ${order} LIMIT $5 OFFSET $6)
    SELECT ${LIST_COLS('d', f.withContent !== false)}, page.match_rank::float8 AS rank, page.total
      FROM page JOIN documents d ON d.org_id = $1 AND d.id = page.match_id
     ORDER BY ${order.replaceAll('m.', 'page.')}`;
}

/**
 * One statement: filters, optional ranked full-text match (the query parsed in the caller's language and in
 * `simple`, so stemmed and exact words both match), the total, one page.
 */
export async function listDocuments(sql: Sql, orgId: string, f: ListFilter): Promise<DocumentRow[]> {
  const base = [orgId, f.projectId ?? null, f.parentId ?? null, f.kind ?? null, f.limit, f.offset];
  return sql.query<DocumentRow>(listDocumentsSql(f), f.tsquery === undefined ? base : [...base, f.tsquery, f.queryConfig ?? 'simple']);
}

export async function countDocuments(sql: Sql, orgId: string, f: ListFilter): Promise<number> {
  const r = f.tsquery === undefined
    ? await sql.one<{ n: number }>(`SELECT count(*) AS n FROM documents c WHERE ${FILTERS('c')}`, [orgId, f.projectId ?? null, f.parentId ?? null, f.kind ?? null])
    : await sql.one<{ n: number }>(`SELECT count(*) AS n FROM documents_search_candidates(app_search_query($5::regconfig, $4), $1, $2, $3)`,
      [f.projectId ?? null, f.parentId ?? null, f.kind ?? null, f.tsquery, f.queryConfig ?? 'simple']);
  return r?.n ?? 0;
}

/**
 * The organization's documents version for ranking a search into the search cache (migration 0049): waits for the
 * organization's in-flight document writes, then reads the highest change number of its documents (every insert,
 * update, re-index and delete raises it). Every change up to it is committed; any later change gets a higher number.
 */
export async function documentsVersion(sql: Sql, orgId: string): Promise<number> {
  return (await sql.one<{ version: number }>(`SELECT app_documents_version($1) AS version`, [orgId]))!.version;
}

/**
 * The highest change number of the organization's documents in the statement's own snapshot, without waiting for
 * writers: what a search cache hit checks its entry against (search-cache.ts explains why no wait is needed).
 */
const VERSION_SEEN = `COALESCE((SELECT change_seq FROM sync_changes WHERE org_id = $1 AND resource_type = 'documents'
  ORDER BY change_seq DESC LIMIT 1), 0)`;

/**
 * The version the statement sees and the list rows of the given documents, from one snapshot in one round trip (the
 * search cache's hit path). With no ids, the version alone.
 */
export async function versionAndRows(sql: Sql, orgId: string, ids: string[], withContent = true): Promise<{ version: number; rows: DocumentRow[] }> {
  if (ids.length === 0) return { version: (await sql.one<{ v: number }>(`SELECT ${VERSION_SEEN} AS v`, [orgId]))!.v, rows: [] };
  const r = await sql.query<DocumentRow & { v: number }>(`SELECT v.v, d.* FROM (SELECT ${VERSION_SEEN} AS v) v
    LEFT JOIN LATERAL (SELECT ${LIST_COLS('x', withContent)} FROM documents x WHERE x.org_id = $1 AND x.id = ANY($2::uuid[])) d ON true`, [orgId, ids]);
  return { version: r[0].v, rows: r.filter((x) => x.id !== null) };
}

/**
 * The first `depth` matches of a search in order (id and rank) and the number of matches, sorted, counted and cut
 * inside documents_search_top() (migration 0051), which returns only the rows kept.
 */
export async function searchTop(sql: Sql, orgId: string, f: ListFilter, depth: number): Promise<Array<{ id: string; rank: number; total: number }>> {
  return sql.query(`SELECT match_id AS id, match_rank::float8 AS rank, total
      FROM documents_search_top(app_search_query($5::regconfig, $4), $1, $2, $3, $6, $7, $8)`,
  [f.projectId ?? null, f.parentId ?? null, f.kind ?? null, f.tsquery, f.queryConfig ?? 'simple', f.sortBy, f.sortOrder === 'desc', depth]);
}

/** List rows of the given documents (any order). */
export async function listRowsByIds(sql: Sql, orgId: string, ids: string[], withContent = true): Promise<DocumentRow[]> {
  return sql.query<DocumentRow>(`SELECT ${LIST_COLS('x', withContent)} FROM documents x WHERE x.org_id = $1 AND x.id = ANY($2::uuid[])`, [orgId, ids]);
}

/** The `documents.index` job's work: builds the weighted vector from the current title and content (of a sheet or deck, its JSON's values: migration 0064). */
export async function indexDocument(sql: Sql, orgId: string, id: string): Promise<number> {
  return sql.exec(`UPDATE documents SET
      search = setweight(to_tsvector(language, app_unicode_lower(title)), 'A') || setweight(app_document_content_vector(language, kind, content), 'B'),
      is_indexed = true, indexed_at = now()
    WHERE org_id = $1 AND id = $2`, [orgId, id]);
}

export async function setFile(sql: Sql, orgId: string, id: string, f: { key: string; size: number; contentType: string }): Promise<DocumentRow | undefined> {
  return sql.one<DocumentRow>(`UPDATE documents SET file_key = $3, file_size = $4, file_content_type = $5, file_deleted_at = NULL, updated_at = now()
    WHERE org_id = $1 AND id = $2 RETURNING ${COLS}`, [orgId, id, f.key, f.size, f.contentType]);
}

/** Bytes of the organization's stored files, but the one of document `exceptId` (which an upload replaces). */
export async function fileBytes(sql: Sql, orgId: string, exceptId: string): Promise<number> {
  return (await sql.one<{ n: number }>(`SELECT COALESCE(sum(file_size), 0)::bigint AS n FROM documents
    WHERE org_id = $1 AND file_key IS NOT NULL AND id <> $2`, [orgId, exceptId]))!.n;
}

export async function markFileDeleted(sql: Sql, orgId: string, id: string): Promise<{ file_key: string | null } | undefined> {
  return sql.one(`UPDATE documents d SET file_deleted_at = now(), file_key = NULL, file_size = NULL, updated_at = now()
    FROM (SELECT file_key FROM documents WHERE org_id = $1 AND id = $2 FOR UPDATE) old
    WHERE d.org_id = $1 AND d.id = $2 RETURNING old.file_key`, [orgId, id]);
}
