import { SERVER_VERSION } from '../version.js';
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorEnvelope } from './envelope.js';
import type { RouteNeeds } from './route-config.js';
import { emptyBodyIsObject, refuseBody, takesNoBody } from './body-hooks.js';
import { documentedQuery } from './query-values.js';

export interface RegisteredRoute { method: string; url: string; config: RouteNeeds; schema: Record<string, unknown> | undefined; bodyLimit?: number }

const isDocsRoute = (url: string) => url === '/docs' || url.startsWith('/docs/') || url === '/v1/openapi.json';

function operationId(method: string, url: string): string {
  const parts = url.split('/').filter(Boolean).filter((p) => p !== 'v1')
    .map((p) => p.startsWith(':') ? 'By' + p.slice(1) : p)
    .map((p) => p.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : '')))
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1));
  return method.toLowerCase() + parts.join('');
}

/**
 * Gives every route an operationId, summary, tag and the error envelope for 4XX/5XX, and records it; a route whose
 * body may be left out (`bodyOptional`) reads no body as `{}`.
 */
export function registerRouteDefaults(app: FastifyInstance): void {
  app.decorate('routeList', [] as RegisteredRoute[]);
  app.addHook('onRoute', (route: RouteOptions) => {
    route.config = { ...(route.config ?? {}) } as RouteOptions['config'];
    const needs = route.config as RouteNeeds;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.url === '*' && methods.every((m) => m === 'OPTIONS')) {
      // @fastify/cors's catch-all preflight route: browsers send preflights without credentials. Its handler answers
      // an accepted preflight with an empty 200 (preflightContinue, app.ts); 204 is what the plugin itself answers
      // otherwise. A refused one goes to the 404 handler, which sets its own status.
      needs.auth = 'public';
      const handler = route.handler;
      route.handler = function (this: FastifyInstance, req, reply) { reply.code(204); return handler.call(this, req, reply); };
      return;
    }
    // The HEAD twin Fastify makes of every GET (exposeHeadRoutes, app.ts) has the GET's needs (the guard applies them)
    // and no body; it is not a route of its own in the OpenAPI document or the route-wide safety tests.
    const headTwin = methods.every((m) => m === 'HEAD');
    if (isDocsRoute(route.url)) {
      needs.auth = 'public';
      needs.rateLimit = needs.rateLimit ?? {};
      if (route.url !== '/v1/openapi.json') return;
    }
    if (headTwin) return;
    // A body that may be left out is read as `{}` before validation (the JSON parser lets such a body be empty).
    if (needs.bodyOptional) route.preValidation = [emptyBodyIsObject, ...[route.preValidation ?? []].flat()];
    // A write without a body refuses fields, like an unknown key of a strict body (spec part 7): the caller learns its
    // input is ignored (`DELETE /v1/organizations/current` with `{"confirm": true}` would otherwise just delete).
    if (takesNoBody(methods, route.schema as { body?: unknown } | undefined, needs)) route.preValidation = [refuseBody, ...[route.preValidation ?? []].flat()];
    // Copies: areas may share one schema object between routes (aliases); defaults must not leak from one to the other.
    const schema = (route.schema = { ...(route.schema ?? {}) }) as Record<string, unknown>;
    schema.operationId ??= operationId(methods[0], route.url);
    schema.summary ??= `${methods[0]} ${route.url}`;
    const seg = route.url.split('/').filter(Boolean);
    schema.tags ??= [seg[0] === 'v1' ? (seg[1] ?? 'platform') : (seg[0] ?? 'platform')];
    const response = (schema.response = { ...((schema.response as object | undefined) ?? {}) }) as Record<string, unknown>;
    response['4XX'] ??= ErrorEnvelope;
    response['5XX'] ??= ErrorEnvelope;
    for (const m of methods) app.routeList.push({ method: m, url: route.url, config: needs, schema, bodyLimit: route.bodyLimit });
  });
}

type Header = { type: string; description: string };
const integerHeader = (description: string): Header => ({ type: 'integer', description });

/** What every answer carries (part 8: the rate-limit headers on every response; the request id for support). */
const EVERY_ANSWER: Record<string, Header> = {
  'X-Request-Id': { type: 'string', description: 'This request\'s id, also in the server\'s log lines and in 5xx error details' },
  'X-RateLimit-Limit': integerHeader('Requests allowed per window for this credential (or address) and route'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window'),
  'X-RateLimit-Reset': integerHeader('When the window ends, in Unix seconds'),
};
const RETRY_AFTER: Record<string, Header> = { 'Retry-After': integerHeader('Seconds to wait before retrying: on 429 and 503') };
/** Spec 9: a legacy API key (no explicit scopes) is told so on every answer, whatever the route. */
const LEGACY_KEY: Record<string, Header> = {
  Deprecation: { type: 'string', description: 'Only when the request carried a legacy API key (no explicit scopes): RFC 9745 date "@1767225600" (2026-01-01); create a key with scopes' },
};
/** A deprecated route (RouteNeeds.deprecatedBy) says so on every answer and names its successor. */
const deprecatedRoute = (successor: string): Record<string, Header> => ({
  Deprecation: { type: 'string', description: 'RFC 9745 date "@1767225600" (2026-01-01): this route is deprecated' },
  Link: { type: 'string', description: `<${successor}>; rel="successor-version": the route to use instead` },
});

/**
 * The route's responses with the headers they carry (for the document only; the route's own schemas are not touched):
 * every answer the EVERY_ANSWER headers and the deprecation ones, error answers Retry-After, success answers the route's
 * `responseHeaders`.
 */
function withResponseHeaders(response: Record<string, unknown> | undefined, needs: RouteNeeds): Record<string, unknown> | undefined {
  if (!response) return response;
  const own = Object.fromEntries(Object.entries(needs.responseHeaders ?? {}).map(([name, description]) => [name, { type: 'string', description }]));
  const deprecation = needs.deprecatedBy ? deprecatedRoute(needs.deprecatedBy) : LEGACY_KEY;
  return Object.fromEntries(Object.entries(response).map(([status, body]) => {
    const error = /^[45]/.test(status);
    const headers = { ...EVERY_ANSWER, ...deprecation, ...(error ? RETRY_AFTER : own) };
    return [status, { ...(body as object), headers }];
  }));
}

/** OpenAPI 3.1 at GET /v1/openapi.json and an interactive reference at /docs. */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Platform API', version: SERVER_VERSION,
        description: 'Multi-tenant SaaS platform API. Authenticate with `Authorization: Bearer <access token or svc_live_ API key>`. Errors use the envelope `{success:false,error:{code,message,details}}`.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Access token (EdDSA JWT) or API key svc_live_<prefix>_<secret>' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const needs = (route.config ?? {}) as RouteNeeds;
      const s = { ...(schema as Record<string, unknown>) };
      s.security = needs.auth !== 'public' ? [{ bearerAuth: [] }] : needs.bearerInHandler ? [{ bearerAuth: [] }, {}] : [];
      s.response = withResponseHeaders(s.response as Record<string, unknown> | undefined, needs);
      if (s.querystring) s.querystring = documentedQuery(s.querystring as Record<string, unknown>);
      if (needs.requiredQuery && s.querystring) {
        const q = s.querystring as { required?: string[] };
        s.querystring = { ...q, required: [...new Set([...(q.required ?? []), ...needs.requiredQuery])] };
      }
      // A raw (non-JSON) body has no schema to validate; the document still names its media types.
      if (!s.body && needs.accepts?.some((t) => t !== 'application/json')) {
        s.body = { type: 'string', format: 'binary' };
        s.consumes = needs.accepts;
      }
      return { schema: s as typeof schema, url };
    },
  });
  let document: Record<string, unknown> | undefined;
  app.get('/v1/openapi.json', { schema: { summary: 'This OpenAPI 3.1 document', response: { 200: { type: 'object', additionalProperties: true } } }, config: { auth: 'public' } },
    async () => (document ??= withDeclaredErrors(withDeprecatedParameters(withOptionalBodies(app.swagger() as unknown as Record<string, unknown>, app.routeList)), app.routeList)));
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true }, staticCSP: false });
}

/** A parameter whose schema says `deprecated` is a deprecated parameter (@fastify/swagger keeps it in the schema only). */
function withDeprecatedParameters(doc: Record<string, unknown>): Record<string, unknown> {
  type Parameter = { deprecated?: boolean; schema?: { deprecated?: boolean } };
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, { parameters?: Parameter[] }>>)) {
    for (const op of Object.values(item)) for (const param of op.parameters ?? []) if (param.schema?.deprecated) param.deprecated = true;
  }
  return doc;
}

/** @fastify/swagger marks every request body required; a route whose body may be left out (`bodyOptional`) says so. */
function withOptionalBodies(doc: Record<string, unknown>, routes: RegisteredRoute[]): Record<string, unknown> {
  const paths = doc.paths as Record<string, Record<string, { requestBody?: { required?: boolean } }>> | undefined;
  for (const r of routes) {
    if (!r.config.bodyOptional) continue;
    const op = paths?.[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
    if (op?.requestBody) op.requestBody.required = false;
  }
  return doc;
}

/** The statuses a route's declarations make possible, each with the codes it carries; null where it has none. */
function declaredErrors(r: RegisteredRoute): Record<string, string | null> {
  const needs = r.config;
  const schema = r.schema ?? {};
  const takesBody = Boolean(schema.body) || Boolean(needs.accepts?.length);
  const forbidden = [needs.scope || needs.rootOnly || needs.credentials || needs.originCheck ? 'FORBIDDEN' : '', needs.permission ? 'PERMISSION_DENIED' : '',
    needs.feature ? 'FEATURE_DISABLED' : '', needs.stepUp ? 'MFA_STEPUP_REQUIRED' : ''].filter(Boolean);
  return {
    400: takesBody || schema.querystring || schema.params ? 'Malformed input: VALIDATION_ERROR, INVALID_JSON, INVALID_ID_FORMAT or INVALID_PARAMETER; `details.field` names what to fix' : null,
    401: needs.auth !== 'public' || needs.bearerInHandler ? 'No credential (AUTH_REQUIRED), or one that is malformed, revoked or expired (AUTH_TOKEN_INVALID, AUTH_TOKEN_EXPIRED, INVALID_API_KEY)' : null,
    402: needs.subscription ? 'No active subscription: BILLING_SUBSCRIPTION_REQUIRED, _PAST_DUE or _CANCELLED' : null,
    403: forbidden.length ? `Not allowed: ${forbidden.join(', ')}` : null,
    404: r.url.includes(':') ? 'NOT_FOUND: no such resource, or one of another organization' : null,
    413: takesBody ? 'PAYLOAD_TOO_LARGE: the body is too large or nested too deep (`details.maxBytes`, `details.limit`)' : null,
    415: takesBody ? `UNSUPPORTED_MEDIA_TYPE: send ${(needs.accepts ?? ['application/json']).join(' or ')}` : null,
    429: needs.rateLimit !== false ? 'RATE_LIMIT_EXCEEDED: wait `Retry-After` seconds' : null,
    503: needs.rateLimit && needs.rateLimit.failClosed ? 'SERVICE_UNAVAILABLE: the rate limiter cannot answer (fail closed)' : null,
  };
}

/**
 * Each operation lists the error statuses its declarations make possible (a path id: 404; a body: 400, 413, 415; a
 * credential: 401; a scope, permission or feature: 403...), each naming its codes. Only the document: the routes keep
 * one envelope schema per class, so no serializer is compiled per status. What a service refuses on its own (409,
 * 422...) stays under `4XX`. Each distinct answer (status, codes, headers) is one entry of `components.responses`
 * that operations refer to: inline, they would double the document.
 */
function withDeclaredErrors(doc: Record<string, unknown>, routes: RegisteredRoute[]): Record<string, unknown> {
  const components = (doc.components ??= {}) as { schemas?: Record<string, unknown>; responses?: Record<string, unknown> };
  const { $id: _id, ...envelope } = ErrorEnvelope as typeof ErrorEnvelope & { $id?: string }; // named by its key, not a second $id
  components.schemas = { ...components.schemas, ErrorEnvelope: envelope };
  const responses = (components.responses ??= {});
  const names = new Map<string, string>();
  const paths = doc.paths as Record<string, Record<string, { responses?: Record<string, { headers?: unknown; $ref?: string }> }>> | undefined;
  for (const r of routes) {
    const op = paths?.[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
    if (!op?.responses) continue;
    for (const [status, description] of Object.entries(declaredErrors(r))) {
      if (!description || op.responses[status]) continue;
      const answer = { description, headers: op.responses['4XX']?.headers, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
      const key = JSON.stringify(answer);
      let name = names.get(key);
      if (!name) {
        const taken = [...names.values()].filter((n) => n.startsWith(`Error${status}`)).length;
        name = taken ? `Error${status}_${taken + 1}` : `Error${status}`;
        names.set(key, name);
        responses[name] = answer;
      }
      op.responses[status] = { $ref: `#/components/responses/${name}` };
    }
  }
  return doc;
}
