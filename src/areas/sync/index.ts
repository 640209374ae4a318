import type { FastifyInstance } from 'fastify';
import { registerPathRow } from '../../core/http/path-rows.js';
import syncRoutes from './sync.routes.js';
import graphRoutes from './graph.routes.js';
import commentRoutes from './comments.routes.js';

/** Offline sync and the small resources it carries (entities, relationships, comments). */
export default async function syncArea(app: FastifyInstance) {
  registerPathRow('entity', 'Entity', 'entities');
  registerPathRow('relationship', 'Relationship', 'relationships');
  registerPathRow('comment', 'Comment', 'comments');
  await app.register(syncRoutes);
  await app.register(graphRoutes);
  await app.register(commentRoutes);
}
