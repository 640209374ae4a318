import type { FastifyInstance } from 'fastify';
import platformArea from './platform/platform.routes.js';
import accountsArea from './accounts/index.js';
import projectsArea from './projects/index.js';
import documentsArea from './documents/index.js';
import workspaceArea from './workspace/index.js';
import mcpTransport from '../transports/mcp/mcp.routes.js';

/** Every area, in registration order. New areas are added here explicitly. */
export const AREAS: Array<(app: FastifyInstance) => Promise<void>> = [
  platformArea,
  accountsArea,
  projectsArea,
  documentsArea,
  workspaceArea,
  mcpTransport,
];
