import type { ServiceContext } from '../../core/context.js';
import type { Sql } from '../../core/db/database.js';
import { actor } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { checkNeeds } from '../../core/http/guard.js';
import { decodeCursor, encodeCursor } from '../../core/pagination.js';
import * as repo from './sync.repo.js';
import { toDocument } from '../documents/documents.service.js';
import type { DocumentRow } from '../documents/documents.repo.js';
import { getSyncConfig, syncConfigOf } from '../workspace/settings/account.service.js';


const NEEDS: Record<repo.SyncType, { scope: string; permission: string }> = {
  documents: { scope: 'documents:read', permission: 'document.view' },
  comments: { scope: 'documents:read', permission: 'document.view' },
  entities: { scope: 'projects:read', permission: 'project.view' },
  relationships: { scope: 'projects:read', permission: 'project.view' },
  tasks: { scope: 'projects:read', permission: 'task.view' },
  projects: { scope: 'projects:read', permission: 'project.view' },
};

interface Cursor extends Record<string, unknown> { r: string; b: number; a: number; t: number; s: number | null }
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const validCursor = (c: Cursor) => typeof c.r === 'string' && isCount(c.b) && isCount(c.a) && isCount(c.t) && (c.s === null || isCount(c.s));

/** Timestamps inside to_jsonb come as "…+00:00"; clients get RFC 3339 UTC like everywhere else. */
function normalize(data: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(data)) {
    if (typeof v === 'string' && (k.endsWith('_at') || k === 'due_date') && /^\d{4}-\d{2}-\d{2}T/.test(v)) data[k] = new Date(v).toISOString();
  }
  return data;
}

/**
 * A synced record as the resource's own routes return it where the spec defines the record: a document is the
 * spec 2.4 record of GET /v1/documents/{id} (with `folder_id` and `file_url`), not the stored row.
 */
const toRecord: Partial<Record<repo.SyncType, (row: Record<string, unknown>) => Record<string, unknown>>> = {
  documents: (row) => toDocument(row as unknown as DocumentRow),
};

export interface SyncPage {
  resource_type: string; mode: 'bulk' | 'delta';
  items: Record<string, unknown>[]; deleted: Array<{ id: string; deleted_at: string }>;
  next_cursor: string | null; has_more: boolean; server_time: number;
}

/**
 * Delta pull (spec 4.5). Without `since`: every live record (bulk). With `since` (epoch ms): records
 * changed after it, deletions as tombstones. Pages follow an opaque cursor that pins the change set
 * the first page saw; after the last page, `server_time` is the `since` of the next pull.
 */
export async function pull(ctx: ServiceContext, input: { resourceType: string; since?: number; cursor?: string; limit?: number }): Promise<SyncPage> {
  const p = actor(ctx);
  const type = input.resourceType as repo.SyncType;
  if (!repo.SYNC_TYPES.includes(type)) {
    throw new AppError('NOT_FOUND', `Unknown resource type "${input.resourceType}"`, { supported: repo.SYNC_TYPES });
  }
  checkNeeds(NEEDS[type], p);
  const limit = Math.min(input.limit ?? repo.SYNC_PAGE_MAX, repo.SYNC_PAGE_MAX);
  const pageAt = (sql: Sql, c: Cursor) => repo.changes(sql, p.orgId, type, { after: c.a, bound: c.b, sinceMs: c.s, limit: limit + 1 });
  let cur: Cursor;
  let rows: repo.ChangeRow[];
  if (input.cursor) {
    cur = decodeCursor<Cursor>(input.cursor, ['r', 'b', 'a', 't', 's'], validCursor);
    if (cur.r !== type || (input.since !== undefined && input.since !== cur.s)) {
      throw new AppError('INVALID_PARAMETER', 'The cursor belongs to another resource type or since', { field: 'cursor' });
    }
    rows = await ctx.platform.db.tenant(p.orgId, (sql) => pageAt(sql, cur));
  } else {
    // The first page is read while the barrier's lock is still held, so no synced write of the organization commits
    // between the bound and the page: a record changed before the pull and rewritten while it runs (the documents'
    // indexing job does that right after a write) is in this page with its current state. Read after the lock, its
    // change number could already have moved past the bound, deferring it to the next pull. Writers wait for one page.
    ({ cur, rows } = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
      const b = await repo.barrier(sql, p.orgId, type);
      const after = input.since === undefined ? 0 : Math.min(b.bound, await repo.startAfter(sql, p.orgId, type, input.since));
      const first: Cursor = { r: type, b: b.bound, a: after, t: b.nowMs, s: input.since ?? null };
      return { cur: first, rows: await pageAt(sql, first) };
    }));
  }
  // A page ends at `limit` records, or before the first record over the page's byte budget (repo.SYNC_PAGE_BYTES).
  const fit = rows.findIndex((r) => r.over);
  const hasMore = rows.length > limit || (fit !== -1 && fit < limit);
  const page = rows.slice(0, fit === -1 ? limit : Math.min(fit, limit));
  const items: Record<string, unknown>[] = [];
  const deleted: Array<{ id: string; deleted_at: string }> = [];
  for (const r of page) {
    if (r.deleted || !r.data) deleted.push({ id: r.id, deleted_at: r.changed_at });
    else items.push((toRecord[type] ?? ((row) => row))(normalize(r.data)));
  }
  const last = page.at(-1);
  return {
    resource_type: type, mode: cur.s === null ? 'bulk' : 'delta', items, deleted,
    next_cursor: hasMore && last ? encodeCursor({ ...cur, a: last.change_seq }) : null,
    has_more: hasMore, server_time: cur.t,
  };
}

/**
 * GET /v1/preferences/offline-sync: what an offline client should do. The user's `offline_sync` preference (the
 * defaults when it cannot be read), with `enabled` false where sync cannot run: GET /v1/sync/* needs the organization's
 * `documents` feature (403 FEATURE_DISABLED without it), and a client told `enabled` would try in vain.
 */
export async function offlineSyncPreferences(ctx: ServiceContext) {
  const p = actor(ctx);
  // Spec 2.8 defaults when the stored preferences cannot be read (4.5: "safe defaults on database error").
  let prefs = syncConfigOf({});
  try { prefs = await getSyncConfig(ctx); } catch (err) { ctx.platform.log.warn({ err }, 'offline sync preferences unavailable; serving defaults'); }
  return { ...prefs, enabled: prefs.enabled && p.org.features.includes('documents') };
}
