import { AppError, notFound } from '../../core/errors.js';
import type { Sql } from '../../core/db/database.js';
import type { ServiceContext } from '../../core/context.js';
import { tasksRepo, type Actor } from './tasks.repo.js';
import type { TaskRow } from './tasks.schemas.js';

/** References a task body may carry; `undefined` means "not given", `null` clears. */
export interface TaskRefs { spec_id?: string | null; assignee_id?: string | null; parent_task_id?: string | null; depends_on?: string[] }

/**
 * Checks the references of a new or changed task: missing ones (or another organization's) are 404 naming the
 * field; ones in another project, self-links and cycles are VALIDATION_ERROR.
 */
export async function checkTaskRefs(sql: Sql, orgId: string, projectId: string, taskId: string, refs: TaskRefs, isNew: boolean): Promise<void> {
  if (refs.spec_id) {
    const spec = await tasksRepo.specProject(sql, orgId, refs.spec_id);
    if (!spec) throw notFound('Spec', { field: 'spec_id' });
    if (spec.project_id !== projectId) throw new AppError('VALIDATION_ERROR', 'spec_id must be a spec of the same project', { field: 'spec_id' });
  }
  if (refs.assignee_id && !(await tasksRepo.isOrgMember(sql, orgId, refs.assignee_id))) {
    throw notFound('Assignee (a member of the organization)', { field: 'assignee_id' });
  }
  const linked = [...(refs.depends_on ?? []), ...(refs.parent_task_id ? [refs.parent_task_id] : [])];
  if (!linked.length) return;
  if (refs.depends_on?.includes(taskId)) throw new AppError('VALIDATION_ERROR', 'A task cannot depend on itself', { field: 'depends_on' });
  if (refs.parent_task_id === taskId) throw new AppError('VALIDATION_ERROR', 'A task cannot be its own parent', { field: 'parent_task_id' });
  const found = new Map((await tasksRepo.tasksProjects(sql, orgId, [...new Set(linked)])).map((r) => [r.id, r.project_id]));
  for (const [field, ids] of [['depends_on', refs.depends_on ?? []], ['parent_task_id', refs.parent_task_id ? [refs.parent_task_id] : []]] as const) {
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw notFound('Task', { field, missing });
    if (ids.some((id) => found.get(id) !== projectId)) throw new AppError('VALIDATION_ERROR', `${field} must name tasks of the same project`, { field });
  }
  if (isNew) return; // nothing depends on, or descends from, a task that does not exist yet
  await tasksRepo.lockGraph(sql, orgId);
  if (refs.depends_on?.length && await tasksRepo.dependsReach(sql, orgId, refs.depends_on, taskId)) {
    throw new AppError('VALIDATION_ERROR', 'depends_on would create a dependency cycle: one of these tasks already depends (directly or indirectly) on this task', { field: 'depends_on', reason: 'DEPENDENCY_CYCLE' });
  }
  if (refs.parent_task_id && await tasksRepo.parentReach(sql, orgId, refs.parent_task_id, taskId)) {
    throw new AppError('VALIDATION_ERROR', 'parent_task_id would create a cycle: that task is a subtask of this one', { field: 'parent_task_id', reason: 'PARENT_CYCLE' });
  }
}

const MENTION_RE = /(?:^|[^A-Za-z0-9._%+-])@([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})/g;

/** Lower-case e-mails written as `@<email>` in a text. */
export function mentionedEmails(text: string | null | undefined): string[] {
  if (!text) return [];
  return [...new Set([...text.matchAll(MENTION_RE)].map((m) => m[1].toLowerCase()))];
}

/** Members newly mentioned in `after` (not already in `before`). */
export async function newMentions(sql: Sql, orgId: string, before: string | null, after: string | null): Promise<string[]> {
  const old = new Set(mentionedEmails(before));
  const emails = mentionedEmails(after).filter((e) => !old.has(e));
  if (!emails.length) return [];
  return (await tasksRepo.membersByEmail(sql, orgId, emails)).map((r) => r.id);
}

export const actorOf = (ctx: ServiceContext): Actor => ({
  userId: ctx.principal?.userId ?? null, apiKeyId: ctx.principal?.apiKeyId ?? null, kind: ctx.principal?.kind ?? 'system',
});

/** The fields the activity feed compares, as the API names them. */
export const TRACKED_FIELDS = ['title', 'description', 'status', 'priority', 'assigned_to', 'due_date', 'spec_id', 'parent_task_id', 'depends_on'] as const;
export type TrackedField = (typeof TRACKED_FIELDS)[number];

export function trackedValues(t: Pick<TaskRow, 'title' | 'description' | 'status_key' | 'priority' | 'assigned_to' | 'due_date' | 'spec_id' | 'parent_task_id' | 'depends_on'>): Record<TrackedField, unknown> {
  return {
    title: t.title, description: t.description, status: t.status_key, priority: t.priority, assigned_to: t.assigned_to,
    due_date: t.due_date, spec_id: t.spec_id, parent_task_id: t.parent_task_id, depends_on: [...t.depends_on].sort(),
  };
}
