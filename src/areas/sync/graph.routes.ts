import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import * as S from './sync.schemas.js';
import * as g from './graph.service.js';

const read = { scope: 'projects:read', permission: 'project.view' } as const;
const write = { scope: 'projects:write', permission: 'project.update' } as const;
type Id = { id: string };

/** Entities and the relationships between them (our design; spec 1 names entities, 4.5 syncs them). */
export default async function graphRoutes(app: FastifyInstance) {
  app.get('/v1/entities', { config: read, schema: { summary: 'List entities', querystring: S.ListEntitiesQuery, response: { 200: ListEnvelope(Type.Array(S.EntityOut)) } } },
    async (req) => { const q = req.query as { limit: number; offset: number }; const r = await g.listEntities(req.ctx, q); return okList(r.items, { total: r.total, ...q }); });
  app.post('/v1/entities', { config: write, schema: { summary: 'Create an entity', body: S.CreateEntityBody, response: { 201: Envelope(S.EntityOut) } } },
    async (req, reply) => reply.code(201).send(ok(await g.createEntity(req.ctx, req.body as S.CreateEntityInput))));
  app.get('/v1/entities/:id', { config: { ...read, fixture: 'entity' }, schema: { summary: 'Get an entity', params: S.IdParams, response: { 200: Envelope(S.EntityOut) } } },
    async (req) => ok(await g.getEntity(req.ctx, req.params as Id)));
  app.put('/v1/entities/:id', { config: { ...write, fixture: 'entity' }, schema: { summary: 'Update an entity (at least one field)', params: S.IdParams, body: S.UpdateEntityBody, response: { 200: Envelope(S.EntityOut) } } },
    async (req) => ok(await g.updateEntity(req.ctx, { ...(req.body as S.UpdateEntityInput), id: (req.params as Id).id })));
  app.delete('/v1/entities/:id', { config: { ...write, fixture: 'entity' }, schema: { summary: 'Delete an entity and its relationships', params: S.IdParams, response: { 200: Envelope(S.DeletedOut) } } },
    async (req) => ok(await g.deleteEntity(req.ctx, req.params as Id)));

  app.get('/v1/relationships', { config: read, schema: { summary: 'List relationships (entity_id matches either end)', querystring: S.ListRelationshipsQuery, response: { 200: ListEnvelope(Type.Array(S.RelationshipOut)) } } },
    async (req) => { const q = req.query as { limit: number; offset: number }; const r = await g.listRelationships(req.ctx, q); return okList(r.items, { total: r.total, ...q }); });
  app.post('/v1/relationships', { config: write, schema: { summary: 'Relate two entities', body: S.CreateRelationshipBody, response: { 201: Envelope(S.RelationshipOut) } } },
    async (req, reply) => reply.code(201).send(ok(await g.createRelationship(req.ctx, req.body as S.CreateRelationshipInput))));
  app.get('/v1/relationships/:id', { config: { ...read, fixture: 'relationship' }, schema: { summary: 'Get a relationship', params: S.IdParams, response: { 200: Envelope(S.RelationshipOut) } } },
    async (req) => ok(await g.getRelationship(req.ctx, req.params as Id)));
  app.put('/v1/relationships/:id', { config: { ...write, fixture: 'relationship' }, schema: { summary: 'Update a relationship', params: S.IdParams, body: S.UpdateRelationshipBody, response: { 200: Envelope(S.RelationshipOut) } } },
    async (req) => ok(await g.updateRelationship(req.ctx, { ...(req.body as S.UpdateRelationshipInput), id: (req.params as Id).id })));
  app.delete('/v1/relationships/:id', { config: { ...write, fixture: 'relationship' }, schema: { summary: 'Delete a relationship', params: S.IdParams, response: { 200: Envelope(S.DeletedOut) } } },
    async (req) => ok(await g.deleteRelationship(req.ctx, req.params as Id)));
}
