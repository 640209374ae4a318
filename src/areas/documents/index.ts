import type { FastifyInstance } from 'fastify';
import { registerPathRow } from '../../core/http/path-rows.js';
import documentRoutes from './documents.routes.js';
import fileRoutes from './files.routes.js';
import sheetRoutes from './sheets.routes.js';
import collaborationTransport from '../../transports/ws/collab.routes.js';
import syncArea from '../sync/index.js';
import { INDEX_JOB, runIndexJob } from './documents.service.js';
import { documentsDeps } from './deps.js';
import { RECONCILE_EVERY_MS, reconcileCollabContent } from './collab-reconcile.js';
import { moderationConfigured } from '../../adapters/moderation/index.js';

/** Documents: library, search, files (spec 4.5). */
export default async function documentsArea(app: FastifyInstance) {
  registerPathRow('document', 'Document', 'documents');
  registerPathRow('document_file', 'Document', 'documents');
  const platform = app.platform;
  // Made now, not on the first request: a setting they cannot use (COLLAB_TICKET_STORE=memroy, a missing
  // MODERATION_BLOCKLIST_FILE) refuses the start instead of turning every documents request into a 500.
  documentsDeps(platform);
  // The safety gate with no rules of the operator's is a pass-through: said once at start, so it is a choice.
  if (!moderationConfigured(process.env)) {
    platform.log.warn('content moderation has only its built-in test rule: set MODERATION_BLOCKLIST(_FILE) or MODERATION_API_URL and MODERATION_API_KEY (docs/documents.md)');
  }
  platform.jobs.register(INDEX_JOB, (job) => runIndexJob({ platform }, job));
  platform.jobs.every('documents.collab-reconcile', RECONCILE_EVERY_MS, async () => { await reconcileCollabContent(platform); });
  await app.register(documentRoutes);
  await app.register(fileRoutes);
  await app.register(sheetRoutes);
  await app.register(syncArea);
  await app.register(collaborationTransport);
}
