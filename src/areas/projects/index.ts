import type { FastifyInstance } from 'fastify';
import { registerPathRow } from '../../core/http/path-rows.js';
import projectRoutes from './projects.routes.js';
import projectPartRoutes from './project-parts.routes.js';
import taskRoutes from './tasks.routes.js';
import { firstOpenStatuses } from './first-open-status.js';

/** Projects, their members, categories, phases and specs, and tasks (spec 4.4; decisions: docs/projects-and-tasks.md). */
export default async function projectsArea(app: FastifyInstance) {
  // The rows the areas' path ids name (route config `fixture`): refusals by role or scope are 404 for another organization's.
  registerPathRow('project', 'Project', 'projects');
  registerPathRow('task', 'Task', 'tasks');
  await app.register(projectRoutes);
  await app.register(projectPartRoutes);
  await app.register(taskRoutes);
  firstOpenStatuses(app.platform.db); // subscribes now, so the listener is live by the first task created
}
