import type { Sql } from '../../core/db/database.js';

const COLS = 'id, org_id, target_type, target_id, body, author_id, created_at, updated_at';

/** What a comment is on. */
export type CommentTarget = 'document' | 'task';

/**
 * Whether the document or task exists in the organization; `keep` takes a key-share lock on it until the transaction
 * ends (its delete then waits for the comment being written).
 */
export async function targetExists(sql: Sql, orgId: string, type: CommentTarget, id: string, opts: { keep?: boolean } = {}): Promise<boolean> {
  const table = type === 'document' ? 'documents' : 'tasks';
  return !!(await sql.one(`SELECT 1 FROM ${table} WHERE org_id = $1 AND id = $2${opts.keep ? ' FOR KEY SHARE' : ''}`, [orgId, id]));
}

/** One page of a target's comments, oldest first, each row with the target's total. */
export async function listComments(sql: Sql, orgId: string, q: { targetType: CommentTarget; targetId: string; limit: number; offset: number }): Promise<Array<Record<string, unknown> & { total: number }>> {
  return sql.query<Record<string, unknown> & { total: number }>(`SELECT ${COLS}, count(*) OVER () AS total FROM comments
      WHERE org_id = $1 AND target_type = $2 AND target_id = $3 ORDER BY id LIMIT $4 OFFSET $5`, [orgId, q.targetType, q.targetId, q.limit, q.offset]);
}

/** How many comments the target has. */
export async function countComments(sql: Sql, orgId: string, targetType: CommentTarget, targetId: string): Promise<number> {
  return (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM comments WHERE org_id = $1 AND target_type = $2 AND target_id = $3`,
    [orgId, targetType, targetId]))!.n;
}

export interface NewComment { id: string; targetType: CommentTarget; targetId: string; body: string; authorId: string }

/** Inserts a comment; returns its row. */
export async function insertComment(sql: Sql, orgId: string, c: NewComment): Promise<Record<string, unknown> & { id: string }> {
  return (await sql.one<Record<string, unknown> & { id: string }>(`INSERT INTO comments (org_id, id, target_type, target_id, body, author_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLS}`,
    [orgId, c.id, c.targetType, c.targetId, c.body, c.authorId]))!;
}

/** A comment's author and target type, its row locked until the transaction ends; undefined when there is none. */
export async function lockedCommentAuthor(sql: Sql, orgId: string, id: string): Promise<{ author_id: string | null; target_type: CommentTarget } | undefined> {
  return sql.one<{ author_id: string | null; target_type: CommentTarget }>(`SELECT author_id, target_type FROM comments WHERE org_id = $1 AND id = $2 FOR UPDATE`, [orgId, id]);
}

/** Replaces a comment's body; returns the updated row, undefined when there is none. */
export async function updateCommentBody(sql: Sql, orgId: string, id: string, body: string): Promise<Record<string, unknown> | undefined> {
  return sql.one(`UPDATE comments SET body = $3, updated_at = now() WHERE org_id = $1 AND id = $2 RETURNING ${COLS}`, [orgId, id, body]);
}

/** Deletes a comment; returns the rows deleted (0 or 1). */
export async function deleteComment(sql: Sql, orgId: string, id: string): Promise<number> {
  return sql.exec(`DELETE FROM comments WHERE org_id = $1 AND id = $2`, [orgId, id]);
}
