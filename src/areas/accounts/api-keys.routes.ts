import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import { OffsetQuery } from '../../core/pagination.js';
import * as S from './accounts.schemas.js';
import * as keys from './api-keys.service.js';

export default async function apiKeyRoutes(app: FastifyInstance) {
  app.get('/v1/api-keys', { config: { scope: 'settings:read' }, schema: { summary: 'API keys (your own; all of them with org.manage_api_keys)', querystring: Type.Object(OffsetQuery(50, 100)), response: { 200: ListEnvelope(Type.Array(S.ApiKeyOut)) } } },
    async (req) => {
      const q = req.query as { limit: number; offset: number };
      const { items, total } = await keys.listApiKeys(req.ctx, q);
      return okList(items, { total, ...q });
    });

  app.post('/v1/api-keys', { config: { scope: 'settings:write' }, schema: { summary: 'Create an API key; the key is shown in this response only', body: S.CreateApiKeyBody, response: { 201: Envelope(S.ApiKeyOut) } } },
    async (req, reply) => reply.code(201).send(ok(await keys.createApiKey(req.ctx, req.body as S.CreateApiKeyInput))));

  app.delete('/v1/api-keys/:id', { config: { scope: 'settings:write', fixture: 'api_key' }, schema: { summary: 'Revoke an API key (effective at once)', params: S.IdParams, response: { 200: Envelope(S.ApiKeyOut) } } },
    async (req) => ok(await keys.revokeApiKey(req.ctx, (req.params as { id: string }).id)));
}
