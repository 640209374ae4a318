import type { FastifyInstance } from 'fastify';
import { Envelope, ok } from '../../core/http/envelope.js';
import * as S from './sync.schemas.js';
import * as sync from './sync.service.js';

/** Offline sync (spec 2.8, 4.5). */
export default async function syncRoutes(app: FastifyInstance) {
  app.get('/v1/preferences/offline-sync', { schema: { summary: 'Offline sync preferences (spec 2.8); safe defaults when the database cannot answer', response: { 200: Envelope(S.OfflineSyncOut) } } },
    async (req) => ok(await sync.offlineSyncPreferences(req.ctx)));

  app.get('/v1/sync/:resourceType', { config: { feature: 'documents' }, schema: {
    summary: 'Delta pull: bulk without since, changes since epoch ms with tombstones, keyset cursor pages',
    params: S.ResourceTypeParams, querystring: S.SyncQuery, response: { 200: Envelope(S.SyncPageOut) },
  } }, async (req) => {
    const q = req.query as { since?: number; cursor?: string; limit?: number };
    return ok(await sync.pull(req.ctx, { resourceType: (req.params as { resourceType: string }).resourceType, ...q }));
  });
}
