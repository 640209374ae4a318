import type { Sql } from '../../core/db/database.js';

/** Synced resource type → table. Each table has a change-log trigger (migration 0041). */
export const SYNC_TABLES = {
  entities: 'entities', relationships: 'relationships', documents: 'documents', tasks: 'tasks', comments: 'comments', projects: 'projects',
} as const;
export type SyncType = keyof typeof SYNC_TABLES;
export const SYNC_TYPES = Object.keys(SYNC_TABLES) as SyncType[];
/** Records per pull page at most, and the sync config's `max_items` (spec 2.8: always 500). */
export const SYNC_PAGE_MAX = 500;
/**
 * Bytes of large fields after which a pull page ends: 500 documents near the 10 MiB content limit would be a 5 GB
 * page. A page takes records while those before weigh less than this (so at most this plus one record; the first
 * record always goes), and the cursor goes on from there: keyset pages may be shorter than the limit.
 */
export const SYNC_PAGE_BYTES = 32 * 1024 * 1024;
/** What a record weighs against SYNC_PAGE_BYTES, read without detoasting (types whose records can be large). */
const WEIGHT: Partial<Record<SyncType, string>> = {
  documents: 'COALESCE(octet_length(r.content), 0) + COALESCE(pg_column_size(r.metadata), 0)',
};

/**
 * Columns never sent to clients. Rows keep `org_id` where their REST records have it (spec 2.2 for a project, the
 * entity, relationship and comment records; not a task, spec 2.3). Document rows also keep `file_key`: the service
 * turns them into the spec 2.4 record (`folder_id`, `file_url`), which drops the remaining internal columns.
 */
const HIDDEN: Record<SyncType, string[]> = {
  entities: [], relationships: [], comments: [], tasks: ['org_id'], projects: [],
  documents: ['search', 'content_version', 'language'],
};

/**
 * Live rows a bulk download leaves out: a soft-deleted project (spec part 3: "hidden from listings"; its row stays, so
 * a delta still carries its delete, and a restore, as updates).
 */
const BULK_SKIPS: Partial<Record<SyncType, string>> = { projects: 'r.deleted_at IS NOT NULL' };

/**
 * The barrier: waits for this organization's in-flight synced writes (each holds the same advisory lock in
 * shared mode until it commits; this takes it exclusively), then reads the highest change number of the type and
 * the clock. Every change of the type at or below `bound` is committed and visible; every later change gets a higher
 * number (the sequence is shared by all types) and a later time. The type's own highest number is enough: a pull
 * reads that type alone, and the (org, type, change_seq) index answers it, so synced writes keep no org-wide index
 * (migration 0062). Runs in a transaction; the lock is held until it ends (the service reads the first page under it).
 */
export async function barrier(sql: Sql, orgId: string, type: SyncType): Promise<{ bound: number; nowMs: number }> {
  await sql.query(`SELECT app_sync_lock($1)`, [orgId]);
  const r = await sql.one<{ bound: number; now_ms: number }>(`SELECT COALESCE((SELECT change_seq FROM sync_changes
        WHERE org_id = $1 AND resource_type = $2 ORDER BY change_seq DESC LIMIT 1), 0) AS bound,
      floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms`, [orgId, type]);
  return { bound: r!.bound, nowMs: r!.now_ms };
}

/**
 * Where a delta pull starts: just below the lowest change number among changes after `since`. Concurrent
 * writers draw their number and their time in either order (migration 0047), so the first change by time
 * need not be the first by number; the minimum over all of them is exact. Read from the (org, type,
 * changed_at) index, which carries change_seq.
 */
export async function startAfter(sql: Sql, orgId: string, type: SyncType, sinceMs: number): Promise<number> {
  const r = await sql.one<{ seq: number | null }>(`SELECT min(change_seq) AS seq FROM sync_changes
    WHERE org_id = $1 AND resource_type = $2 AND changed_at > to_timestamp($3::bigint / 1000.0)`, [orgId, type, sinceMs]);
  return r?.seq != null ? r.seq - 1 : Number.MAX_SAFE_INTEGER;
}

/**
 * Fields a record carries beside its row: a task names its status as spec 2.3 does (`status_key`, `status_name`).
 * A task's change of status is a change of the task; renaming a status definition does not resend its tasks.
 */
const JOINED: Partial<Record<SyncType, { join: string; fields: string }>> = {
  tasks: { join: 'LEFT JOIN task_statuses s ON s.org_id = r.org_id AND s.id = r.status_id', fields: `jsonb_build_object('status_key', s.key, 'status_name', s.name)` },
};

/** `over`: the page's records before this one already weigh SYNC_PAGE_BYTES; its data was not read (the page ends before it). */
export interface ChangeRow { id: string; change_seq: number; changed_at: string; deleted: boolean; data: Record<string, unknown> | null; over?: boolean }

/** One page of changes in change order, (after, bound]; `sinceMs` null = bulk (live rows only). */
export async function changes(sql: Sql, orgId: string, type: SyncType, q: { after: number; bound: number; sinceMs: number | null; limit: number }): Promise<ChangeRow[]> {
  const table = SYNC_TABLES[type];
  const hidden = HIDDEN[type].map((c) => ` - '${c}'`).join('');
  const joined = JOINED[type];
  const weight = WEIGHT[type];
  // The running weight is a window over the page's order, so LIMIT still stops the scan; a record past the budget
  // is marked `over` and its jsonb is not built (its large values are never read).
  const over = weight ? `sum(${weight}) OVER w - (${weight}) >= ${SYNC_PAGE_BYTES}` : 'false';
  return sql.query<ChangeRow>(`SELECT c.id, c.change_seq, c.changed_at, (c.deleted OR r.id IS NULL) AS deleted,
      CASE WHEN r.id IS NULL OR ${over} THEN NULL ELSE (to_jsonb(r)${hidden})${joined ? ` || ${joined.fields}` : ''} END AS data,
      ${over} AS over
    FROM sync_changes c LEFT JOIN ${table} r ON r.org_id = c.org_id AND r.id = c.id ${joined?.join ?? ''}
    WHERE c.org_id = $1 AND c.resource_type = $2 AND c.change_seq > $3 AND c.change_seq <= $4
      AND ($5::bigint IS NULL OR c.changed_at > to_timestamp($5::bigint / 1000.0))
      AND ($5::bigint IS NOT NULL OR NOT c.deleted)${BULK_SKIPS[type] ? ` AND ($5::bigint IS NOT NULL OR NOT (${BULK_SKIPS[type]}))` : ''}
    ${weight ? 'WINDOW w AS (ORDER BY c.change_seq ROWS UNBOUNDED PRECEDING)' : ''}
    ORDER BY c.change_seq LIMIT $6`, [orgId, type, q.after, q.bound, q.sinceMs, q.limit]);
}
