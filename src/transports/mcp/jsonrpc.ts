/** JSON-RPC 2.0 message shapes and error codes as MCP uses them (MCP 2025-11-25, "Base protocol"). */

export type JsonRpcId = string | number | null;

export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** MCP: resources/read of a URI that names nothing the caller can see. */
  RESOURCE_NOT_FOUND: -32002,
  /** Transport-level failures (session, protocol version, Accept), as the SDK's own server reports them. */
  TRANSPORT_ERROR: -32000,
  SESSION_NOT_FOUND: -32001,
} as const;

export interface JsonRpcRequest { jsonrpc: '2.0'; id: JsonRpcId; method: string; params?: Record<string, unknown> }
export interface JsonRpcNotification { jsonrpc: '2.0'; method: string; params?: Record<string, unknown> }
export interface JsonRpcErrorObject { code: number; message: string; data?: unknown }
export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: unknown }
  | { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcErrorObject };

/** A protocol-level failure: becomes a JSON-RPC error object (HTTP 200). */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = 'RpcError';
  }
}

export const rpcResult = (id: JsonRpcId, result: unknown): JsonRpcResponse => ({ jsonrpc: '2.0', id, result });
export const rpcError = (id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse =>
  ({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });

/** What one POST body turned out to be. */
export type Classified =
  | { kind: 'request'; msg: JsonRpcRequest }
  | { kind: 'notification'; msg: JsonRpcNotification }
  /** A JSON-RPC response or error sent by the client (we never send requests, so it is acknowledged and ignored). */
  | { kind: 'response' }
  | { kind: 'invalid'; id: JsonRpcId; error: JsonRpcErrorObject };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// An integer id beyond 2^53 cannot be echoed exactly (JSON.parse rounds it), and JSON-RPC requires the same id back.
const validId = (v: unknown): v is JsonRpcId => v === null || typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));

/**
 * Sorts a parsed body into request, notification, client response or invalid (-32600), keeping the id of an
 * invalid request when it is usable so the client can match the error. Batches (arrays) are refused here:
 * MCP 2025-11-25 removed JSON-RPC batching (docs/mcp.md).
 */
export function classify(body: unknown): Classified {
  if (Array.isArray(body)) {
    return { kind: 'invalid', id: null, error: { code: RPC.INVALID_REQUEST, message: 'Invalid Request: batches are not supported (MCP 2025-11-25 removed JSON-RPC batching); send one message per POST' } };
  }
  if (!isPlainObject(body)) {
    return { kind: 'invalid', id: null, error: { code: RPC.INVALID_REQUEST, message: 'Invalid Request: the body must be a JSON-RPC 2.0 object' } };
  }
  const hasId = Object.prototype.hasOwnProperty.call(body, 'id');
  const id = hasId && validId(body.id) ? body.id : null;
  const bad = (why: string): Classified => ({ kind: 'invalid', id, error: { code: RPC.INVALID_REQUEST, message: `Invalid Request: ${why}` } });
  if (body.jsonrpc !== '2.0') return bad('"jsonrpc" must be "2.0"');
  if (hasId && !validId(body.id)) return bad('"id" must be a string, an integer (at most 2^53 - 1 in size) or null');
  if (!('method' in body)) {
    if (hasId && ('result' in body || 'error' in body)) return { kind: 'response' };
    return bad('"method" is required');
  }
  if (typeof body.method !== 'string' || body.method === '') return bad('"method" must be a non-empty string');
  // A request whose params are not an object is well formed but its params are not usable: -32602, as for an array
  // (spec 4.2: "params object"; docs/mcp.md).
  if ('params' in body && body.params !== undefined && (typeof body.params !== 'object' || body.params === null)) {
    return { kind: 'invalid', id, error: { code: RPC.INVALID_PARAMS, message: `Invalid params: "params" of ${body.method} must be an object`, data: { field: 'params' } } };
  }
  if (!hasId) return { kind: 'notification', msg: body as unknown as JsonRpcNotification };
  return { kind: 'request', msg: body as unknown as JsonRpcRequest };
}
