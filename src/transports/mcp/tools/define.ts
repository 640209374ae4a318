import type { TSchema } from 'typebox';
import type { ServiceContext } from '../../../core/context.js';

/**
 * One MCP tool: a thin adapter from validated arguments to an area's service function (the same one
 * its REST route calls). Access is not declared here: it comes from the REST route named by `route`
 * (its scope, permission, feature, subscription, credential kinds), looked up in the app's route list, so
 * MCP and REST can never disagree. An area adds tools by exporting an array of these from
 * `<area>.tools.ts` and listing it in `src/transports/mcp/tools/index.ts`.
 */
export interface ToolDef {
  /** `<area>.<verb>`, e.g. `projects.list`; characters [A-Za-z0-9_.-] (MCP tool-name rule). */
  name: string;
  title?: string;
  /** What it does, in words an agent can search (find_tools ranks over name and description). */
  description: string;
  /** `read` or `write`: the fine-grained scope is `mcp:<area>.<access>` where area is the name's first segment. */
  access: 'read' | 'write';
  /** The REST route whose needs apply, as `METHOD /path` exactly as registered, e.g. `POST /v1/projects/:projectId/tasks`. */
  route: string;
  /**
   * Input schema. Omitted: derived from the route's TypeBox schemas (path params, query string and body
   * merged into one strict object). Given: used as is (still a TypeBox/JSON Schema object).
   */
  input?: TSchema;
  /** Extra words for find_tools (synonyms), not shown to clients. */
  keywords?: string[];
  /** Calls the service. Lists return `{ items, pagination }`; anything else is returned as the tool's structured result. */
  run(ctx: ServiceContext, args: Record<string, any>): Promise<unknown> | unknown;
}

/** Identity helper that keeps the literal types of a tool list readable at the definition site. */
export const defineTools = (tools: ToolDef[]): ToolDef[] => tools;

/** The list shape every list tool returns (spec 2.1 pagination, without the envelope). */
export function listResult<T>(items: T[], p: { total: number; limit: number; offset: number }) {
  return { items, pagination: { total: p.total, limit: p.limit, offset: p.offset, has_more: p.offset + p.limit < p.total } };
}
