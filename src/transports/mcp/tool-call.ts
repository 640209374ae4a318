import pg from 'pg';
import { AppError } from '../../core/errors.js';
import { assertStorableText } from '../../core/text.js';
import { databaseRefusal } from '../../core/http/error-handler.js';
import { databaseUnavailable, databaseUnavailableCause } from '../../core/db/unavailable.js';
import { actor, type ServiceContext } from '../../core/context.js';
import { RPC, RpcError } from './jsonrpc.js';
import { checkAccess } from './access.js';
import { describeArgErrors, type Tool, type ToolRegistry } from './registry.js';

export interface Logger { error(o: unknown, m?: string): void; warn(o: unknown, m?: string): void }

/** MCP CallToolResult: text for models, the same value as structuredContent for programs. */
export interface ToolResult { content: Array<{ type: 'text'; text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean }

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function toolResult(value: unknown): ToolResult {
  const structured = isPlainObject(value) ? value : Array.isArray(value) ? { items: value } : { result: value ?? null };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool execution error (MCP: reported in the result with isError, so the model can read and correct it). */
export function toolError(err: AppError): ToolResult {
  const error = { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
  return { content: [{ type: 'text', text: `${err.code}: ${err.message}` }], structuredContent: { error }, isError: true };
}

const ACCESS_STATUSES = new Set([401, 402, 403]);

/**
 * Maps a failure to a JSON-RPC error. Access refusals (401/402/403: scope, role, permission, feature,
 * subscription) are -32603 with the platform's message, which names what is missing, and the platform
 * code in `data`; unexpected failures are -32603 with a sanitized message.
 */
export function toRpcError(err: unknown, ctx: ServiceContext, log: Logger): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof AppError) {
    if (err.status >= 500) log.warn({ code: err.code, ...(typeof err.cause === 'string' ? { cause: err.cause } : {}) }, err.message);
    return new RpcError(RPC.INTERNAL_ERROR, err.message, { code: err.code, status: err.status, ...(err.details ? { details: err.details } : {}), ...(err.status >= 500 ? { requestId: ctx.requestId } : {}) });
  }
  // As on REST: a database that cannot be reached is SERVICE_UNAVAILABLE (503), logged once with its cause, no stack.
  const down = databaseUnavailableCause(err);
  if (down) return toRpcError(databaseUnavailable(down), ctx, log);
  log.error({ err }, 'MCP request failed');
  const isDb = err instanceof pg.DatabaseError;
  return new RpcError(RPC.INTERNAL_ERROR, isDb ? 'A database error occurred; retry with backoff' : 'Internal error; retry with backoff',
    { code: isDb ? 'DATABASE_ERROR' : 'INTERNAL_ERROR', status: 500, requestId: ctx.requestId });
}

/**
 * Runs one platform tool: the access check first (identical for tools/call and call_tool), then the
 * arguments against the tool's schema (-32602), then the service. Service refusals that are not about
 * access (404, 409, 400 from the rules) come back as isError results.
 */
export async function runTool(registry: ToolRegistry, ctx: ServiceContext, name: string, args: unknown, log: Logger): Promise<ToolResult> {
  const tool: Tool | undefined = registry.get(name);
  if (!tool) throw new RpcError(RPC.INVALID_PARAMS, `Unknown tool "${name}"; use find_tools to search the catalogue`, { name });
  if (args !== undefined && !isPlainObject(args)) throw new RpcError(RPC.INVALID_PARAMS, `Arguments of "${name}" must be an object`, { name });
  try {
    checkAccess(actor(ctx), tool);
  } catch (err) {
    throw toRpcError(err, ctx, log);
  }
  const input = structuredClone(args ?? {}) as Record<string, unknown>;
  /** camelCase name -> the snake_case spelling the caller sent, so that an error names what was sent. */
  const sentAs = new Map<string, string>();
  for (const [snake, camel] of Object.entries(tool.argAliases ?? {})) {
    if (Object.prototype.hasOwnProperty.call(input, snake) && !Object.prototype.hasOwnProperty.call(input, camel)) {
      input[camel] = input[snake];
      delete input[snake];
      sentAs.set(camel, snake);
    }
  }
  if (!tool.validate(input)) {
    let { message, field } = describeArgErrors(tool.validate.errors, tool.inputSchema);
    const top = field.split('.')[0];
    const sent = sentAs.get(top);
    if (sent) {
      const renamed = sent + field.slice(top.length);
      message = message.split(`"${field}"`).join(`"${renamed}"`);
      field = renamed;
    }
    throw new RpcError(RPC.INVALID_PARAMS, `Invalid arguments for "${name}": ${message}`, { tool: name, field, errors: tool.validate.errors });
  }
  try {
    assertStorableText(input, { nul: true }); // as the REST body parser does: 400 VALIDATION_ERROR, a tool error the model can fix
    return toolResult(await tool.def.run(ctx, input));
  } catch (thrown) {
    // The database's refusals (a row deleted meanwhile, a deadlock, unstorable text) are answers, as on REST.
    const err = thrown instanceof pg.DatabaseError ? databaseRefusal(thrown) ?? thrown : thrown;
    if (err instanceof AppError && err.status < 500 && !ACCESS_STATUSES.has(err.status)) return toolError(err);
    throw toRpcError(err, ctx, log);
  }
}
