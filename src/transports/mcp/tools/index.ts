import type { ToolDef } from './define.js';
import { accountsTools } from './accounts.tools.js';
import { projectsTools } from './projects.tools.js';
import { documentsTools } from './documents.tools.js';
import { notificationsTools } from './notifications.tools.js';
import { workspaceTools } from './workspace.tools.js';

/** Every area's tools, in one explicit list (no autoload), like src/areas/index.ts lists the areas. */
export const TOOL_SETS: ToolDef[][] = [
  accountsTools,
  projectsTools,
  documentsTools,
  notificationsTools,
  workspaceTools,
];
