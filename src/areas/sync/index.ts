import type { FastifyInstance } from 'fastify';
import syncRoutes from './sync.routes.js';
import graphRoutes from './graph.routes.js';
import commentRoutes from './comments.routes.js';

/** Offline sync and the small resources it carries (entities, relationships, comments). */
export default async function syncArea(app: FastifyInstance) {
  await app.register(syncRoutes);
  await app.register(graphRoutes);
  await app.register(commentRoutes);
}
