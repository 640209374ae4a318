import type { FastifyInstance } from 'fastify';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import { Type } from 'typebox';
import * as S from './projects.schemas.js';
import * as projects from './projects.service.js';

const read = { scope: 'projects:read', permission: 'project.view' };
type Id = { projectId: string };

export default async function projectRoutes(app: FastifyInstance) {
  app.get('/v1/projects', { config: read, schema: { summary: 'List projects (status: active by default, archived, deleted or all)', querystring: S.ListProjectsQuery, response: { 200: ListEnvelope(Type.Array(S.ProjectOut)) } } },
    async (req) => {
      const r = await projects.listProjects(req.ctx, req.query as { status: S.ProjectStatusFilter; limit: number; offset: number });
      return okList(r.items, r);
    });

  app.post('/v1/projects', { config: { scope: 'projects:write', permission: 'project.create' }, schema: { summary: 'Create a project; the slug is generated from the name when omitted', body: S.CreateProjectBody, response: { 201: Envelope(S.ProjectOut) } } },
    async (req, reply) => reply.code(201).send(ok(await projects.createProject(req.ctx, req.body as S.CreateProjectInput))));

  app.get('/v1/projects/:projectId', { config: { ...read, fixture: 'project' }, schema: { summary: 'Get a project (archived and deleted ones too)', params: S.ProjectIdParams, response: { 200: Envelope(S.ProjectOut) } } },
    async (req) => ok(await projects.getProject(req.ctx, req.params as Id)));

  app.put('/v1/projects/:projectId', { config: { scope: 'projects:write', permission: 'project.update', fixture: 'project' }, schema: { summary: 'Update a project; is_active false archives, true unarchives; description null clears', params: S.ProjectIdParams, body: S.UpdateProjectBody, response: { 200: Envelope(S.ProjectOut) } } },
    async (req) => ok(await projects.updateProject(req.ctx, { ...(req.params as Id), ...(req.body as S.UpdateProjectInput) })));

  app.delete('/v1/projects/:projectId', { config: { scope: 'projects:write', permission: 'project.update', fixture: 'project' }, schema: { summary: 'Soft-delete a project (data kept, hidden from listings)', params: S.ProjectIdParams, response: { 200: Envelope(S.DeletedProjectOut) } } },
    async (req) => ok(await projects.deleteProject(req.ctx, req.params as Id)));
}
