import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import { ProjectIdParams, PageQuery } from './projects.schemas.js';
import * as S from './tasks.schemas.js';
import * as tasks from './tasks.service.js';

type Pid = { projectId: string };
type Tid = { taskId: string };

export default async function taskRoutes(app: FastifyInstance) {
  app.get('/v1/projects/:projectId/tasks', { config: { scope: 'projects:read', permission: 'task.view', fixture: 'project' }, schema: { summary: 'Tasks of a project, newest first; filters spec_id, status (key), assignee_id', params: ProjectIdParams, querystring: S.ListTasksQuery, response: { 200: ListEnvelope(Type.Array(S.TaskListItem)) } } },
    async (req) => {
      const r = await tasks.listTasks(req.ctx, { ...(req.params as Pid), ...(req.query as S.ListTasksFilter & { limit: number; offset: number }) });
      return okList(r.items, r);
    });

  app.post('/v1/projects/:projectId/tasks', { config: { scope: 'projects:write', permission: 'task.create', fixture: 'project' }, schema: { summary: 'Create a task; data is the new task id', params: ProjectIdParams, body: S.CreateTaskBody, response: { 201: Envelope(Type.String({ format: 'uuid' })) } } },
    async (req, reply) => reply.code(201).send(ok(await tasks.createTask(req.ctx, { ...(req.params as Pid), ...(req.body as S.CreateTaskInput) }))));

  app.get('/v1/tasks/:taskId', { config: { scope: 'projects:read', permission: 'task.view', fixture: 'task' }, schema: { summary: 'Get a task', params: S.TaskIdParams, response: { 200: Envelope(S.TaskOut) } } },
    async (req) => ok(await tasks.getTask(req.ctx, req.params as Tid)));

  app.put('/v1/tasks/:taskId', { config: { scope: 'projects:write', permission: 'task.update', fixture: 'task' }, schema: { summary: 'Update a task (status by key; null clears; depends_on replaces)', params: S.TaskIdParams, body: S.UpdateTaskBody, response: { 200: Envelope(S.TaskOut) } } },
    async (req) => ok(await tasks.updateTask(req.ctx, { ...(req.params as Tid), ...(req.body as S.UpdateTaskInput) })));

  app.delete('/v1/tasks/:taskId', { config: { scope: 'projects:write', permission: 'task.delete', fixture: 'task' }, schema: { summary: 'Delete a task', params: S.TaskIdParams, response: { 200: Envelope(Type.Object({ id: Type.String({ format: 'uuid' }), deleted: Type.Literal(true) })) } } },
    async (req) => ok(await tasks.deleteTask(req.ctx, req.params as Tid)));

  app.get('/v1/tasks/:taskId/activity', { config: { scope: 'projects:read', permission: 'task.view', fixture: 'task' }, schema: { summary: 'Change history of a task, newest first', params: S.TaskIdParams, querystring: PageQuery, response: { 200: ListEnvelope(Type.Array(S.ActivityOut)) } } },
    async (req) => {
      const r = await tasks.listTaskActivity(req.ctx, { ...(req.params as Tid), ...(req.query as { limit: number; offset: number }) });
      return okList(r.items, r);
    });
}
