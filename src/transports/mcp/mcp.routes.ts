import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import sjson from 'secure-json-parse';
import { AppError } from '../../core/errors.js';
import { ErrorEnvelope } from '../../core/http/envelope.js';
import { jsonBodyText, jsonDepthExceeds, tooDeep } from '../../core/http/json-parser.js';
import { bearerToken } from '../../core/http/guard.js';
import { RPC, classify, rpcError, type JsonRpcId, type JsonRpcResponse } from './jsonrpc.js';
import { McpDispatcher, SUPPORTED_PROTOCOL_VERSIONS } from './dispatcher.js';
import { ToolRegistry } from './registry.js';
import { TOOL_SETS } from './tools/index.js';
import { RESOURCE_PROVIDERS } from './resources/index.js';
import { endSession, findSession, openSession, purgeIdleSessions } from './sessions.js';
import { RETENTION_EVERY_MS } from '../../core/retention.js';
import { DOCUMENT_BODY_LIMIT } from '../../areas/documents/documents.schemas.js';

/** A body that is not JSON: answered with JSON-RPC -32700 in HTTP 200, not with the REST 400. */
class ParseFailure { constructor(readonly reason: string) {} }
/**
 * Valid JSON holding a `__proto__` or `constructor.prototype` key: the message (parsed plainly, never merged into
 * anything) goes through the usual checks, and a request is then refused with -32602 and its id.
 */
class ForbiddenKey { constructor(readonly message: unknown, readonly reason: string) {} }

export const MCP_PATH = '/v1/mcp';
export const METADATA_PATH = '/.well-known/oauth-protected-resource/v1/mcp';

type ReplyMode = 'json' | 'sse';

/**
 * Accept negotiation (Streamable HTTP): JSON whenever the client takes application/json (or sends no Accept,
 * or a wildcard); a single SSE event when it takes only text/event-stream; otherwise 406.
 */
export function replyMode(accept: string | undefined): ReplyMode | null {
  if (!accept || !accept.trim()) return 'json';
  const ranges = accept.split(',').map((r) => {
    const [type, ...ps] = r.trim().toLowerCase().split(';').map((s) => s.trim());
    const q = ps.find((x) => x.startsWith('q='));
    return { type, q: q ? Number(q.slice(2)) : 1 };
  }).filter((r) => r.q > 0);
  const takes = (...types: string[]) => ranges.some((r) => types.includes(r.type));
  if (takes('application/json', 'application/*', '*/*')) return 'json';
  if (takes('text/event-stream', 'text/*')) return 'sse';
  return null;
}

function send(reply: FastifyReply, status: number, body: unknown, mode: ReplyMode = 'json') {
  const text = JSON.stringify(body);
  if (mode === 'sse') {
    return reply.code(status).header('Content-Type', 'text/event-stream').header('Cache-Control', 'no-cache')
      .send(`event: message\ndata: ${text}\n\n`);
  }
  return reply.code(status).type('application/json').send(text);
}

/**
 * Transport-level refusals (MCP Streamable HTTP): an HTTP status with a JSON-RPC error body, carrying the request's id
 * when the message was read (so the client can match it), else null.
 */
const transportError = (reply: FastifyReply, status: number, code: number, message: string, id: JsonRpcId = null) =>
  send(reply, status, rpcError(id, code, message));

/** A transport refusal's body, for the OpenAPI document: a JSON-RPC error response, not the REST envelope. */
const TransportErrorBody = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: Type.Union([Type.String(), Type.Integer(), Type.Null()], { description: "The request's id when the message was read, else null" }),
  error: Type.Object({ code: Type.Integer({ description: '-32000 transport error, -32001 session not found' }), message: Type.String() }),
});
/** Statuses the transport answers with a JSON-RPC error body; others (401, 403, 413, 415, 429, 503) use the envelope. */
const transportRefusal = (description: string) => Type.Union([TransportErrorBody, ErrorEnvelope], { description });

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

function baseUrl(app: FastifyInstance, req: FastifyRequest): string {
  return (app.platform.config.publicBaseUrl ?? `${req.protocol}://${req.host}`).replace(/\/+$/, '');
}

/**
 * Whether the request's Host can vouch for a same-origin call. With PUBLIC_BASE_URL the origin compared is that
 * configured one; without it, only a loopback Host: any other Host is whatever name the browser used, and a page of
 * a rebound name (evil.example resolving to this server) is "same-origin" with itself (DNS rebinding). Browsers at
 * another address need PUBLIC_BASE_URL or CORS_ORIGINS.
 */
function hostIsTrusted(app: FastifyInstance, req: FastifyRequest): boolean {
  if (app.platform.config.publicBaseUrl) return true;
  const host = req.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A credential that is not JWT-shaped: a Bearer token without three segments, or another scheme (Basic ...). */
function bearerIsNotJwt(req: FastifyRequest): boolean {
  try {
    return bearerToken(header(req, 'authorization')).split('.').length !== 3;
  } catch {
    return true; // another scheme (Basic ...): no session token either, so a bad key as far as MCP's codes go
  }
}

/** MCP over Streamable HTTP at POST /v1/mcp (spec 4.2; MCP 2025-11-25), and its protected-resource metadata. */
export default async function mcpTransport(app: FastifyInstance) {
  let dispatcher: McpDispatcher | null = null;
  let registry: ToolRegistry | null = null;
  // Built once every area has registered its routes: tools take their needs and schemas from them.
  const ensure = () => {
    if (!dispatcher) {
      registry = new ToolRegistry(TOOL_SETS.flat(), app.routeList);
      dispatcher = new McpDispatcher(registry, RESOURCE_PROVIDERS);
    }
    return { dispatcher, registry: registry! };
  };
  app.addHook('onReady', async () => { ensure(); });
  app.platform.jobs.every('mcp.sessions-retention', RETENTION_EVERY_MS, async () => { await purgeIdleSessions(app.platform.db.sys); });

  // This plugin's own JSON parser: unparsable JSON must become -32700, not the core's 400 INVALID_JSON.
  const maxDepth = app.platform.config.jsonMaxDepth;
  app.removeAllContentTypeParsers();
  // Fastify tests a RegExp against the whole header with its parameters ("application/json; charset=utf-8").
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(;.*)?$/, { parseAs: 'buffer' }, (req, body, done) => {
    const text = jsonBodyText(req, body as Buffer);
    if (text instanceof AppError) {
      // Bytes that are not UTF-8 are a JSON-RPC parse error (-32700); another declared charset the HTTP 415.
      if (text.code === 'INVALID_JSON') return done(null, new ParseFailure(text.message));
      return done(text, undefined);
    }
    if (text.trim() === '') return done(null, new ParseFailure('empty body'));
    if (jsonDepthExceeds(text, maxDepth)) return done(tooDeep(req, maxDepth), undefined);
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (err) {
      // secure-json-parse also refuses valid JSON (prototype keys): that is bad params of a request whose id the
      // client must get back, not a parse error (REST answers it 400 VALIDATION_ERROR, not INVALID_JSON).
      let message: unknown;
      try { message = JSON.parse(text); } catch { return done(null, new ParseFailure((err as Error).message)); }
      done(null, new ForbiddenKey(message, (err as Error).message));
    }
  });

  // Spec 4.2 names the MCP 401s: AUTH_REQUIRED (no key) or INVALID_API_KEY. A bearer token that is neither a
  // svc_live_ key nor JWT-shaped is a key gone wrong here (the core calls it AUTH_TOKEN_INVALID, right for REST);
  // a JWT-shaped one was a session attempt and keeps the token codes.
  const coreErrorHandler = app.errorHandler;
  app.setErrorHandler(function (err, req, reply) {
    const notAKey = err instanceof AppError && err.code === 'AUTH_TOKEN_INVALID' && bearerIsNotJwt(req);
    return coreErrorHandler.call(this, notAKey ? new AppError('INVALID_API_KEY', 'API key is malformed; expected svc_live_<8-char prefix>_<secret>') : err, req, reply);
  });

  // MCP authorization: a 401 names the protected-resource metadata (RFC 9728 section 5.1).
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode === 401) reply.header('WWW-Authenticate', `Bearer resource_metadata="${baseUrl(app, req)}${METADATA_PATH}"`);
    return payload;
  });

  /** Browsers may reach the endpoint only from allowlisted origins (DNS-rebinding protection, MCP transport rule). */
  const checkOrigin = (req: FastifyRequest) => {
    const origin = header(req, 'origin');
    if (!origin) return;
    const allowed = app.platform.config.corsOrigins;
    if (allowed.includes('*') || allowed.includes(origin) || (origin === baseUrl(app, req) && hostIsTrusted(app, req))) return;
    throw new AppError('FORBIDDEN', `Origin "${origin}" is not allowed to call the MCP endpoint`);
  };

  // The guard runs checkOrigin before the credential, so a disallowed Origin is 403 even without one.
  const mcpConfig = { rateLimit: { failClosed: true }, protocol: 'jsonrpc' as const, originCheck: checkOrigin };

  app.post(MCP_PATH, {
    // Tools take what the REST routes take, document content included (up to 10 MiB of UTF-8, escaped in JSON).
    bodyLimit: DOCUMENT_BODY_LIMIT,
    config: { ...mcpConfig, responseHeaders: { 'MCP-Session-Id': 'The session: set by initialize, echoed on requests that name one' } },
    schema: {
      summary: 'MCP JSON-RPC 2.0 endpoint (Streamable HTTP, protocol 2025-11-25)',
      description: 'One JSON-RPC message per POST: initialize, ping, tools/list, tools/call, resources/list, resources/templates/list, resources/read; notifications get 202. JSON-RPC errors are answered inside HTTP 200. See docs/mcp.md.',
      headers: Type.Object({
        'mcp-session-id': Type.Optional(Type.String({ description: 'Session from initialize (optional: the endpoint also works without a session)' })),
        'mcp-protocol-version': Type.Optional(Type.String({ description: 'Negotiated protocol version, e.g. 2025-11-25' })),
      }),
      body: Type.Unknown({ description: 'A JSON-RPC 2.0 request or notification' }),
      response: {
        200: {
          description: 'The JSON-RPC response, results and JSON-RPC errors alike: application/json, or one text/event-stream event (`event: message`) when the client accepts only SSE',
          content: { 'application/json': { schema: Type.Unknown() }, 'text/event-stream': { schema: Type.String() } },
        },
        202: Type.Null({ description: 'Notification or response accepted; no body' }),
        400: transportRefusal('Unsupported or mismatched MCP-Protocol-Version (JSON-RPC error -32000)'),
        404: transportRefusal('Unknown or ended MCP-Session-Id (JSON-RPC error -32001): send initialize again'),
        406: transportRefusal('The client accepts neither application/json nor text/event-stream (JSON-RPC error -32000)'),
      },
    },
  }, async (req, reply) => {
    const readable = !(req.body instanceof ParseFailure) && req.body !== undefined;
    const forbidden = req.body instanceof ForbiddenKey ? req.body : null;
    const msg = readable ? classify(forbidden ? forbidden.message : req.body) : null;
    // The request's id in every answer once the message could be read (docs/mcp.md), the 406 included.
    const id = msg?.kind === 'request' ? msg.msg.id : null;
    const mode = replyMode(header(req, 'accept'));
    if (!mode) return transportError(reply, 406, RPC.TRANSPORT_ERROR, 'Not Acceptable: the client must accept application/json or text/event-stream', id);
    const { dispatcher } = ensure();

    if (!msg) {
      return send(reply, 200, rpcError(null, RPC.PARSE_ERROR, `Parse error: ${req.body instanceof ParseFailure ? req.body.reason : 'empty body'}`), mode);
    }
    const isInitialize = msg.kind === 'request' && msg.msg.method === 'initialize';

    // Session and version headers are checked on everything but initialize (which starts a new session).
    if (!isInitialize) {
      const version = header(req, 'mcp-protocol-version');
      if (version !== undefined && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
        return transportError(reply, 400, RPC.TRANSPORT_ERROR, `Bad Request: unsupported MCP-Protocol-Version "${version}" (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`, id);
      }
      const sessionId = header(req, 'mcp-session-id');
      if (sessionId !== undefined) {
        const session = await findSession(req.ctx, sessionId);
        if (!session) return transportError(reply, 404, RPC.SESSION_NOT_FOUND, 'Session not found: it is unknown or has ended; send initialize again without MCP-Session-Id', id);
        if (version !== undefined && version !== session.protocol_version) {
          return transportError(reply, 400, RPC.TRANSPORT_ERROR, `Bad Request: MCP-Protocol-Version "${version}" differs from the session's negotiated "${session.protocol_version}"`, id);
        }
        reply.header('MCP-Session-Id', session.id);
      }
    }

    if (msg.kind === 'invalid') return send(reply, 200, rpcError(msg.id, msg.error.code, msg.error.message, msg.error.data), mode);
    if (msg.kind === 'notification' || msg.kind === 'response') return reply.code(202).send();
    if (forbidden) {
      return send(reply, 200, rpcError(msg.msg.id, RPC.INVALID_PARAMS, `Invalid params: ${forbidden.reason} ("__proto__" and "constructor.prototype" keys are refused)`), mode);
    }

    const response: JsonRpcResponse = await dispatcher.handle(req.ctx, msg.msg, {
      log: req.log,
      onInitialize: async ({ protocolVersion, clientInfo }) => {
        const session = await openSession(req.ctx, { protocolVersion, clientName: clientInfo?.name, clientVersion: clientInfo?.version });
        reply.header('MCP-Session-Id', session.id);
      },
    });
    return send(reply, 200, response, mode);
  });

  // No server-initiated stream: the transport's GET answers 405 (clients then work by POST alone).
  // Hidden from OpenAPI: it has no success response to describe.
  // The refusal is an HTTP one (no JSON-RPC message was sent), so it is in the error envelope of part 7.
  app.get(MCP_PATH, { config: mcpConfig, schema: { summary: 'MCP server-to-client stream (not offered: 405)', hide: true } }, async () => {
    throw new AppError('METHOD_NOT_ALLOWED', 'This server offers no SSE stream on GET; POST JSON-RPC messages to /v1/mcp instead', undefined,
      { headers: { Allow: 'POST, DELETE' } });
  });

  app.delete(MCP_PATH, {
    config: mcpConfig,
    schema: {
      summary: 'End an MCP session',
      headers: Type.Object({ 'mcp-session-id': Type.Optional(Type.String()) }),
      response: {
        204: Type.Null({ description: 'Session ended' }),
        400: transportRefusal('No MCP-Session-Id header (JSON-RPC error -32000)'),
        404: transportRefusal('Unknown or already ended session (JSON-RPC error -32001)'),
      },
    },
  }, async (req, reply) => {
    const sessionId = header(req, 'mcp-session-id');
    if (!sessionId) return transportError(reply, 400, RPC.TRANSPORT_ERROR, 'Bad Request: MCP-Session-Id header is required');
    if (!(await endSession(req.ctx, sessionId))) return transportError(reply, 404, RPC.SESSION_NOT_FOUND, 'Session not found: it is unknown or has already ended');
    return reply.code(204).send();
  });

  app.get(METADATA_PATH, {
    config: { auth: 'public' },
    schema: {
      summary: 'OAuth 2.0 protected-resource metadata of the MCP endpoint (RFC 9728)',
      response: {
        200: Type.Object({
          resource: Type.String(), authorization_servers: Type.Array(Type.String()), bearer_methods_supported: Type.Array(Type.String()),
          scopes_supported: Type.Array(Type.String()), resource_name: Type.String(), resource_documentation: Type.String(),
        }),
      },
    },
  }, async (req, reply) => {
    const base = baseUrl(app, req);
    const { registry } = ensure();
    const coarse = registry.all().map((t) => t.needs.scope).filter((s): s is string => !!s);
    reply.header('Cache-Control', 'public, max-age=300');
    return {
      resource: `${base}${MCP_PATH}`,
      // Credentials are API keys and session tokens issued by the platform itself; no OAuth server is offered.
      authorization_servers: [],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp:*', ...registry.scopes(), ...[...new Set(coarse)].sort()],
      resource_name: 'Platform API MCP server',
      resource_documentation: `${base}/docs`,
    };
  });
}
