import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import * as S from './projects.schemas.js';
import { TaskStatusesQuery, TaskStatusOut } from './tasks.schemas.js';
import * as parts from './project-parts.service.js';
import * as specs from './specs.service.js';
import { listTaskStatusPage } from './tasks.service.js';

const read = { scope: 'projects:read', permission: 'project.view', fixture: 'project' };
const write = { scope: 'projects:write', permission: 'project.update', fixture: 'project' };
type Id = { projectId: string };
type Q = { limit: number; offset: number };

export default async function projectPartRoutes(app: FastifyInstance) {
  const params = S.ProjectIdParams;
  const querystring = S.PageQuery;

  app.get('/v1/projects/:projectId/members', { config: read, schema: { summary: 'Members of a project', params, querystring, response: { 200: ListEnvelope(Type.Array(S.MemberOut)) } } },
    async (req) => { const r = await parts.listProjectMembers(req.ctx, { ...(req.params as Id), ...(req.query as Q) }); return okList(r.items, r); });
  app.post('/v1/projects/:projectId/members', { config: { ...write, permission: 'project.manage_members' }, schema: { summary: 'Add a member of the organization to a project', params, body: S.AddMemberBody, response: { 201: Envelope(S.MemberOut) } } },
    async (req, reply) => reply.code(201).send(ok(await parts.addProjectMember(req.ctx, { ...(req.params as Id), ...(req.body as S.AddMemberInput) }))));

  app.get('/v1/projects/:projectId/categories', { config: read, schema: { summary: 'Categories of a project (parent_id nests them)', params, querystring, response: { 200: ListEnvelope(Type.Array(S.CategoryOut)) } } },
    async (req) => { const r = await parts.listCategories(req.ctx, { ...(req.params as Id), ...(req.query as Q) }); return okList(r.items, r); });
  app.post('/v1/projects/:projectId/categories', { config: write, schema: { summary: 'Create a category', params, body: S.CreateCategoryBody, response: { 201: Envelope(S.CategoryOut) } } },
    async (req, reply) => reply.code(201).send(ok(await parts.createCategory(req.ctx, { ...(req.params as Id), ...(req.body as S.CreateCategoryInput) }))));

  app.get('/v1/projects/:projectId/phases', { config: read, schema: { summary: 'Phases of a project ordered by sort_order', params, querystring, response: { 200: ListEnvelope(Type.Array(S.PhaseOut)) } } },
    async (req) => { const r = await parts.listPhases(req.ctx, { ...(req.params as Id), ...(req.query as Q) }); return okList(r.items, r); });
  app.post('/v1/projects/:projectId/phases', { config: write, schema: { summary: 'Create a phase (sort_order defaults to after the last)', params, body: S.CreatePhaseBody, response: { 201: Envelope(S.PhaseOut) } } },
    async (req, reply) => reply.code(201).send(ok(await parts.createPhase(req.ctx, { ...(req.params as Id), ...(req.body as S.CreatePhaseInput) }))));

  app.get('/v1/projects/:projectId/specs', { config: read, schema: { summary: 'Specs of a project, newest first', params, querystring, response: { 200: ListEnvelope(Type.Array(S.SpecOut)) } } },
    async (req) => { const r = await specs.listSpecs(req.ctx, { ...(req.params as Id), ...(req.query as Q) }); return okList(r.items, r); });
  app.post('/v1/projects/:projectId/specs', { config: write, schema: { summary: 'Create a spec', params, body: S.CreateSpecBody, response: { 201: Envelope(S.SpecOut) } } },
    async (req, reply) => reply.code(201).send(ok(await specs.createSpec(req.ctx, { ...(req.params as Id), ...(req.body as S.CreateSpecInput) }))));

  app.get('/v1/projects/:projectId/task-statuses', { config: { ...read, permission: 'task.view' }, schema: { summary: 'Task status definitions of a project, ordered', params, querystring: TaskStatusesQuery, response: { 200: ListEnvelope(Type.Array(TaskStatusOut)) } } },
    async (req) => { const r = await listTaskStatusPage(req.ctx, { ...(req.params as Id), ...(req.query as Q) }); return okList(r.items, r); });
}
