import { AppError, notFound } from '../../core/errors.js';
import { actor, requirePermission, type ServiceContext } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';
import { audit, auditRecord, auditValues } from '../../core/audit.js';
import { isForeignKeyViolation, type Sql } from '../../core/db/database.js';
import { tasksRepo, type ActivityInput } from './tasks.repo.js';
import { clampPage, requireProject } from './project-access.js';
import { splitTotal } from './project-parts.repo.js';
import { actorOf, checkTaskRefs, mentionedEmails, newMentions, TRACKED_FIELDS, trackedValues } from './task-rules.js';
import { emit } from './task.events.js';
import { firstOpenStatuses } from './first-open-status.js';
import { taskInserts } from './task-inserts.js';
import type { Page, Paged } from './projects.schemas.js';
import type { ActivityRow, CreateTaskInput, ListTasksFilter, TaskListRow, TaskRow, TaskStatusRow, UpdateTaskInput } from './tasks.schemas.js';
import { nonBlankText } from '../../core/text.js';

const iso = (d: string | null | undefined) => (d == null ? null : new Date(d).toISOString());

/** Tasks of a project, newest first, filtered by spec, status key and assignee; one round trip for page and total. */
export async function listTasks(ctx: ServiceContext, input: { projectId: string } & ListTasksFilter & Partial<Page>): Promise<Paged<TaskListRow>> {
  const p = requirePermission(ctx, 'task.view');
  const page = clampPage(input);
  const f: ListTasksFilter = { spec_id: input.spec_id, status: input.status, assignee_id: input.assignee_id };
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const { items, total } = splitTotal<TaskListRow>(await tasksRepo.list(sql, p.orgId, input.projectId, f, page.limit, page.offset));
    if (total !== null) return { items, total, ...page };
    await requireProject(sql, p.orgId, input.projectId);
    return { items, total: page.offset === 0 ? 0 : await tasksRepo.count(sql, p.orgId, input.projectId, f), ...page };
  });
}

/** One task with description, status id, parent and dependencies. */
export async function getTask(ctx: ServiceContext, input: { taskId: string }): Promise<TaskRow> {
  const p = requirePermission(ctx, 'task.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => tasksRepo.byId(sql, p.orgId, input.taskId));
  if (!row) throw notFound('Task');
  return row;
}

/** The status definitions a project's tasks use, ordered (organization workflow with project overrides). */
export async function listTaskStatuses(ctx: ServiceContext, input: { projectId: string }): Promise<TaskStatusRow[]> {
  const p = requirePermission(ctx, 'task.view');
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    await requireProject(sql, p.orgId, input.projectId);
    return tasksRepo.statuses(sql, p.orgId, input.projectId);
  });
}

/**
 * One page of listTaskStatuses (limit defaults to 100). A project has a handful of statuses and the total needs
 * all of them anyway, so the page is cut from the ordered list rather than asked of the database.
 */
export async function listTaskStatusPage(ctx: ServiceContext, input: { projectId: string } & Partial<Page>): Promise<Paged<TaskStatusRow>> {
  const page = clampPage({ limit: input.limit ?? 100, offset: input.offset });
  const all = await listTaskStatuses(ctx, input);
  return { items: all.slice(page.offset, page.offset + page.limit), total: all.length, ...page };
}

/** Creates a task in the project's first open status; returns its id. 404 for an unknown project. */
export async function createTask(ctx: ServiceContext, input: { projectId: string } & CreateTaskInput): Promise<string> {
  const p = requirePermission(ctx, 'task.create');
  const title = nonBlankText(input.title, 'title');
  const id = uuidv7();
  const dependsOn = input.depends_on ?? [];
  if (!input.spec_id && !input.assignee_id && !input.parent_task_id && !dependsOn.length && !mentionedEmails(input.description).length) {
    const created = await createSimpleTask(ctx, input, id, title);
    if (created) return created;
  }
  const { statusKey, mentioned } = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const proj = await tasksRepo.projectForNewTask(sql, p.orgId, input.projectId);
    if (!proj) throw notFound('Project');
    if (!proj.is_active) await requireProject(sql, p.orgId, input.projectId, { writable: true });
    if (!proj.status_id) throw new AppError('CONFLICT', 'The organization has no open task status to start a task in');
    await checkTaskRefs(sql, p.orgId, input.projectId, id, input, true);
    const values = {
      title, description: input.description ?? null, status: proj.status_key, priority: input.priority ?? 'medium',
      assigned_to: input.assignee_id ?? null, due_date: iso(input.due_date), spec_id: input.spec_id ?? null,
      parent_task_id: input.parent_task_id ?? null, depends_on: [...dependsOn].sort(),
    };
    await tasksRepo.insert(sql, {
      orgId: p.orgId, id, projectId: input.projectId, specId: values.spec_id, parentTaskId: values.parent_task_id, title,
      description: values.description, statusId: proj.status_id, priority: values.priority, assignedTo: values.assigned_to,
      dueDate: values.due_date, createdBy: p.userId, dependsOn,
    }, [{ id: uuidv7(), action: 'created', field: null, old_value: null, new_value: values }], actorOf(ctx));
    await audit(sql, ctx, { action: 'task.created', targetType: 'task', targetId: id, details: { project_id: input.projectId, title } });
    return { statusKey: proj.status_key!, mentioned: await newMentions(sql, p.orgId, null, values.description) };
  });
  const data = { task_id: id, project_id: input.projectId, title };
  emit(ctx, 'task.created', id, { ...data, status_key: statusKey, priority: input.priority ?? 'medium', assigned_to: input.assignee_id ?? null, due_date: iso(input.due_date) });
  if (input.assignee_id) emit(ctx, 'task.assigned', id, { ...data, assigned_to: input.assignee_id }, [input.assignee_id]);
  if (mentioned.length) emit(ctx, 'task.mentioned', id, data, mentioned);
  return id;
}

/**
 * createTask for a task without references or mentions (the usual case): nothing to check but the project, so the
 * checks and all three writes are one statement (one round trip, no transaction). When this process knows the
 * project's starting status (first-open-status.ts) the statement only checks that the project is active, and tasks of
 * the organization created at the same moment share it (task-inserts.ts: one statement and one commit for several);
 * otherwise it also looks the status up, and what it finds is kept for the next task. Same results, errors and
 * events; null sends the caller to the general path.
 */
async function createSimpleTask(ctx: ServiceContext, input: { projectId: string } & CreateTaskInput, id: string, title: string): Promise<string | null> {
  const p = actor(ctx);
  const priority = input.priority ?? 'medium';
  const task = { orgId: p.orgId, id, projectId: input.projectId, title, description: input.description ?? null, priority, dueDate: iso(input.due_date), createdBy: p.userId };
  const values = {
    title, description: task.description, priority, assigned_to: null, due_date: task.dueDate, spec_id: null, parent_task_id: null, depends_on: [],
  };
  const activityId = uuidv7();
  const auditRow = auditValues(ctx, { action: 'task.created', targetType: 'task', targetId: id, details: { project_id: input.projectId, title } });
  const statuses = firstOpenStatuses(ctx.platform.db);
  const created = (statusKey: string) => {
    emit(ctx, 'task.created', id, { task_id: id, project_id: input.projectId, title, status_key: statusKey, priority, assigned_to: null, due_date: task.dueDate });
    return id;
  };
  const known = statuses.peek(p.orgId, input.projectId);
  if (known) {
    try {
      const written = await taskInserts(ctx.platform.db).submit(p.orgId, {
        ...task, statusId: known.id, activity: { id: activityId, newValue: { ...values, status: known.key } }, actor: actorOf(ctx), audit: auditRecord(auditRow),
      });
      if (written) return created(known.key);
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      statuses.forget(p.orgId); // the status went away before its announcement arrived
    }
  }
  // Status not known yet, or the task not written (no such project, archived, a status gone): the statement that looks
  // the project and its status up writes the task or tells why it cannot be, and what it finds is kept for the next.
  const statusKey = await ctx.platform.db.tenant(p.orgId, async (sql) => {
    const withLookup = async (): Promise<NonNullable<Awaited<ReturnType<typeof tasksRepo.insertSimple>>>> => {
      const r = await tasksRepo.insertSimple(sql, task, { id: activityId, newValue: values }, actorOf(ctx), auditRow);
      if (!r) throw notFound('Project');
      if (!r.is_active) await requireProject(sql, p.orgId, input.projectId, { writable: true });
      return r;
    };
    let looked: Awaited<ReturnType<typeof withLookup>> | undefined;
    await statuses.get(p.orgId, input.projectId, async () => {
      looked = await withLookup();
      return looked.status_id ? { id: looked.status_id, key: looked.status_key! } : null;
    });
    looked ??= await withLookup(); // known meanwhile (another request's lookup), or known and not written above
    if (looked.inserted) return looked.status_key!;
    if (!looked.status_id) throw new AppError('CONFLICT', 'The organization has no open task status to start a task in');
    return null; // unarchived between the statement and requireProject: the general path decides
  });
  return statusKey === null ? null : created(statusKey);
}

async function lockedTask(sql: Sql, orgId: string, taskId: string): Promise<TaskRow> {
  const t = await tasksRepo.byId(sql, orgId, taskId, true);
  if (!t) throw notFound('Task');
  await requireProject(sql, orgId, t.project_id, { writable: true });
  return t;
}

/**
 * Changes the given fields (`null` clears the nullable ones; `depends_on` replaces the set). An undefined status
 * key is VALIDATION_ERROR. Every changed field gets an activity row with the actor and time.
 */
export async function updateTask(ctx: ServiceContext, input: { taskId: string } & UpdateTaskInput): Promise<TaskRow> {
  const p = requirePermission(ctx, 'task.update');
  const { taskId, ...fields } = input;
  if (Object.keys(fields).length === 0) throw new AppError('VALIDATION_ERROR', 'Send at least one field to change');
  if (fields.title !== undefined) nonBlankText(fields.title, 'title');
  const result = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const before = await lockedTask(sql, p.orgId, taskId);
    let status: TaskStatusRow | undefined;
    if (fields.status !== undefined && fields.status !== before.status_key) {
      status = await tasksRepo.statusByKey(sql, p.orgId, before.project_id, fields.status);
      if (!status) {
        const keys = (await tasksRepo.statuses(sql, p.orgId, before.project_id)).map((s) => s.key);
        throw new AppError('VALIDATION_ERROR', `Unknown task status "${fields.status}"; defined: ${keys.join(', ')}`, { field: 'status', allowed: keys });
      }
    }
    await checkTaskRefs(sql, p.orgId, before.project_id, taskId, {
      spec_id: fields.spec_id, assignee_id: fields.assignee_id, parent_task_id: fields.parent_task_id, depends_on: fields.depends_on,
    }, false);
    const next = {
      title: fields.title?.trim() ?? before.title,
      description: fields.description !== undefined ? fields.description : before.description,
      status_key: status?.key ?? before.status_key,
      priority: fields.priority ?? before.priority,
      assigned_to: fields.assignee_id !== undefined ? fields.assignee_id : before.assigned_to,
      due_date: fields.due_date !== undefined ? iso(fields.due_date) : before.due_date,
      spec_id: fields.spec_id !== undefined ? fields.spec_id : before.spec_id,
      parent_task_id: fields.parent_task_id !== undefined ? fields.parent_task_id : before.parent_task_id,
      depends_on: fields.depends_on ?? before.depends_on,
    };
    const from = trackedValues(before);
    const to = trackedValues(next);
    const changed = TRACKED_FIELDS.filter((k) => JSON.stringify(from[k]) !== JSON.stringify(to[k]));
    if (changed.length) {
      await tasksRepo.update(sql, p.orgId, taskId, {
        specId: next.spec_id, parentTaskId: next.parent_task_id, title: next.title, description: next.description,
        statusId: status?.id ?? before.status_id, priority: next.priority, assignedTo: next.assigned_to, dueDate: next.due_date,
      });
      if (changed.includes('depends_on')) await tasksRepo.replaceDependencies(sql, p.orgId, taskId, next.depends_on);
      const activity: ActivityInput[] = changed.map((k) => ({ id: uuidv7(), action: 'updated', field: k, old_value: from[k], new_value: to[k] }));
      await tasksRepo.insertActivity(sql, p.orgId, taskId, activity, actorOf(ctx));
      await audit(sql, ctx, { action: 'task.updated', targetType: 'task', targetId: taskId, details: { project_id: before.project_id, fields: changed } });
    }
    const mentioned = changed.includes('description') ? await newMentions(sql, p.orgId, before.description, next.description) : [];
    // Completed already: a done status other than `cancelled` (a cancelled task finished after all completes now).
    const previous = status ? await tasksRepo.statusById(sql, p.orgId, before.status_id) : undefined;
    const wasCompleted = !!previous?.is_done && previous.key !== 'cancelled';
    return { before, after: (await tasksRepo.byId(sql, p.orgId, taskId))!, changed, status, mentioned, wasCompleted };
  });
  const { before, after, changed, status, mentioned, wasCompleted } = result;
  if (!changed.length) return after;
  const data = { task_id: taskId, project_id: after.project_id, title: after.title };
  emit(ctx, 'task.updated', taskId, { ...data, fields: changed });
  if (changed.includes('assigned_to') && after.assigned_to) emit(ctx, 'task.assigned', taskId, { ...data, assigned_to: after.assigned_to, previous: before.assigned_to }, [after.assigned_to]);
  if (changed.includes('status')) {
    // The task's priority and assignee travel along, so alert rules can ask for "a high-priority task completed".
    const state = { priority: after.priority, assigned_to: after.assigned_to };
    emit(ctx, 'task.status_changed', taskId, { ...data, from: before.status_key, to: after.status_key, ...state });
    if (status?.is_done && status.key !== 'cancelled' && !wasCompleted) emit(ctx, 'task.completed', taskId, { ...data, status_key: status.key, ...state });
  }
  if (mentioned.length) emit(ctx, 'task.mentioned', taskId, data, mentioned);
  return after;
}

/** Deletes the task for good (with its activity and dependency links; subtasks lose their parent). */
export async function deleteTask(ctx: ServiceContext, input: { taskId: string }): Promise<{ id: string; deleted: true }> {
  const p = requirePermission(ctx, 'task.delete');
  const { row, changed } = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await lockedTask(sql, p.orgId, input.taskId);
    // Subtasks lose their parent and dependents their link with the task: changes of those tasks, in their activity
    // feeds, updated_at and events like any other. Made here, before the delete, so exactly the rows changed are
    // known (a subtask moved or deleted meanwhile is not among them) while this transaction holds no lock on the
    // task that a concurrent link edit's check needs (that only comes with the DELETE, last).
    const children = await tasksRepo.detachChildren(sql, p.orgId, input.taskId);
    const dependents = await tasksRepo.detachDependents(sql, p.orgId, input.taskId);
    const changed = new Map<string, { project_id: string; title: string; fields: string[] }>();
    for (const c of children) {
      await tasksRepo.insertActivity(sql, p.orgId, c.id, [{ id: uuidv7(), action: 'updated', field: 'parent_task_id', old_value: input.taskId, new_value: null }], actorOf(ctx));
      changed.set(c.id, { project_id: c.project_id, title: c.title, fields: ['parent_task_id'] });
    }
    for (const d of dependents) {
      await tasksRepo.insertActivity(sql, p.orgId, d.id, [{ id: uuidv7(), action: 'updated', field: 'depends_on', old_value: d.depends_on, new_value: d.depends_on.filter((x) => x !== input.taskId) }], actorOf(ctx));
      const entry = changed.get(d.id) ?? { project_id: d.project_id, title: d.title, fields: [] };
      entry.fields.push('depends_on');
      changed.set(d.id, entry);
    }
    const row = (await tasksRepo.delete(sql, p.orgId, input.taskId))!;
    await audit(sql, ctx, { action: 'task.deleted', targetType: 'task', targetId: input.taskId, details: { project_id: row.project_id, title: row.title } });
    return { row, changed };
  });
  emit(ctx, 'task.deleted', input.taskId, { task_id: input.taskId, project_id: row.project_id, title: row.title });
  for (const [id, c] of changed) emit(ctx, 'task.updated', id, { task_id: id, project_id: c.project_id, title: c.title, fields: c.fields });
  return { id: input.taskId, deleted: true };
}

/** The task's change history, newest first: one entry per changed field, with actor and time. */
export async function listTaskActivity(ctx: ServiceContext, input: { taskId: string } & Partial<Page>): Promise<Paged<ActivityRow>> {
  const p = requirePermission(ctx, 'task.view');
  const page = clampPage(input);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const { items, total } = splitTotal<ActivityRow>(await tasksRepo.activity(sql, p.orgId, input.taskId, page.limit, page.offset));
    if (total !== null) return { items, total, ...page };
    if (!(await tasksRepo.exists(sql, p.orgId, input.taskId))) throw notFound('Task');
    return { items, total: await tasksRepo.countActivity(sql, p.orgId, input.taskId), ...page };
  });
}
