import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../../core/http/envelope.js';
import { OffsetQuery } from '../../../core/pagination.js';
import { KeyParams } from '../common.js';
import * as S from './settings.schemas.js';
import * as settings from './settings.service.js';
import * as account from './account.service.js';
import * as views from './views.service.js';

const R = { scope: 'settings:read' } as const;
const W = { scope: 'settings:write' } as const;

/** Spec 4.6 settings: organization, personalization, preferences, profile, security, skills, sync, views. */
export default async function settingsRoutes(app: FastifyInstance) {
  app.get('/v1/settings/org', { config: R, schema: { summary: 'Organization settings', response: { 200: Envelope(S.OrgSettingsOut) } } },
    async (req) => ok(await settings.getOrgSettings(req.ctx)));
  app.get('/v1/settings/org/:key', { config: { ...R, fixture: 'org_setting' }, schema: { summary: 'One organization setting (key 1-200 chars; unknown key 404)', params: KeyParams, response: { 200: Envelope(S.KeyValueOut) } } },
    async (req) => ok(await settings.getOrgSetting(req.ctx, (req.params as { key: string }).key)));
  app.put('/v1/settings/org', { config: { ...W, permission: 'org.manage_settings' }, schema: { summary: 'Merge organization settings (needs org.manage_settings)', body: S.PutOrgSettingsBody, response: { 200: Envelope(S.OrgSettingsOut) } } },
    async (req) => ok(await settings.putOrgSettings(req.ctx, (req.body as { settings: Record<string, unknown> }).settings)));

  app.get('/v1/settings/personalization', { config: R, schema: { summary: 'Your personalization in this organization (defaults until saved)', response: { 200: Envelope(S.PersonalizationOut) } } },
    async (req) => ok(await settings.getPersonalization(req.ctx)));
  app.put('/v1/settings/personalization', { config: W, schema: { summary: 'Save your personalization; stayLoggedInHours is clamped to the organization session cap', body: S.PutPersonalizationBody, response: { 200: Envelope(S.PersonalizationOut) } } },
    async (req) => ok(await settings.putPersonalization(req.ctx, req.body as S.PersonalizationInput)));

  app.get('/v1/settings/preferences', { config: R, schema: { summary: 'Your preferences document in this organization', response: { 200: Envelope(S.PreferencesOut) } } },
    async (req) => ok(await settings.getPreferences(req.ctx)));
  app.get('/v1/settings/preferences/:key', { config: { ...R, fixture: 'preference' }, schema: { summary: 'One preference (key 1-200 chars; unknown key 404)', params: KeyParams, response: { 200: Envelope(S.KeyValueOut) } } },
    async (req) => ok(await settings.getPreference(req.ctx, (req.params as { key: string }).key)));
  app.put('/v1/settings/preferences', { config: W, schema: { summary: 'Merge your preferences (max 64 KB, depth 8: 413 PAYLOAD_TOO_LARGE)', body: S.PutPreferencesBody, response: { 200: Envelope(S.PreferencesOut) } } },
    async (req) => ok(await settings.putPreferences(req.ctx, (req.body as { preferences: Record<string, unknown> }).preferences)));

  app.get('/v1/settings/profile', { config: R, schema: { summary: 'Your profile', response: { 200: Envelope(S.ProfileOut) } } },
    async (req) => ok(await account.getProfile(req.ctx)));
  app.get('/v1/settings/security', { config: R, schema: { summary: 'Your security settings: MFA, sessions, keys, session cap', response: { 200: Envelope(S.SecurityOut) } } },
    async (req) => ok(await account.getSecurity(req.ctx)));
  const skills = { config: R, schema: { summary: 'Assistant skills and whether the organization enables them', response: { 200: Envelope(S.SkillsOut) } } };
  app.get('/v1/settings/ai-skills', skills, async (req) => ok(await account.getSkills(req.ctx)));
  // Spec 9: a deprecated alias; its answers say so and name the route to use.
  app.get('/v1/settings/skills', {
    config: { ...R, deprecatedBy: '/v1/settings/ai-skills' },
    schema: { ...skills.schema, summary: 'Alias of GET /v1/settings/ai-skills (deprecated)', deprecated: true },
  }, async (req) => ok(await account.getSkills(req.ctx)));
  app.get('/v1/settings/sync-config', { config: R, schema: { summary: 'Offline sync preferences (spec 2.8)', response: { 200: Envelope(S.SyncConfigOut) } } },
    async (req) => ok(await account.getSyncConfig(req.ctx)));

  app.get('/v1/settings/views', { config: R, schema: { summary: 'Your saved views (at most 100)', querystring: Type.Object(OffsetQuery(100, 100)), response: { 200: ListEnvelope(Type.Array(S.ViewOut)) } } },
    async (req) => {
      const q = req.query as { limit: number; offset: number };
      const { items, total } = await views.listViews(req.ctx, q);
      return okList(items, { total, ...q });
    });
  app.post('/v1/settings/views', { config: W, schema: { summary: 'Save a view (the 101st is 409 CONFLICT)', body: S.CreateViewBody, response: { 201: Envelope(S.ViewOut) } } },
    async (req, reply) => reply.code(201).send(ok(await views.createView(req.ctx, req.body as S.CreateViewInput))));
  app.delete('/v1/settings/views/:viewId', { config: { ...W, fixture: 'saved_view' }, schema: { summary: 'Delete one of your saved views', params: S.ViewIdParams, response: { 200: Envelope(Type.Object({ id: Type.String({ format: 'uuid' }), deleted: Type.Boolean() })) } } },
    async (req) => ok(await views.deleteView(req.ctx, (req.params as { viewId: string }).viewId)));
}
