import { Type } from 'typebox';
import { defineTools, listResult } from './define.js';
import * as projects from '../../../areas/projects/projects.service.js';
import * as parts from '../../../areas/projects/project-parts.service.js';
import * as specs from '../../../areas/projects/specs.service.js';
import * as tasks from '../../../areas/projects/tasks.service.js';

type Paged<T> = { items: T[]; total: number; limit: number; offset: number };
const paged = <T>(r: Paged<T>) => listResult(r.items, r);

// Inputs are derived from each REST route's TypeBox schemas (path params + query + body), and the services
// take that same merged object, so every tool is one call. Lives here until the projects area owns a
// src/areas/projects/projects.tools.ts.
export const projectsTools = defineTools([
  {
    name: 'projects.list', title: 'List projects', access: 'read', route: 'GET /v1/projects',
    description: 'List projects of the organization, newest first; status filter active (default), archived, deleted or all; limit/offset pagination.',
    keywords: ['browse', 'all'],
    run: async (ctx, a) => paged(await projects.listProjects(ctx, a)),
  },
  {
    name: 'projects.get', title: 'Get a project', access: 'read', route: 'GET /v1/projects/:projectId',
    description: 'Get one project by id: name, slug, description, visibility, settings, active state.',
    run: (ctx, a) => projects.getProject(ctx, a as { projectId: string }),
  },
  {
    name: 'projects.create', title: 'Create a project', access: 'write', route: 'POST /v1/projects',
    description: 'Create a project with a name (slug generated from the name when omitted), optional description, visibility and settings.',
    keywords: ['new', 'start'],
    run: (ctx, a) => projects.createProject(ctx, a as Parameters<typeof projects.createProject>[1]),
  },
  {
    name: 'projects.update', title: 'Update a project', access: 'write', route: 'PUT /v1/projects/:projectId',
    description: 'Change a project: name, slug, description (null clears), visibility, settings; is_active false archives it, true unarchives.',
    keywords: ['rename', 'archive', 'unarchive'],
    run: (ctx, a) => projects.updateProject(ctx, a as Parameters<typeof projects.updateProject>[1]),
  },
  {
    name: 'projects.delete', title: 'Delete a project', access: 'write', route: 'DELETE /v1/projects/:projectId',
    description: 'Soft-delete a project: its data is kept but it is hidden from listings.',
    run: (ctx, a) => projects.deleteProject(ctx, a as { projectId: string }),
  },
  {
    name: 'projects.members.list', title: 'List project members', access: 'read', route: 'GET /v1/projects/:projectId/members',
    description: 'List the members of a project with their project role.',
    keywords: ['people', 'users', 'team'],
    run: async (ctx, a) => paged(await parts.listProjectMembers(ctx, a as Parameters<typeof parts.listProjectMembers>[1])),
  },
  {
    name: 'projects.members.add', title: 'Add a project member', access: 'write', route: 'POST /v1/projects/:projectId/members',
    description: 'Add a member of the organization to a project with a role.',
    keywords: ['invite', 'people', 'user'],
    run: (ctx, a) => parts.addProjectMember(ctx, a as Parameters<typeof parts.addProjectMember>[1]),
  },
  {
    name: 'projects.categories.list', title: 'List categories', access: 'read', route: 'GET /v1/projects/:projectId/categories',
    description: 'List the categories of a project (parent_id nests them).',
    run: async (ctx, a) => paged(await parts.listCategories(ctx, a as Parameters<typeof parts.listCategories>[1])),
  },
  {
    name: 'projects.categories.create', title: 'Create a category', access: 'write', route: 'POST /v1/projects/:projectId/categories',
    description: 'Create a category in a project: name, optional description, parent_id and color.',
    run: (ctx, a) => parts.createCategory(ctx, a as Parameters<typeof parts.createCategory>[1]),
  },
  {
    name: 'projects.phases.list', title: 'List phases', access: 'read', route: 'GET /v1/projects/:projectId/phases',
    description: 'List the phases of a project ordered by sort_order.',
    keywords: ['milestones', 'stages'],
    run: async (ctx, a) => paged(await parts.listPhases(ctx, a as Parameters<typeof parts.listPhases>[1])),
  },
  {
    name: 'projects.phases.create', title: 'Create a phase', access: 'write', route: 'POST /v1/projects/:projectId/phases',
    description: 'Create a phase in a project: name, optional description and sort_order.',
    keywords: ['milestone', 'stage'],
    run: (ctx, a) => parts.createPhase(ctx, a as Parameters<typeof parts.createPhase>[1]),
  },
  {
    name: 'specs.list', title: 'List specs', access: 'read', route: 'GET /v1/projects/:projectId/specs',
    description: 'List the specs (specifications, requirements documents) of a project, newest first.',
    keywords: ['specification', 'requirements'],
    run: async (ctx, a) => paged(await specs.listSpecs(ctx, a as Parameters<typeof specs.listSpecs>[1])),
  },
  {
    name: 'specs.get', title: 'Get a spec', access: 'read', route: 'GET /v1/projects/:projectId/specs',
    description: 'Get one spec (specification) by its id, with its full content. Also readable as the resource platform://specs/<id>.',
    keywords: ['specification', 'requirements', 'read'],
    input: Type.Object({ specId: Type.String({ format: 'uuid', description: 'The spec_id' }) }, { additionalProperties: false }),
    run: (ctx, a) => specs.getSpec(ctx, a as { specId: string }),
  },
  {
    name: 'specs.create', title: 'Create a spec', access: 'write', route: 'POST /v1/projects/:projectId/specs',
    description: 'Create a spec (specification) in a project: title and markdown content.',
    keywords: ['specification', 'requirements', 'write'],
    run: (ctx, a) => specs.createSpec(ctx, a as Parameters<typeof specs.createSpec>[1]),
  },
  {
    name: 'tasks.list', title: 'List tasks', access: 'read', route: 'GET /v1/projects/:projectId/tasks',
    description: 'List the tasks of a project, newest first; filter by spec_id, status (key) and assignee_id; limit/offset pagination.',
    keywords: ['todo', 'issues', 'tickets', 'backlog', 'work'],
    run: async (ctx, a) => paged(await tasks.listTasks(ctx, a as Parameters<typeof tasks.listTasks>[1])),
  },
  {
    name: 'tasks.get', title: 'Get a task', access: 'read', route: 'GET /v1/tasks/:taskId',
    description: 'Get one task by id: title, description, status, priority, assignee, due date, dependencies.',
    keywords: ['todo', 'issue', 'ticket'],
    run: (ctx, a) => tasks.getTask(ctx, a as { taskId: string }),
  },
  {
    name: 'tasks.create', title: 'Create a task', access: 'write', route: 'POST /v1/projects/:projectId/tasks',
    description: 'Create a task in a project: title (required), description, spec_id, priority (critical, high, medium, low), assignee_id, depends_on, parent_task_id, due_date. Returns the new task.',
    keywords: ['todo', 'issue', 'ticket', 'add'],
    run: async (ctx, a) => {
      // REST answers the new id; an agent wants the task it made, read back through the same service.
      const id = await tasks.createTask(ctx, a as Parameters<typeof tasks.createTask>[1]);
      return tasks.getTask(ctx, { taskId: id });
    },
  },
  {
    name: 'tasks.update', title: 'Update a task', access: 'write', route: 'PUT /v1/tasks/:taskId',
    description: 'Change a task: status (a status key, see tasks.statuses.list), title, description, priority, assignee_id, depends_on (replaces), spec_id, parent_task_id, due_date; null clears.',
    keywords: ['complete', 'done', 'close', 'assign', 'move', 'status', 'edit'],
    run: (ctx, a) => tasks.updateTask(ctx, a as Parameters<typeof tasks.updateTask>[1]),
  },
  {
    name: 'tasks.delete', title: 'Delete a task', access: 'write', route: 'DELETE /v1/tasks/:taskId',
    description: 'Delete a task.',
    run: (ctx, a) => tasks.deleteTask(ctx, a as { taskId: string }),
  },
  {
    name: 'tasks.statuses.list', title: 'List task statuses', access: 'read', route: 'GET /v1/projects/:projectId/task-statuses',
    description: 'The task status definitions (keys such as todo, in_progress, done) available in a project, ordered.',
    keywords: ['workflow', 'states', 'columns'],
    run: async (ctx, a) => paged(await tasks.listTaskStatusPage(ctx, a as Parameters<typeof tasks.listTaskStatusPage>[1])),
  },
  {
    name: 'tasks.activity.list', title: 'Task activity', access: 'read', route: 'GET /v1/tasks/:taskId/activity',
    description: 'The change history of a task, newest first.',
    keywords: ['history', 'changes', 'log', 'audit'],
    run: async (ctx, a) => paged(await tasks.listTaskActivity(ctx, a as Parameters<typeof tasks.listTaskActivity>[1])),
  },
]);
