import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import { OffsetQuery } from '../../core/pagination.js';
import * as S from './accounts.schemas.js';
import * as orgs from './organizations.service.js';

export default async function organizationRoutes(app: FastifyInstance) {
  // A list: spec 2.1 gives every list success a `pagination` object (limit/offset like the other offset lists).
  app.get('/v1/organizations', { config: { scope: 'settings:read' }, schema: { summary: "The caller's organizations (an API key: its own, with settings:read, as for /current)", querystring: Type.Object(OffsetQuery(50, 100)), response: { 200: ListEnvelope(Type.Array(S.OrganizationOut)) } } },
    async (req) => {
      const q = req.query as { limit: number; offset: number };
      const page = await orgs.listMyOrganizations(req.ctx, q);
      return okList(page.items, { total: page.total, ...q });
    });

  app.post('/v1/organizations', { config: { credentials: ['user'] }, schema: { summary: 'Create an organization; the caller becomes its owner', body: S.CreateOrgBody, response: { 201: Envelope(S.OrganizationOut) } } },
    async (req, reply) => reply.code(201).send(ok(await orgs.createOrganization(req.ctx, req.body as S.CreateOrgInput))));

  app.get('/v1/organizations/current', { config: { scope: 'settings:read' }, schema: { summary: 'The organization of the credential', response: { 200: Envelope(S.OrganizationOut) } } },
    async (req) => ok(await orgs.getCurrentOrganization(req.ctx)));

  app.put('/v1/organizations/current', { config: { scope: 'settings:write', permission: 'org.manage_settings' }, schema: { summary: 'Update name, settings or session length', body: S.UpdateOrgBody, response: { 200: Envelope(S.OrganizationOut) } } },
    async (req) => ok(await orgs.updateCurrentOrganization(req.ctx, req.body as S.UpdateOrgInput)));

  app.delete('/v1/organizations/current', { config: { permission: 'org.delete', credentials: ['user'] }, schema: { summary: 'Delete the organization of the session (soft delete; all its credentials stop working)', response: { 200: Envelope(Type.Object({ id: S.Uuid, deleted: Type.Boolean() })) } } },
    async (req) => ok(await orgs.deleteOrganization(req.ctx, req.principal!.orgId)));

  app.get('/v1/organizations/current/members', { config: { scope: 'settings:read' }, schema: { summary: 'Members of the organization', querystring: Type.Object(OffsetQuery(50, 100)), response: { 200: ListEnvelope(Type.Array(S.MemberOut)) } } },
    async (req) => {
      const q = req.query as { limit: number; offset: number };
      const { items, total } = await orgs.listMembers(req.ctx, q);
      return okList(items, { total, ...q });
    });

  app.post('/v1/organizations/current/members', { config: { scope: 'settings:write', permission: 'org.manage_members' }, schema: { summary: 'Add an existing user by e-mail, or invite a new one', body: S.AddMemberBody, response: { 201: Envelope(S.MemberOut) } } },
    async (req, reply) => reply.code(201).send(ok(await orgs.addMember(req.ctx, req.body as S.AddMemberInput))));

  app.put('/v1/organizations/current/members/:userId', { config: { scope: 'settings:write', permission: 'org.manage_members', fixture: 'member' }, schema: { summary: "Change a member's role", params: S.UserIdParams, body: S.UpdateMemberBody, response: { 200: Envelope(S.MemberOut) } } },
    async (req) => ok(await orgs.updateMemberRole(req.ctx, (req.params as { userId: string }).userId, (req.body as { role: string }).role)));

  app.delete('/v1/organizations/current/members/:userId', { config: { scope: 'settings:write', fixture: 'member' }, schema: { summary: 'Remove a member (or leave, with your own id)', params: S.UserIdParams, response: { 200: Envelope(S.MemberRemovedOut) } } },
    async (req) => { const userId = (req.params as { userId: string }).userId; await orgs.removeMember(req.ctx, userId); return ok({ user_id: userId, removed: true as const }); });
}
