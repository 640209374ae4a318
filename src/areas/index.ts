import type { FastifyInstance } from 'fastify';
import platformArea from './platform/platform.routes.js';
import accountsArea from './accounts/index.js';

/** Every area, in registration order. New areas are added here explicitly. */
export const AREAS: Array<(app: FastifyInstance) => Promise<void>> = [
  platformArea,
  accountsArea,
];
