import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import { OffsetQuery } from '../../core/pagination.js';
import * as S from './accounts.schemas.js';
import * as admin from './admin.service.js';
import { deleteOrganization } from './organizations.service.js';

/** Platform administration: root organization super-admins, or keys with the `admin` scope. */
export default async function adminRoutes(app: FastifyInstance) {
  const root = { rootOnly: true, scope: 'admin' };
  app.get('/v1/admin/organizations', { config: root, schema: { summary: 'All organizations of the platform', querystring: Type.Object(OffsetQuery(50, 100)), response: { 200: ListEnvelope(Type.Array(S.OrganizationOut)) } } },
    async (req) => {
      const q = req.query as { limit: number; offset: number };
      const { items, total } = await admin.listAllOrganizations(req.ctx, q);
      return okList(items, { total, ...q });
    });

  app.put('/v1/admin/organizations/:orgId/entitlements', { config: root, schema: { summary: 'Set plan tier, subscription status and features', params: S.OrgIdParams, body: S.EntitlementsBody, response: { 200: Envelope(S.OrganizationOut) } } },
    async (req) => ok(await admin.setEntitlements(req.ctx, (req.params as { orgId: string }).orgId, req.body as S.EntitlementsInput)));

  app.post('/v1/admin/organizations/:orgId/scim-tokens', { config: root, schema: { summary: 'Create a SCIM bearer token for an organization (shown once)', params: S.OrgIdParams, body: S.ScimTokenBody, response: { 201: Envelope(S.ScimTokenOut) } } },
    async (req, reply) => reply.code(201).send(ok(await admin.createScimToken(req.ctx, (req.params as { orgId: string }).orgId, (req.body as { name: string }).name))));

  app.delete('/v1/admin/organizations/:orgId', { config: root, schema: { summary: 'Delete an organization (soft delete)', params: S.OrgIdParams, response: { 200: Envelope(Type.Object({ id: S.Uuid, deleted: Type.Boolean() })) } } },
    async (req) => ok(await deleteOrganization(req.ctx, (req.params as { orgId: string }).orgId)));
}
