import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Platform } from './core/context.js';
import { uuidv7 } from './core/ids.js';
import { installValidators } from './core/http/validation.js';
import { installJsonParser } from './core/http/json-parser.js';
import { frameworkErrorHandler, installErrorHandler } from './core/http/error-handler.js';
import { installGuard } from './core/http/guard.js';
import { installOpenApi, registerRouteDefaults, type RegisteredRoute } from './core/http/openapi.js';
import { serializerSchemaController } from './core/http/serialization.js';
import { lazyChildLogger } from './core/http/lazy-child-logger.js';
import { clientErrorHandler } from './core/http/client-error.js';
import { AREAS } from './areas/index.js';
import { redactUrl } from './core/http/redact-url.js';

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    platform: Platform;
    /** Every registered route with its needs; the route-wide safety tests iterate over it. */
    routeList: RegisteredRoute[];
  }
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the HTTP app: core plugins first, then the explicit list of areas (no autoload). */
export async function buildApp(platform: Platform, opts: { logger?: FastifyServerOptions['logger']; loggerInstance?: FastifyServerOptions['loggerInstance'] } = {}): Promise<App> {
  const { config } = platform;
  const app = Fastify({
    ...(opts.loggerInstance ? { loggerInstance: opts.loggerInstance } : { logger: opts.logger ?? { level: config.logLevel } }),
    bodyLimit: config.bodyLimitBytes,
    // One line per request is ours (onResponse below: method, url, status, ms, request id); Fastify's own
    // "incoming request" / "request completed" pair would log each request two more times.
    logController: new LogController({ disableRequestLogging: true }),
    // HEAD answers every GET route with its status and headers, no body (monitors and link checkers use it).
    exposeHeadRoutes: true,
    childLoggerFactory: lazyChildLogger,
    // A number of proxies in front: the connection's peer and the X-Forwarded-For entries the other N-1 appended are
    // theirs, the next one the client's (proxy-addr counts hops from the connection).
    trustProxy: typeof config.trustProxy === 'number' ? ((_addr: string, hop: number) => hop < (config.trustProxy as number)) : config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : uuidv7();
    },
    // Off: Fastify's own 503 body is not the envelope; the guard answers requests arriving during the drain.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Every path parameter reaches its route's own rule (a long id is INVALID_ID_FORMAT, a reserved route's 501 stays
    // 501): the request line already fits in Node's 16 KiB header limit (longer is 431), so this limit never cuts in
    // first. The router's limit guards regular-expression parameters, which no route uses.
    routerOptions: { maxParamLength: 16_384 },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    schemaController: serializerSchemaController(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('platform', platform);
  installValidators(app);
  installJsonParser(app, config.jsonMaxDepth);
  installErrorHandler(app);
  registerRouteDefaults(app);
  await installOpenApi(app);
  if ((app.log as unknown as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.('info') ?? true) {
    app.addHook('onResponse', async (req, reply) => {
      req.log.info({ method: req.method, url: redactUrl(req.url), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
    });
  }
  // Without an allowlist no browser origin may call, and server-to-server calls need no CORS: skip the plugin.
  if (config.corsOrigins.length > 0) await app.register(cors, {
    // Browsers get CORS headers only for allowlisted origins; calls without Origin (servers) are untouched.
    origin: (origin, cb) => cb(null, origin ? config.corsOrigins.includes(origin) || config.corsOrigins.includes('*') : false),
    credentials: false,
    // The plugin's default (GET,HEAD,POST) would make browsers refuse every PUT, PATCH and DELETE of the API.
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // A preflight goes on through the guard (public: X-Request-Id and the X-RateLimit-* headers, like every response)
    // to the plugin's catch-all OPTIONS route, which answers 204 (see openapi.ts). An OPTIONS without
    // Access-Control-Request-Method is answered the same way rather than with the plugin's text/plain 400.
    preflightContinue: true,
    strictPreflight: false,
    exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'Deprecation', 'ETag', 'MCP-Session-Id'],
    maxAge: 600,
  });
  installGuard(app, platform);
  for (const area of AREAS) await app.register(area);
  // Areas registered their job handlers and periodic tasks while loading; start running them.
  app.addHook('onReady', async () => { if (config.jobPollMs > 0) platform.jobs.start(); });
  app.addHook('onClose', async () => { await platform.jobs.stop(); });
  return app as unknown as App;
}
