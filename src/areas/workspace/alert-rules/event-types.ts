import { PROJECT_EVENT_TYPES, TASK_EVENT_TYPES } from '../../projects/task.events.js';

/** Events the workspace area itself emits. */
export const WORKSPACE_EVENT_TYPES = ['task.overdue'] as const;

/**
 * The catalogue of event types alert rules can name (docs/events.md): every `<resource>.<event>` the
 * platform emits on its event bus. The projects area owns its names; this list only gathers them.
 */
export const EVENT_TYPES: readonly string[] = [...PROJECT_EVENT_TYPES, ...TASK_EVENT_TYPES, ...WORKSPACE_EVENT_TYPES].sort();

/**
 * The event type of a rule that names none (spec 4.6 requires only `name`): every type of the catalogue, filtered
 * by the rule's conditions. Only catalogue types: the bus also carries internal events no user asked to hear of.
 */
export const ANY_EVENT_TYPE = '*';
const CATALOGUE = new Set(EVENT_TYPES);

/**
 * The form event types are matched in: lower case, with `_`, `-` and `:` read as the `.` of `<resource>.<event>`.
 * Spec 6 leaves the catalogue unshown and names its example "a task-overdue kind", so a rule naming `task-overdue`,
 * `task_overdue` or `TASK.OVERDUE` hears `task.overdue` (and `task-status-changed` hears `task.status_changed`); the
 * rule keeps the name as sent. No two catalogue types share a form.
 */
export const matchableEventType = (t: string): string => t.toLowerCase().replace(/[_:-]/g, '.');

/** Whether a rule of `ruleType` wants an event of `eventType`. */
export const ruleWants = (ruleType: string, eventType: string): boolean =>
  matchableEventType(ruleType) === matchableEventType(eventType) || (ruleType === ANY_EVENT_TYPE && CATALOGUE.has(eventType));

/** One line per type for the OpenAPI description of `event_type`. */
export const EVENT_TYPE_DESCRIPTIONS: Record<string, string> = {
  'project.created': 'A project was created. data: project_id, name, slug',
  'project.updated': 'Fields of a project changed. data: project_id, name, slug, fields',
  'project.archived': 'A project was archived (is_active false). data: project_id, name, slug',
  'project.unarchived': 'An archived project was restored. data: project_id, name, slug',
  'project.deleted': 'A project was soft-deleted. data: project_id, name, slug',
  'task.created': 'A task was created. data: task_id, project_id, title, status_key, priority, assigned_to',
  'task.updated': 'Fields of a task changed. data: task_id, project_id, title, fields',
  'task.assigned': 'A task was assigned to a user (recipients: the assignee). data: task_id, project_id, title, assigned_to',
  'task.mentioned': 'Users were @mentioned in a task description (recipients: the mentioned users). data: task_id, project_id, title',
  'task.status_changed': 'A task moved to another status. data: task_id, project_id, title, from, to',
  'task.completed': 'A task reached a done status. data: task_id, project_id, title, status_key',
  'task.deleted': 'A task was deleted. data: task_id, project_id, title',
  'task.overdue': 'A task passed its due date while not done; emitted once per task and due date (recipients: the assignee). data: task_id, project_id, title, due_date, assigned_to',
};

export const EVENT_TYPE_DOC = 'Event type, `<resource>.<event>`: any name of letters, digits and `_.:-` is accepted; a rule fires for the types the platform emits, whatever the case and whichever of `_.:-` separates the words (`task-overdue` hears `task.overdue`). `*` (the default when neither event_type nor trigger_type is given): every type of the catalogue. Catalogue: ' +
  EVENT_TYPES.map((t) => `\`${t}\`${EVENT_TYPE_DESCRIPTIONS[t] ? ` (${EVENT_TYPE_DESCRIPTIONS[t]})` : ''}`).join('; ');
