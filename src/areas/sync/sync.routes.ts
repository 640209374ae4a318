import type { FastifyInstance } from 'fastify';
import { Envelope, ok } from '../../core/http/envelope.js';
import * as S from './sync.schemas.js';
import * as sync from './sync.service.js';
import { SYNC_TYPES } from './sync.repo.js';
import { getSyncConfig } from '../workspace/settings/account.service.js';

/** Spec 2.8 defaults, served when the stored preferences cannot be read. */
const SAFE_DEFAULTS = { enabled: true, max_items: 500, sync_on_reconnect: true, storage_limit_mb: 50 };

/** Offline sync (spec 2.8, 4.5). */
export default async function syncRoutes(app: FastifyInstance) {
  app.get('/v1/preferences/offline-sync', { schema: { summary: 'Offline sync preferences (spec 2.8); safe defaults when the database cannot answer', response: { 200: Envelope(S.OfflineSyncOut) } } },
    async (req) => {
      let prefs: Record<string, unknown> = SAFE_DEFAULTS;
      try { prefs = await getSyncConfig(req.ctx); } catch (err) { req.log.warn({ err }, 'offline sync preferences unavailable; serving defaults'); }
      return ok({ ...SAFE_DEFAULTS, ...prefs, max_items: 500, resource_types: SYNC_TYPES } as S_Offline);
    });

  app.get('/v1/sync/:resourceType', { config: { feature: 'documents' }, schema: {
    summary: 'Delta pull: bulk without since, changes since epoch ms with tombstones, keyset cursor pages',
    params: S.ResourceTypeParams, querystring: S.SyncQuery, response: { 200: Envelope(S.SyncPageOut) },
  } }, async (req) => {
    const q = req.query as { since?: number; cursor?: string; limit?: number };
    return ok(await sync.pull(req.ctx, { resourceType: (req.params as { resourceType: string }).resourceType, ...q }));
  });
}
type S_Offline = { enabled: boolean; max_items: number; sync_on_reconnect: boolean; storage_limit_mb: number; resource_types: string[] };
