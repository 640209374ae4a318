import { Type, type Static } from 'typebox';
import { OffsetQuery } from '../../core/pagination.js';

const strict = { additionalProperties: false } as const;
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const NullableUuid = Type.Union([Uuid, Type.Null()]);

export const TASK_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];
const Priority = Type.Union(TASK_PRIORITIES.map((p) => Type.Literal(p)));

export const TaskIdParams = Type.Object({ taskId: Uuid });

export const ListTasksQuery = Type.Object({
  spec_id: Type.Optional(Uuid),
  status: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A status key, e.g. todo' })),
  assignee_id: Type.Optional(Uuid),
  ...OffsetQuery(50, 100),
});
export type ListTasksFilter = { spec_id?: string; status?: string; assignee_id?: string };

/** Spec 2.3 list item. */
export const TaskListItem = Type.Object({
  id: Uuid, project_id: Uuid, spec_id: NullableUuid, title: Type.String(),
  status_key: Type.String(), status_name: Type.String(), priority: Priority,
  assigned_to: NullableUuid, due_date: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp, updated_at: Timestamp,
});
export type TaskListRow = Static<typeof TaskListItem>;

/** Spec 2.3 single task: the list item plus description, status_id, parent_task_id (and dependencies). */
export const TaskOut = Type.Object({
  ...TaskListItem.properties,
  description: Type.Union([Type.String(), Type.Null()]),
  status_id: Uuid, parent_task_id: NullableUuid,
  depends_on: Type.Array(Uuid), created_by: NullableUuid,
});
export type TaskRow = Static<typeof TaskOut>;

const Title = Type.String({ minLength: 1, maxLength: 500 });
const Description = Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()]);
const DependsOn = Type.Array(Uuid, { maxItems: 100, uniqueItems: true });
/** A date-time, or a date alone (`2027-03-01`), which means midnight UTC of that day; null clears. */
const DueDate = Type.Union([
  Type.String({ format: 'date-time' }),
  Type.String({ format: 'date', pattern: '^(?!0000)[0-9]{4}-', description: 'a date alone: midnight UTC of that day' }),
  Type.Null(),
]);

export const CreateTaskBody = Type.Object({
  title: Title,
  description: Type.Optional(Description),
  spec_id: Type.Optional(NullableUuid),
  priority: Type.Optional(Priority),
  assignee_id: Type.Optional(NullableUuid),
  depends_on: Type.Optional(DependsOn),
  parent_task_id: Type.Optional(NullableUuid),
  due_date: Type.Optional(DueDate),
}, strict);
export type CreateTaskInput = Static<typeof CreateTaskBody>;

export const UpdateTaskBody = Type.Object({
  title: Type.Optional(Title),
  description: Type.Optional(Description),
  status: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A status key of GET /v1/projects/{projectId}/task-statuses' })),
  spec_id: Type.Optional(NullableUuid),
  priority: Type.Optional(Priority),
  assignee_id: Type.Optional(NullableUuid),
  depends_on: Type.Optional(DependsOn),
  parent_task_id: Type.Optional(NullableUuid),
  due_date: Type.Optional(DueDate),
}, { ...strict, minProperties: 1 });
export type UpdateTaskInput = Static<typeof UpdateTaskBody>;

export const TaskStatusOut = Type.Object({
  id: Uuid, key: Type.String(), name: Type.String(), sort_order: Type.Integer(), is_done: Type.Boolean(),
  project_id: NullableUuid,
});
export type TaskStatusRow = Static<typeof TaskStatusOut>;
/** Paging of GET /v1/projects/{projectId}/task-statuses: the default page holds every status a project has. */
export const TaskStatusesQuery = Type.Object(OffsetQuery(100, 100));

export const ActivityOut = Type.Object({
  id: Uuid, task_id: Uuid,
  action: Type.Union([Type.Literal('created'), Type.Literal('updated')]),
  field: Type.Union([Type.String(), Type.Null()]),
  old_value: Type.Unknown(), new_value: Type.Unknown(),
  actor_user_id: NullableUuid, actor_api_key_id: NullableUuid, actor_kind: Type.String(),
  created_at: Timestamp,
});
export type ActivityRow = Static<typeof ActivityOut>;
