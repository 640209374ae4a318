import { SERVER_VERSION } from '../../core/version.js';
import { AppError } from '../../core/errors.js';
import { decodeCursor, encodeCursor } from '../../core/pagination.js';
import { actor, type ServiceContext } from '../../core/context.js';
import { RPC, RpcError, rpcError, rpcResult, type JsonRpcRequest, type JsonRpcResponse } from './jsonrpc.js';
import { checkAccess, isAllowed } from './access.js';
import type { ToolRegistry } from './registry.js';
import { META_TOOLS, META_TOOL_ACCESS, describeTool, isMetaTool, runMetaTool } from './meta-tools.js';
import { runTool, toRpcError, type Logger } from './tool-call.js';
import { parseResourceUri, type ResourceProvider, type ResourceRef } from './resources/define.js';

/** Newest first; the version this server speaks by default and offers when a client asks for one it lacks. */
/**
 * Versions a client may negotiate. Not 2025-03-26: it requires servers to take JSON-RPC batches, which this server does
 * not (2025-06-18 removed them); a client asking for it is offered 2025-11-25.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];
export const SERVER_INFO = { name: 'platform-api', title: 'Platform API', version: SERVER_VERSION };

export const INSTRUCTIONS = [
  'This server exposes the Platform API (projects, tasks, specs, documents, notifications, your account) as MCP tools.',
  'tools/list shows three meta-tools. Recommended flow: 1) find_tools {"query": "what you want to do"} to discover tool names;',
  '2) get_tool_schema {"name": "<tool>"} to read its arguments and required scope; 3) call_tool {"name": "<tool>", "arguments": {...}}.',
  'Every tool can also be called directly with tools/call; tools/list with {"full": true} lists them all.',
  'API keys need "mcp:*", the tool\'s scope (e.g. "mcp:projects.read") or its coarse grant (e.g. "projects:read").',
  'Specs and documents are also resources (platform://specs/<id>, platform://documents/<id>): resources/list and resources/read.',
].join(' ');

const RESOURCE_PAGE = 50;

export interface CallEnv {
  log: Logger;
  /** Called once a valid initialize is answered; the transport opens its session here. */
  onInitialize?(info: { protocolVersion: string; clientInfo?: { name?: string; version?: string } }): Promise<void>;
}

const isPlainObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function params(req: JsonRpcRequest): Record<string, any> {
  if (req.params === undefined) return {};
  if (!isPlainObject(req.params)) throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: "params" of ${req.method} must be an object`, { field: 'params' });
  return req.params;
}

function str(p: Record<string, any>, key: string, method: string, required = true): string | undefined {
  const v = p[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v === '') throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${method} needs "${key}" as a non-empty string`, { field: key });
  return v;
}

/** The core cursor (core/pagination.ts), refused the JSON-RPC way: the provider index and that provider's own cursor. */
type ResourcesCursor = { p: number; c: unknown };
function decodeResourcesCursor(cursor: string, providers: number): ResourcesCursor {
  try {
    return decodeCursor<ResourcesCursor>(cursor, ['p', 'c'], (v) => Number.isInteger(v.p) && v.p >= 0 && v.p < providers);
  } catch {
    throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "cursor" is not a cursor this server issued', { field: 'cursor' });
  }
}

/** Transport-independent MCP method handling: one JSON-RPC request in, one response out. */
export class McpDispatcher {
  constructor(private readonly registry: ToolRegistry, private readonly providers: ResourceProvider[]) {}

  async handle(ctx: ServiceContext, req: JsonRpcRequest, env: CallEnv): Promise<JsonRpcResponse> {
    try {
      return rpcResult(req.id, await this.route(ctx, req, env));
    } catch (err) {
      const e = toRpcError(err, ctx, env.log);
      return rpcError(req.id, e.code, e.message, e.data);
    }
  }

  private async route(ctx: ServiceContext, req: JsonRpcRequest, env: CallEnv): Promise<unknown> {
    const p = params(req);
    switch (req.method) {
      case 'initialize': return this.initialize(p, env);
      case 'ping': return {};
      // Spec 4.2 accepts notifications/initialized; sent with an id (as a request) it is acknowledged, not "method not found".
      case 'notifications/initialized': return {};
      case 'tools/list': return this.listTools(ctx, p);
      case 'tools/call': {
        const name = str(p, 'name', 'tools/call')!;
        if (p.arguments !== undefined && !isPlainObject(p.arguments)) throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "arguments" must be an object', { field: 'arguments' });
        return isMetaTool(name) ? runMetaTool(this.registry, ctx, name, p.arguments, env.log) : runTool(this.registry, ctx, name, p.arguments, env.log);
      }
      case 'resources/list': return this.listResources(ctx, p);
      case 'resources/templates/list': return {
        resourceTemplates: this.providers.map((r) => ({ uriTemplate: `platform://${r.kind}/{id}`, name: r.kind, title: r.title, description: r.description, mimeType: r.mimeType })),
      };
      case 'resources/read': return this.readResource(ctx, str(p, 'uri', 'resources/read')!);
      default: throw new RpcError(RPC.METHOD_NOT_FOUND, `Method not found: ${req.method}`, { method: req.method });
    }
  }

  private async initialize(p: Record<string, any>, env: CallEnv) {
    const requested = str(p, 'protocolVersion', 'initialize')!;
    if (p.capabilities !== undefined && !isPlainObject(p.capabilities)) throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "capabilities" must be an object', { field: 'capabilities' });
    if (p.clientInfo !== undefined && !isPlainObject(p.clientInfo)) throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "clientInfo" must be an object', { field: 'clientInfo' });
    // Lifecycle: answer with the requested version when supported, else with the latest we speak.
    const protocolVersion = (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    const clientInfo = p.clientInfo ? { name: typeof p.clientInfo.name === 'string' ? p.clientInfo.name : undefined, version: typeof p.clientInfo.version === 'string' ? p.clientInfo.version : undefined } : undefined;
    await env.onInitialize?.({ protocolVersion, clientInfo });
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
      serverInfo: SERVER_INFO,
      instructions: INSTRUCTIONS,
    };
  }

  private listTools(ctx: ServiceContext, p: Record<string, any>) {
    if (p.full !== undefined && typeof p.full !== 'boolean') throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "full" must be a boolean', { field: 'full' });
    if (p.cursor !== undefined && typeof p.cursor !== 'string') throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "cursor" must be a string', { field: 'cursor' });
    const principal = actor(ctx);
    const tools: unknown[] = META_TOOLS.map((t) => ({ ...t, _meta: { ...META_TOOL_ACCESS } }));
    if (p.full === true) tools.push(...this.registry.all().map((t) => describeTool(t, principal)));
    return { tools };
  }

  private gateOf(provider: ResourceProvider, use: 'read' | 'list' = 'read') {
    const name = use === 'list' ? provider.listGate : provider.gate;
    const tool = this.registry.get(name);
    if (!tool) throw new Error(`Resource kind "${provider.kind}" is gated by unknown tool "${name}"`);
    return tool;
  }

  /** Resources of every kind the caller may read, kind after kind; the cursor is (kind index, that kind's cursor). */
  private async listResources(ctx: ServiceContext, p: Record<string, any>) {
    if (p.cursor !== undefined && typeof p.cursor !== 'string') throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "cursor" must be a string', { field: 'cursor' });
    const principal = actor(ctx);
    let { p: idx, c: inner } = p.cursor ? decodeResourcesCursor(p.cursor, this.providers.length) : { p: 0, c: null as unknown };
    const resources: ResourceRef[] = [];
    while (idx < this.providers.length && resources.length < RESOURCE_PAGE) {
      const provider = this.providers[idx];
      if (!isAllowed(principal, this.gateOf(provider, 'list')) || !isAllowed(principal, this.gateOf(provider))) { idx++; inner = null; continue; }
      let page: Awaited<ReturnType<ResourceProvider['list']>>;
      try {
        page = await provider.list(ctx, inner, RESOURCE_PAGE - resources.length);
      } catch (err) {
        if (err instanceof AppError && err.status === 400) throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${err.message}`, { field: 'cursor' });
        throw err;
      }
      resources.push(...page.items);
      if (page.next !== null && page.next !== undefined) inner = page.next;
      else { idx++; inner = null; }
    }
    const nextCursor = idx < this.providers.length ? encodeCursor({ p: idx, c: inner }) : undefined;
    return { resources, ...(nextCursor ? { nextCursor } : {}) };
  }

  private async readResource(ctx: ServiceContext, uri: string) {
    const parsed = parseResourceUri(uri);
    // A URI of another scheme names no resource here, like an unknown platform:// one (MCP: -32002 "resource not found").
    if (!parsed) throw new RpcError(RPC.RESOURCE_NOT_FOUND, `Resource not found: "${uri}" is not a platform:// resource URI`, { uri });
    const provider = this.providers.find((r) => r.kind === parsed.kind);
    if (!provider) throw new RpcError(RPC.RESOURCE_NOT_FOUND, 'Resource not found', { uri });
    checkAccess(actor(ctx), this.gateOf(provider));
    let content;
    try {
      content = await provider.read(ctx, parsed.id);
    } catch (err) {
      if (err instanceof AppError && (err.status === 404 || err.status === 400)) content = null;
      else throw err;
    }
    if (!content) throw new RpcError(RPC.RESOURCE_NOT_FOUND, 'Resource not found', { uri });
    return { contents: [content] };
  }
}
