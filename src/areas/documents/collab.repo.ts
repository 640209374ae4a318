import type { Sql } from '../../core/db/database.js';
import type { Role } from '../../core/auth/permissions.js';

/** A stored CRDT update of a document; `seq` orders them (bigint, so a string as read). */
export interface UpdateRow { data: Buffer; seq: string }

/** What a collaboration ticket's holder is now, read across organizations (the system pool, no tenant set). */
export interface TicketHolderRow { role: Role; features: string[]; ok: boolean; scopes: string[] | null }

/**
 * The member's role, the organization's features, whether the organization is live, the user active and the
 * session or key (either may be null) unrevoked and unexpired, and the key's scopes; undefined when not a member.
 */
export async function ticketHolder(sql: Sql, orgId: string, userId: string, sessionId: string | null, apiKeyId: string | null): Promise<TicketHolderRow | undefined> {
  return sql.one<TicketHolderRow>(`SELECT m.role, o.features,
      (o.deleted_at IS NULL AND u.is_active
       AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = $3 AND s.revoked_at IS NULL AND s.expires_at > now()))
       AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $4 AND k.revoked_at IS NULL AND k.expires_at > now()))) AS ok,
      (SELECT k.scopes FROM api_keys k WHERE k.id = $4) AS scopes
    FROM memberships m JOIN organizations o ON o.id = m.org_id JOIN users u ON u.id = m.user_id
    WHERE m.org_id = $1 AND m.user_id = $2`, [orgId, userId, sessionId, apiKeyId]);
}

/** A document's stored updates in order (data and seq); empty when it has no CRDT state. */
export async function documentUpdates(sql: Sql, orgId: string, documentId: string): Promise<UpdateRow[]> {
  return sql.query<UpdateRow>(`SELECT data, seq FROM document_updates WHERE org_id = $1 AND document_id = $2 ORDER BY seq`, [orgId, documentId]);
}

/** A document's stored updates in order (seq and data), every row locked until the transaction ends (compaction). */
export async function lockedDocumentUpdates(sql: Sql, orgId: string, documentId: string): Promise<Array<{ seq: number; data: Buffer }>> {
  return sql.query<{ seq: number; data: Buffer }>(`SELECT seq, data FROM document_updates WHERE org_id = $1 AND document_id = $2 ORDER BY seq FOR UPDATE`, [orgId, documentId]);
}

/** Whether the document has any stored update (any CRDT state). */
export async function hasUpdates(sql: Sql, orgId: string, documentId: string): Promise<boolean> {
  return !!(await sql.one(`SELECT 1 FROM document_updates WHERE org_id = $1 AND document_id = $2 LIMIT 1`, [orgId, documentId]));
}

/** Whether the document has an update after `seq` (a text built through `seq` is then stale). */
export async function hasUpdateAfter(sql: Sql, orgId: string, documentId: string, seq: number): Promise<boolean> {
  return !!(await sql.one(`SELECT 1 FROM document_updates WHERE org_id = $1 AND document_id = $2 AND seq > $3 LIMIT 1`, [orgId, documentId, seq]));
}

/** Stores one update; returns its seq. */
export async function insertUpdate(sql: Sql, orgId: string, documentId: string, data: Buffer): Promise<string> {
  return (await sql.one<{ seq: string }>(`INSERT INTO document_updates (org_id, document_id, data) VALUES ($1, $2, $3) RETURNING seq`, [orgId, documentId, data]))!.seq;
}

/** Stores one update, in one statement with counting; returns how many rows the document now has (0 when none was read). */
export async function appendUpdateCounted(sql: Sql, orgId: string, documentId: string, data: Buffer): Promise<number> {
  const r = await sql.one<{ n: number }>(`WITH ins AS (INSERT INTO document_updates (org_id, document_id, data) VALUES ($1, $2, $3) RETURNING seq)
    SELECT (SELECT count(*) FROM document_updates WHERE org_id = $1 AND document_id = $2) + 1 AS n`, [orgId, documentId, data]);
  return r?.n ?? 0;
}

/** Deletes the document's updates up to `seq` (those merged by a compaction); returns how many. */
export async function deleteUpdatesThrough(sql: Sql, orgId: string, documentId: string, seq: number): Promise<number> {
  return sql.exec(`DELETE FROM document_updates WHERE org_id = $1 AND document_id = $2 AND seq <= $3`, [orgId, documentId, seq]);
}

/** Stores the merged update of a compaction (its seq is not needed); returns the rows written. */
export async function insertMergedUpdate(sql: Sql, orgId: string, documentId: string, data: Buffer): Promise<number> {
  return sql.exec(`INSERT INTO document_updates (org_id, document_id, data) VALUES ($1, $2, $3)`, [orgId, documentId, data]);
}

/**
 * Writes the collaborative text to `content` (a new content version, to be indexed again) when it differs, and only
 * when `accepted` and, for a deck, `deckValid`; returns the rows changed (0 or 1).
 */
export async function saveCollabContent(sql: Sql, orgId: string, documentId: string, content: string, deckValid: boolean, accepted: boolean): Promise<number> {
  return sql.exec(`UPDATE documents SET content = $3, is_indexed = false, content_version = content_version + 1, updated_at = now()
      WHERE org_id = $1 AND id = $2 AND content IS DISTINCT FROM $3 AND (kind <> 'deck' OR $4) AND $5`, [orgId, documentId, content, deckValid, accepted]);
}

/** Records the document's highest update seq as saved to `content` (never lowering it); returns the rows written. */
export async function markSavedThroughLatest(sql: Sql, orgId: string, documentId: string): Promise<number> {
  return sql.exec(`INSERT INTO collab_saved (org_id, document_id, seq)
      SELECT $1, $2, max(seq) FROM document_updates WHERE org_id = $1 AND document_id = $2 HAVING max(seq) IS NOT NULL
      ON CONFLICT (org_id, document_id) DO UPDATE SET seq = GREATEST(collab_saved.seq, EXCLUDED.seq)`, [orgId, documentId]);
}

/**
 * Documents (of every organization: `sql` is the owner connection) whose stored updates go past what was written to
 * `content`, the newest of them older than `quietSeconds`; at most `limit`.
 */
export async function documentsBehind(sql: Sql, quietSeconds: number, limit: number): Promise<Array<{ org_id: string; document_id: string }>> {
  return sql.query<{ org_id: string; document_id: string }>(`SELECT u.org_id, u.document_id
      FROM document_updates u LEFT JOIN collab_saved c ON c.org_id = u.org_id AND c.document_id = u.document_id
      GROUP BY u.org_id, u.document_id, c.seq
      HAVING max(u.seq) > coalesce(c.seq, 0) AND max(u.created_at) < now() - make_interval(secs => $1)
      LIMIT $2`, [quietSeconds, limit]);
}
