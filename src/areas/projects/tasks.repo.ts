import type { Sql } from '../../core/db/database.js';
import { AUDIT_COLUMNS, AUDIT_RECORD_COLUMNS } from '../../core/audit.js';
import type { ActivityRow, ListTasksFilter, TaskListRow, TaskRow, TaskStatusRow } from './tasks.schemas.js';
import { lockNamed } from '../../core/db/locks.js';

/** Statuses a project sees: its own rows, plus the organization's rows whose key it does not override. */
const EFFECTIVE_STATUSES = `SELECT s.id, s.key, s.name, s.sort_order, s.is_done, s.project_id FROM task_statuses s
  WHERE s.org_id = $1 AND (s.project_id = $2 OR (s.project_id IS NULL AND NOT EXISTS (
    SELECT 1 FROM task_statuses o WHERE o.org_id = $1 AND o.project_id = $2 AND o.key = s.key)))`;

/**
 * The list statement for one combination of filters (each combination is its own prepared statement, so
 * every one gets a plan for its own index). Page and total come back together. Exported for the EXPLAIN test.
 */
export function listTasksSql(f: ListTasksFilter): { text: string; params: (p: { orgId: string; projectId: string; limit: number; offset: number } & ListTasksFilter) => unknown[] } {
  const where: Array<(a: string) => string> = [];
  const order: Array<keyof ListTasksFilter> = [];
  let n = 4;
  if (f.spec_id) { const i = ++n; where.push((a) => `AND ${a}.spec_id = $${i}`); order.push('spec_id'); }
  if (f.assignee_id) { const i = ++n; where.push((a) => `AND ${a}.assigned_to = $${i}`); order.push('assignee_id'); }
  if (f.status) {
    const i = ++n;
    where.push((a) => `AND ${a}.status_id IN (SELECT s.id FROM task_statuses s WHERE s.org_id = $1 AND s.key = $${i} AND (s.project_id IS NULL OR s.project_id = $2))`);
    order.push('status');
  }
  const conds = (a: string) => `${a}.org_id = $1 AND ${a}.project_id = $2 ${where.map((w) => w(a)).join(' ')}`;
  // Without filters the total is the project's kept count (migration 0053: a sum of at most 64 striped rows, exact in
  // the reading transaction). With filters it is an uncorrelated subquery (once per statement, from the same index,
  // without the rows' columns), not count(*) OVER () in the page's subquery, which fetches every matching row in full.
  const total = where.length
    ? `(SELECT count(*) FROM tasks c WHERE ${conds('c')})`
    : `(SELECT COALESCE(sum(c.n), 0) FROM task_counts c WHERE c.org_id = $1 AND c.project_id = $2)`;
  const text = `SELECT t.id, t.project_id, t.spec_id, t.title, s.key AS status_key, s.name AS status_name, t.priority, t.assigned_to,
      t.due_date, t.created_at, t.updated_at, ${total}::int AS total
    FROM (SELECT t.org_id, t.id, t.project_id, t.spec_id, t.title, t.status_id, t.priority, t.assigned_to, t.due_date, t.created_at, t.updated_at
          FROM tasks t WHERE ${conds('t')}
          ORDER BY t.id DESC LIMIT $3 OFFSET $4) t
    JOIN task_statuses s ON s.org_id = t.org_id AND s.id = t.status_id
    ORDER BY t.id DESC`;
  return { text, params: (p) => [p.orgId, p.projectId, p.limit, p.offset, ...order.map((k) => p[k])] };
}

type NewTaskProject = { is_active: boolean; status_id: string | null; status_key: string | null };
const PROJECT_FOR_NEW_TASK = `SELECT p.is_active, st.id AS status_id, st.key AS status_key
  FROM projects p LEFT JOIN LATERAL (SELECT e.id, e.key FROM (${EFFECTIVE_STATUSES}) e WHERE NOT e.is_done ORDER BY e.sort_order, e.key LIMIT 1) st ON true
  WHERE p.org_id = $1 AND p.id = $2`;

/** The first open status of project $2 (EFFECTIVE_STATUSES), id and key. */
const FIRST_OPEN_STATUS = `SELECT e.id, e.key FROM (${EFFECTIVE_STATUSES}) e WHERE NOT e.is_done ORDER BY e.sort_order, e.key LIMIT 1`;

type SimpleTask = { orgId: string; id: string; projectId: string; title: string; description: string | null; priority: string; dueDate: string | null; createdBy: string };

// The two statements of a simple task (tasksRepo.insertSimple, insertWithStatusBatch) are built once: the text is the
// prepared statement's key (core/db/database.ts), and a 1.5 KB text built per call was hashed per call.
const TASK_ACTIVITY_COLUMNS = 'org_id, id, task_id, action, field, old_value, new_value, actor_user_id, actor_api_key_id, actor_kind';
const INSERT_SIMPLE = `WITH proj AS (${PROJECT_FOR_NEW_TASK}), ins AS (
    INSERT INTO tasks (org_id, id, project_id, title, description, status_id, priority, due_date, created_by)
    SELECT $1, $3, $2, $4, $5, proj.status_id, $6, $7, $8 FROM proj WHERE proj.is_active AND proj.status_id IS NOT NULL
    RETURNING org_id, id
  ), act AS (
    INSERT INTO task_activity (${TASK_ACTIVITY_COLUMNS})
    SELECT ins.org_id, $9, ins.id, 'created', NULL, NULL, $10::jsonb || jsonb_build_object('status', proj.status_key), $11, $12, $13 FROM ins, proj
  ), aud AS (
    INSERT INTO audit_log (${AUDIT_COLUMNS})
    SELECT $14::uuid, $15::uuid, $16::uuid, $17::uuid, $18::text, $19::text, $20::text, $21::text, $22::text, $23::text, $24::jsonb FROM ins
  ) SELECT proj.is_active, proj.status_id, proj.status_key, EXISTS (SELECT 1 FROM ins) AS inserted FROM proj`;
// tasksRepo.insertWithStatusBatch: the tasks come as one JSON array, one parameter whatever the batch's size, so one
// prepared statement. They are inserted in project order: each insert updates its project's task counter row of the
// connection's stripe (migration 0053), so two batches that take projects in the same order cannot deadlock.
const INSERT_WITH_STATUS_BATCH = `WITH input AS (
    SELECT * FROM json_to_recordset($2::json) AS i(id uuid, project_id uuid, title text, description text, status_id uuid, priority text,
      due_date timestamptz, created_by uuid, activity_id uuid, new_value jsonb, actor_user_id uuid, actor_api_key_id uuid, actor_kind text, audit json)
  ), ins AS (
    INSERT INTO tasks (org_id, id, project_id, title, description, status_id, priority, due_date, created_by)
    SELECT $1, i.id, i.project_id, i.title, i.description, i.status_id, i.priority, i.due_date, i.created_by
      FROM input i CROSS JOIN LATERAL (SELECT 1 FROM projects p WHERE p.org_id = $1 AND p.id = i.project_id AND p.is_active) p
      ORDER BY i.project_id, i.id
    RETURNING id
  ), act AS (
    INSERT INTO task_activity (${TASK_ACTIVITY_COLUMNS})
    SELECT $1, i.activity_id, i.id, 'created', NULL, NULL, i.new_value, i.actor_user_id, i.actor_api_key_id, i.actor_kind
      FROM input i JOIN ins ON ins.id = i.id
  ), aud AS (
    INSERT INTO audit_log (${AUDIT_COLUMNS})
    SELECT a.* FROM input i JOIN ins ON ins.id = i.id CROSS JOIN LATERAL json_to_record(i.audit) AS a(${AUDIT_RECORD_COLUMNS})
  ) SELECT id FROM ins`;

/** One task of a batch for tasksRepo.insertWithStatusBatch. */
export type BatchedTask = SimpleTask & { statusId: string; activity: { id: string; newValue: Record<string, unknown> }; actor: Actor; audit: Record<string, unknown> };

const TASK_SELECT = `SELECT t.id, t.project_id, t.spec_id, t.title, s.key AS status_key, s.name AS status_name, t.priority, t.assigned_to,
    t.due_date, t.created_at, t.updated_at, t.description, t.status_id, t.parent_task_id, t.created_by,
    ARRAY(SELECT d.depends_on_task_id FROM task_dependencies d WHERE d.org_id = t.org_id AND d.task_id = t.id ORDER BY d.depends_on_task_id) AS depends_on
  FROM tasks t JOIN task_statuses s ON s.org_id = t.org_id AND s.id = t.status_id`;

export type ActivityInput = { id: string; action: 'created' | 'updated'; field: string | null; old_value: unknown; new_value: unknown };
export type Actor = { userId: string | null; apiKeyId: string | null; kind: string };

export const tasksRepo = {
  list: (sql: Sql, orgId: string, projectId: string, f: ListTasksFilter, limit: number, offset: number) => {
    const q = listTasksSql(f);
    return sql.query<TaskListRow & { total?: number }>(q.text, q.params({ orgId, projectId, limit, offset, ...f }));
  },
  count: async (sql: Sql, orgId: string, projectId: string, f: ListTasksFilter) => {
    const q = listTasksSql(f);
    const rows = await sql.query<{ total: number }>(q.text, q.params({ orgId, projectId, limit: 1, offset: 0, ...f }));
    return rows[0]?.total ?? 0;
  },

  /**
   * A task; `forUpdate` locks its row first, in a statement of its own. Locking inside the joined read would lose the
   * task when a concurrent update changed its status: after the wait PostgreSQL re-checks the new row version against
   * the status row it joined before the wait, the join no longer holds, and the task would read as missing (404).
   */
  byId: async (sql: Sql, orgId: string, id: string, forUpdate = false) => {
    if (forUpdate && !(await sql.one(`SELECT 1 FROM tasks WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, [orgId, id]))) return null;
    return sql.one<TaskRow>(`${TASK_SELECT} WHERE t.org_id = $1 AND t.id = $2`, [orgId, id]);
  },

  statuses: (sql: Sql, orgId: string, projectId: string) =>
    sql.query<TaskStatusRow>(`SELECT * FROM (${EFFECTIVE_STATUSES}) e ORDER BY e.sort_order, e.key`, [orgId, projectId]),

  statusByKey: (sql: Sql, orgId: string, projectId: string, key: string) =>
    sql.one<TaskStatusRow>(`SELECT * FROM (${EFFECTIVE_STATUSES}) e WHERE e.key = $3`, [orgId, projectId, key]),

  statusById: (sql: Sql, orgId: string, id: string) =>
    sql.one<TaskStatusRow>(`SELECT s.id, s.key, s.name, s.sort_order, s.is_done, s.project_id FROM task_statuses s WHERE s.org_id = $1 AND s.id = $2`, [orgId, id]),

  /** The project's state and the status a new task starts in (the first open status), in one round trip. */
  projectForNewTask: (sql: Sql, orgId: string, projectId: string) =>
    sql.one<NewTaskProject>(PROJECT_FOR_NEW_TASK, [orgId, projectId]),

  /**
   * A task without references (no spec, assignee, parent or dependencies) in one statement, so one round trip and
   * no transaction: finds the project and its first open status, and only when the project is active and has one,
   * inserts the task, its `created` activity row (`newValue` plus the status key) and the audit row. Returns the
   * project's state (undefined: no such project) and whether the task was written.
   */
  insertSimple: (sql: Sql, t: SimpleTask, activity: { id: string; newValue: Record<string, unknown> }, a: Actor, auditRow: unknown[]) =>
    sql.one<NewTaskProject & { inserted: boolean }>(INSERT_SIMPLE,
      [t.orgId, t.projectId, t.id, t.title, t.description, t.priority, t.dueDate, t.createdBy, activity.id, JSON.stringify(activity.newValue),
        a.userId, a.apiKeyId, a.kind, ...auditRow]),

  /**
   * Simple tasks whose starting status is known (first-open-status.ts), all of one organization, in one statement: for
   * each, the three rows insertSimple writes, only if its project exists and is active, without looking the status up.
   * Answers whether each was written, in order (false: no such project, or archived; insertSimple tells which). A status
   * deleted meanwhile fails the statement on the task's status key (23503).
   */
  insertWithStatusBatch: async (sql: Sql, orgId: string, tasks: BatchedTask[]) => {
    const input = tasks.map((t) => ({
      id: t.id, project_id: t.projectId, title: t.title, description: t.description, status_id: t.statusId, priority: t.priority,
      due_date: t.dueDate, created_by: t.createdBy, activity_id: t.activity.id, new_value: t.activity.newValue,
      actor_user_id: t.actor.userId, actor_api_key_id: t.actor.apiKeyId, actor_kind: t.actor.kind, audit: t.audit,
    }));
    const written = new Set((await sql.query<{ id: string }>(INSERT_WITH_STATUS_BATCH, [orgId, JSON.stringify(input)])).map((r) => r.id));
    return tasks.map((t) => written.has(t.id));
  },

  /** The status a project's new tasks start in: its first open status (sort order, then key); undefined if none. */
  firstOpenStatus: (sql: Sql, orgId: string, projectId: string) =>
    sql.one<{ id: string; key: string }>(FIRST_OPEN_STATUS, [orgId, projectId]),

  tasksProjects: (sql: Sql, orgId: string, ids: string[]) =>
    sql.query<{ id: string; project_id: string }>(`SELECT id, project_id FROM tasks WHERE org_id = $1 AND id = ANY($2::uuid[])`, [orgId, ids]),

  specProject: (sql: Sql, orgId: string, specId: string) =>
    sql.one<{ project_id: string }>(`SELECT project_id FROM specs WHERE org_id = $1 AND id = $2`, [orgId, specId]),

  isOrgMember: async (sql: Sql, orgId: string, userId: string) =>
    !!(await sql.one(`SELECT 1 FROM memberships WHERE org_id = $1 AND user_id = $2`, [orgId, userId])),

  /** Members of the organization among the given lower-case e-mails (for @mentions). */
  membersByEmail: (sql: Sql, orgId: string, emails: string[]) =>
    sql.query<{ id: string; email: string }>(`SELECT u.id, lower(u.email) AS email FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.org_id = $1 AND lower(u.email) = ANY($2::text[])`, [orgId, emails]),

  /** Whether `target` is reachable from any of `from` along depends_on links (a new link to `from` would close a cycle). */
  dependsReach: async (sql: Sql, orgId: string, from: string[], target: string) =>
    !!(await sql.one(`WITH RECURSIVE reach(id) AS (
        SELECT unnest($2::uuid[]) UNION SELECT d.depends_on_task_id FROM task_dependencies d JOIN reach r ON d.org_id = $1 AND d.task_id = r.id
      ) SELECT 1 FROM reach WHERE id = $3 LIMIT 1`, [orgId, from, target])),

  /** Whether `target` is `start` or one of its ancestors along parent_task_id. */
  parentReach: async (sql: Sql, orgId: string, start: string, target: string) =>
    !!(await sql.one(`WITH RECURSIVE up(id, parent) AS (
        SELECT id, parent_task_id FROM tasks WHERE org_id = $1 AND id = $2
        UNION SELECT t.id, t.parent_task_id FROM tasks t JOIN up ON t.org_id = $1 AND t.id = up.parent
      ) SELECT 1 FROM up WHERE id = $3 LIMIT 1`, [orgId, start, target])),

  /** Serializes dependency and parent changes per organization so two concurrent edits cannot close a cycle. */
  lockGraph: (sql: Sql, orgId: string) => lockNamed(sql, `task-graph:${orgId}`),

  /** Inserts the task, its dependencies and its first activity rows in one statement. */
  insert: (sql: Sql, t: { orgId: string; id: string; projectId: string; specId: string | null; parentTaskId: string | null; title: string; description: string | null;
    statusId: string; priority: string; assignedTo: string | null; dueDate: string | null; createdBy: string; dependsOn: string[] }, activity: ActivityInput[], a: Actor) =>
    sql.exec(`WITH ins AS (
        INSERT INTO tasks (org_id, id, project_id, spec_id, parent_task_id, title, description, status_id, priority, assigned_to, due_date, created_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING org_id, id
      ), deps AS (
        INSERT INTO task_dependencies (org_id, task_id, depends_on_task_id) SELECT ins.org_id, ins.id, d FROM ins, unnest($13::uuid[]) AS d
      ) INSERT INTO task_activity (${TASK_ACTIVITY_COLUMNS})
        SELECT ins.org_id, x.id, ins.id, x.action, x.field, x.old_value, x.new_value, $15, $16, $17
        FROM ins, jsonb_to_recordset($14::jsonb) AS x(id uuid, action text, field text, old_value jsonb, new_value jsonb)`,
      [t.orgId, t.id, t.projectId, t.specId, t.parentTaskId, t.title, t.description, t.statusId, t.priority, t.assignedTo, t.dueDate, t.createdBy,
        t.dependsOn, JSON.stringify(activity), a.userId, a.apiKeyId, a.kind]),

  update: (sql: Sql, orgId: string, id: string, t: { specId: string | null; parentTaskId: string | null; title: string; description: string | null;
    statusId: string; priority: string; assignedTo: string | null; dueDate: string | null }) =>
    sql.exec(`UPDATE tasks SET spec_id = $3, parent_task_id = $4, title = $5, description = $6, status_id = $7, priority = $8,
        assigned_to = $9, due_date = $10, updated_at = now() WHERE org_id = $1 AND id = $2`,
      [orgId, id, t.specId, t.parentTaskId, t.title, t.description, t.statusId, t.priority, t.assignedTo, t.dueDate]),

  replaceDependencies: async (sql: Sql, orgId: string, id: string, dependsOn: string[]) => {
    await sql.exec(`DELETE FROM task_dependencies WHERE org_id = $1 AND task_id = $2`, [orgId, id]);
    if (dependsOn.length) {
      await sql.exec(`INSERT INTO task_dependencies (org_id, task_id, depends_on_task_id) SELECT $1, $2, unnest($3::uuid[])`, [orgId, id, dependsOn]);
    }
  },

  insertActivity: (sql: Sql, orgId: string, taskId: string, activity: ActivityInput[], a: Actor) =>
    sql.exec(`INSERT INTO task_activity (${TASK_ACTIVITY_COLUMNS})
      SELECT $1, x.id, $2, x.action, x.field, x.old_value, x.new_value, $4, $5, $6
      FROM jsonb_to_recordset($3::jsonb) AS x(id uuid, action text, field text, old_value jsonb, new_value jsonb)`,
      [orgId, taskId, JSON.stringify(activity), a.userId, a.apiKeyId, a.kind]),

  /**
   * Clears the parent of the task's subtasks (what the foreign key's ON DELETE SET NULL would do at the delete, here
   * first so the change is known exactly: a subtask moved elsewhere meanwhile is not matched) and moves their
   * updated_at: the subtasks changed.
   */
  detachChildren: (sql: Sql, orgId: string, id: string) =>
    sql.query<{ id: string; project_id: string; title: string }>(`UPDATE tasks SET parent_task_id = NULL, updated_at = now()
      WHERE org_id = $1 AND parent_task_id = $2 RETURNING id, project_id, title`, [orgId, id]),

  /**
   * Removes the links of the tasks that depend on the task (the cascade's work, done first so it is known exactly)
   * and moves their updated_at; answers each with its depends_on (sorted) as it was. Their rows are locked first, in
   * id order: a link edit holds its task's row while it changes its links, so the lists read are settled.
   */
  detachDependents: async (sql: Sql, orgId: string, id: string) => {
    await sql.query(`SELECT 1 FROM tasks t WHERE t.org_id = $1
      AND t.id IN (SELECT d.task_id FROM task_dependencies d WHERE d.org_id = $1 AND d.depends_on_task_id = $2) ORDER BY t.id FOR NO KEY UPDATE`, [orgId, id]);
    // The list in RETURNING is read in the statement's snapshot, before its DELETE: the list as it was.
    return sql.query<{ id: string; project_id: string; title: string; depends_on: string[] }>(`WITH gone AS (
        DELETE FROM task_dependencies d WHERE d.org_id = $1 AND d.depends_on_task_id = $2 RETURNING d.task_id
      ), touched AS (
        UPDATE tasks t SET updated_at = now() FROM gone WHERE t.org_id = $1 AND t.id = gone.task_id RETURNING t.id, t.project_id, t.title
      ) SELECT touched.*, ARRAY(SELECT x.depends_on_task_id FROM task_dependencies x WHERE x.org_id = $1 AND x.task_id = touched.id
          ORDER BY x.depends_on_task_id) AS depends_on FROM touched`, [orgId, id]);
  },

  delete: (sql: Sql, orgId: string, id: string) =>
    sql.one<{ project_id: string; title: string }>(`DELETE FROM tasks WHERE org_id = $1 AND id = $2 RETURNING project_id, title`, [orgId, id]),

  activity: (sql: Sql, orgId: string, taskId: string, limit: number, offset: number) =>
    sql.query<ActivityRow & { total?: number }>(`SELECT a.id, a.task_id, a.action, a.field, a.old_value, a.new_value, a.actor_user_id, a.actor_api_key_id,
        a.actor_kind, a.created_at, count(*) OVER () AS total
      FROM task_activity a WHERE a.org_id = $1 AND a.task_id = $2 ORDER BY a.id DESC LIMIT $3 OFFSET $4`, [orgId, taskId, limit, offset]),
  countActivity: async (sql: Sql, orgId: string, taskId: string) =>
    (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM task_activity WHERE org_id = $1 AND task_id = $2`, [orgId, taskId]))!.n,
  exists: async (sql: Sql, orgId: string, id: string) =>
    !!(await sql.one(`SELECT 1 FROM tasks WHERE org_id = $1 AND id = $2`, [orgId, id])),
};
