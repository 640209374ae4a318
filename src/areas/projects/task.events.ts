import type { ServiceContext } from '../../core/context.js';

/** Every event type the projects area publishes (names are `<resource>.<event>`). */
export const PROJECT_EVENT_TYPES = [
  'project.created', 'project.updated', 'project.archived', 'project.unarchived', 'project.deleted',
] as const;

/** Every event type the tasks part publishes; `recipients` is set on task.assigned and task.mentioned. */
export const TASK_EVENT_TYPES = [
  'task.created', 'task.updated', 'task.assigned', 'task.status_changed', 'task.completed', 'task.mentioned', 'task.deleted',
] as const;

export type ProjectEventType = (typeof PROJECT_EVENT_TYPES)[number];
export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];

/** Publishes one event of the caller's organization; call after the transaction has committed. */
export function emit(ctx: ServiceContext, type: ProjectEventType | TaskEventType, targetId: string, data: Record<string, unknown>, recipients?: string[]): void {
  const p = ctx.principal!;
  ctx.platform.events.publish({
    type, orgId: p.orgId, actorUserId: p.userId ?? null, targetType: type.slice(0, type.indexOf('.')), targetId,
    ...(recipients ? { recipients } : {}), data, at: new Date().toISOString(),
  });
}
