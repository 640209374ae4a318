import type { ValidateFunction } from 'ajv';
import { newAjv } from '../../core/http/validation.js';
import type { ServiceContext } from '../../core/context.js';
import type { Principal } from '../../core/auth/principal.js';
import { RPC, RpcError } from './jsonrpc.js';
import { isAllowed } from './access.js';
import { describeArgErrors, type Tool, type ToolRegistry } from './registry.js';
import { runTool, toolError, toolResult, type Logger, type ToolResult } from './tool-call.js';
import { AppError } from '../../core/errors.js';

/** The three tools tools/list shows by default: search, describe, call (spec 4.2). */
export const META_TOOLS = [
  {
    name: 'find_tools',
    title: 'Find tools',
    description: 'Search the platform tool catalogue by what you want to do (e.g. "create a task", "list projects"). Returns the best matching tool names, ranked by relevance over names and descriptions. Next: get_tool_schema, then call_tool.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200, description: 'Words describing the operation' },
        limit: { type: 'integer', minimum: 1, maximum: 50, default: 10, description: 'Most results to return' },
      },
      required: ['query'], additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'get_tool_schema',
    title: 'Get tool schema',
    description: 'The JSON Schema of one tool\'s arguments, with its description and the scope it needs. Call it before call_tool.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 128, description: 'Tool name from find_tools, e.g. projects.create' } },
      required: ['name'], additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'call_tool',
    title: 'Call a tool',
    description: 'Call a platform tool by name with its arguments (an object matching get_tool_schema). Same permission check as calling the tool directly with tools/call.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 128, description: 'Tool name, e.g. tasks.create' },
        arguments: { type: 'object', description: 'The tool\'s arguments', default: {} },
      },
      required: ['name'], additionalProperties: false,
    },
    annotations: { openWorldHint: false },
  },
] as const;

const ajv = newAjv(false);
const validators = new Map<string, ValidateFunction>(META_TOOLS.map((t) => [t.name, ajv.compile(t.inputSchema as object)]));
export const isMetaTool = (name: string) => validators.has(name);

/** Scope hint for humans and models, appended to a tool's description. */
export function scopeHint(t: Tool): string {
  return `Scope: ${t.scope}${t.needs.scope ? ` (or ${t.needs.scope})` : ''}.`;
}

/** The access of a meta-tool, as `_meta` of its tools/list entry and in get_tool_schema: every caller may use them. */
export const META_TOOL_ACCESS = { scope: null, coarse_scope: null, permission: null, feature: null, allowed: true } as const;

/** A tools/list entry for a platform tool. `_meta.allowed` says whether this caller passes its access check. */
export function describeTool(t: Tool, p: Principal) {
  return {
    name: t.name, title: t.title, description: `${t.description} ${scopeHint(t)}`, inputSchema: t.inputSchema,
    annotations: { title: t.title, readOnlyHint: t.def.access === 'read', destructiveHint: /\.(delete|remove|archive)/.test(t.name), openWorldHint: false },
    _meta: { scope: t.scope, coarse_scope: t.needs.scope ?? null, permission: t.needs.permission ?? null, feature: t.needs.feature ?? null, allowed: isAllowed(p, t) },
  };
}

export async function runMetaTool(registry: ToolRegistry, ctx: ServiceContext, name: string, args: unknown, log: Logger): Promise<ToolResult> {
  const validate = validators.get(name)!;
  const input = structuredClone(args ?? {}) as Record<string, any>;
  if (typeof input !== 'object' || Array.isArray(input) || !validate(input)) {
    const { message, field } = describeArgErrors(validate.errors);
    throw new RpcError(RPC.INVALID_PARAMS, `Invalid arguments for "${name}": ${message}`, { tool: name, field });
  }
  const p = ctx.principal!;
  if (name === 'find_tools') {
    const hits = registry.search(input.query, input.limit);
    const tools = hits.map(({ tool, score }) => ({
      name: tool.name, title: tool.title, description: tool.description, scope: tool.scope, allowed: isAllowed(p, tool), score: Math.round(score * 10) / 10,
    }));
    // The guidance travels in the result itself: MCP asks that the text block be the structured content's JSON.
    const next = tools.length
      ? 'get_tool_schema {"name": "<tool>"} for its arguments, then call_tool {"name": "<tool>", "arguments": {...}}; "allowed": false means this credential may not call it.'
      : 'No tool matches; try other words, or tools/list with {"full": true} for the whole catalogue.';
    return toolResult({ query: input.query, tools, next });
  }
  if (name === 'get_tool_schema') {
    // The meta-tools are tools too (tools/list shows them): describe them rather than answer "no tool named".
    const meta = META_TOOLS.find((t) => t.name === input.name);
    if (meta) return toolResult({ ...meta, ...META_TOOL_ACCESS });
    const tool = registry.get(input.name);
    if (!tool) {
      const near = registry.search(input.name, 3).map((h) => h.tool.name);
      return toolError(new AppError('NOT_FOUND', `No tool named "${input.name}"${near.length ? `; did you mean ${near.join(', ')}?` : ''}`, { name: input.name, suggestions: near }));
    }
    const d = describeTool(tool, p);
    return toolResult({ name: d.name, title: d.title, description: d.description, inputSchema: d.inputSchema, annotations: d.annotations, ...d._meta });
  }
  // call_tool: the same path as tools/call, so the permission check is identical.
  if (isMetaTool(input.name)) {
    if (input.name === 'call_tool') throw new RpcError(RPC.INVALID_PARAMS, 'call_tool cannot call itself', { name: input.name });
    return runMetaTool(registry, ctx, input.name, input.arguments, log);
  }
  return runTool(registry, ctx, input.name, input.arguments, log);
}
