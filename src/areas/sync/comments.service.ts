import type { ServiceContext } from '../../core/context.js';
import { requirePermission } from '../../core/context.js';
import { notFound, permissionDenied } from '../../core/errors.js';
import { checkNeeds } from '../../core/http/guard.js';
import type { Feature } from '../../core/config.js';
import { audit } from '../../core/audit.js';
import { uuidv7 } from '../../core/ids.js';
import type { Sql } from '../../core/db/database.js';
import { moderate } from '../documents/documents.service.js';
import type { CreateCommentInput } from './sync.schemas.js';
import * as repo from './comments.repo.js';
import { pageWithTotal } from '../../core/pagination.js';

const VIEW = { document: 'document.view', task: 'task.view' } as const;
const WRITE = { document: 'document.update', task: 'task.update' } as const;
type Target = keyof typeof VIEW;
/** The feature a target type belongs to (a document's comments are part of documents); tasks need none of their own here. */
const FEATURE: Record<Target, Feature | null> = { document: 'documents', task: null };

/**
 * Comments on a document are off with the documents feature: 403 FEATURE_DISABLED, as the core route guard answers
 * for every documents route (checked before the permission, in the architecture's auth order).
 */
function assertTargetFeature(ctx: ServiceContext, type: Target): void {
  const feature = FEATURE[type];
  if (feature && ctx.principal) checkNeeds({ feature }, ctx.principal);
}

/**
 * 404 unless the target exists. `keep` holds it until the transaction ends, for a comment being written: a delete of
 * the target running now (which takes its comments with it) waits for the comment and then removes it too, or this
 * finds the target gone. Without it a comment could outlive its target, unreachable.
 */
async function targetExists(sql: Sql, orgId: string, type: Target, id: string, opts: { keep?: boolean } = {}) {
  if (!(await repo.targetExists(sql, orgId, type, id, opts))) {
    throw notFound(type === 'document' ? 'Document' : 'Task', { field: 'target_id' });
  }
}

/** Comments on a document or a task, oldest first (a discussion reads top-down). */
export async function listComments(ctx: ServiceContext, q: { target_type: Target; target_id: string; limit: number; offset: number }) {
  assertTargetFeature(ctx, q.target_type);
  const p = requirePermission(ctx, VIEW[q.target_type]);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    await targetExists(sql, p.orgId, q.target_type, q.target_id);
    const rows = await repo.listComments(sql, p.orgId, { targetType: q.target_type, targetId: q.target_id, limit: q.limit, offset: q.offset });
    return pageWithTotal(rows, q.offset, () => repo.countComments(sql, p.orgId, q.target_type, q.target_id));
  });
}

export async function createComment(ctx: ServiceContext, input: CreateCommentInput) {
  assertTargetFeature(ctx, input.target_type);
  const p = requirePermission(ctx, WRITE[input.target_type]);
  await moderate(ctx, [input.body]);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await targetExists(sql, p.orgId, input.target_type, input.target_id, { keep: true });
    const row = await repo.insertComment(sql, p.orgId, { id: uuidv7(), targetType: input.target_type, targetId: input.target_id, body: input.body, authorId: p.userId });
    await audit(sql, ctx, { action: 'comment.created', targetType: 'comment', targetId: row.id, details: { target_type: input.target_type, target_id: input.target_id } });
    return row;
  });
}

/**
 * The comment, when the caller may change it: its author while they may still write to its target (a member made
 * viewer keeps reading the discussion, and no longer writes to it), or, for `adminPermission`, a moderator.
 */
async function ownComment(sql: Sql, ctx: ServiceContext, orgId: string, id: string, adminPermission?: string) {
  const row = await repo.lockedCommentAuthor(sql, orgId, id);
  if (!row) throw notFound('Comment');
  assertTargetFeature(ctx, row.target_type);
  const permissions = ctx.principal!.permissions;
  if (!permissions.has(VIEW[row.target_type])) throw notFound('Comment');
  if (adminPermission && permissions.has(adminPermission)) return row;
  if (row.author_id !== ctx.principal!.userId) throw permissionDenied(adminPermission ?? 'comment.author');
  if (!permissions.has(WRITE[row.target_type])) throw permissionDenied(WRITE[row.target_type]);
  return row;
}

/** Only the author edits a comment. */
export async function updateComment(ctx: ServiceContext, input: { id: string; body: string }) {
  const p = requirePermission(ctx, 'document.view');
  await moderate(ctx, [input.body]);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await ownComment(sql, ctx, p.orgId, input.id);
    const row = await repo.updateCommentBody(sql, p.orgId, input.id, input.body);
    await audit(sql, ctx, { action: 'comment.updated', targetType: 'comment', targetId: input.id });
    return row!;
  });
}

/** The author, or an administrator (org.manage_members), deletes a comment. */
export async function deleteComment(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'document.view');
  await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await ownComment(sql, ctx, p.orgId, input.id, 'org.manage_members');
    await repo.deleteComment(sql, p.orgId, input.id);
    await audit(sql, ctx, { action: 'comment.deleted', targetType: 'comment', targetId: input.id });
  });
  return { id: input.id, deleted: true };
}
