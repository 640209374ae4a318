import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { missingRow, pathTargetOf } from './path-rows.js';
import { closeAfterAnswer } from './upgrade-close.js';
import type { Platform, ServiceContext } from '../context.js';
import type { Principal } from '../auth/principal.js';
import { scopesAllow } from '../auth/permissions.js';
import type { RouteNeeds } from './route-config.js';
import type { RateLimitHit } from '../rate-limit.js';
import { unstorableTextProblem } from '../text.js';

export const STEP_UP_WINDOW_MS = 5 * 60 * 1000;
export const LEGACY_KEY_DEPRECATED_AT = '@1767225600';
/** When the deprecated routes and parameters of /v1 were deprecated (RFC 9745 date): with 1.0.0, as legacy keys. */
export const DEPRECATED_SINCE = LEGACY_KEY_DEPRECATED_AT;

function rateKey(req: FastifyRequest, needs: RouteNeeds, principal: Principal | null): string {
  const rl = needs.rateLimit || {};
  // No credential, or one that failed: per address. Not per presented token: a caller making up a new token for
  // every request would get a fresh budget each time and never be limited.
  if (rl.key === 'ip' || !principal) return `ip:${req.ip}`;
  if (rl.key === 'user') return `u:${principal.userId}`; // one budget per user, whichever organization or credential
  return principal.apiKeyId ? `k:${principal.apiKeyId}` : `s:${principal.sessionId}`;
}

type Hook = (err?: unknown) => void;

/**
 * Counts the request against its limit and sets the three headers; throws RATE_LIMIT_EXCEEDED. Returns a promise
 * only when the store answers with one (a networked store); the memory store keeps this synchronous.
 */
function applyRateLimit(platform: Platform, req: FastifyRequest, reply: FastifyReply, needs: RouteNeeds, principal: Principal | null, routeUrl: string | null): void | Promise<void> {
  if (needs.rateLimit === false) return;
  const rl = needs.rateLimit ?? {};
  const max = rl.max ?? platform.config.rateLimit.max;
  const windowMs = rl.windowMs ?? platform.config.rateLimit.windowMs;
  const unavailable = (err: unknown) => {
    if (rl.failClosed) throw new AppError('SERVICE_UNAVAILABLE', 'Rate limiter is unavailable; retry shortly', undefined, { headers: { 'Retry-After': '1' } });
    req.log.warn({ err }, 'rate limiter unavailable; request allowed');
  };
  let result: RateLimitHit | Promise<RateLimitHit>;
  try {
    // HEAD answers what GET would (same handler, same lookups), so it spends the GET's budget, not one of its own.
    const route = routeUrl === null ? '(no route)' : `${req.method === 'HEAD' ? 'GET' : req.method} ${routeUrl}`;
    result = platform.rateLimitStore.hit(`${route}|${rateKey(req, needs, principal)}`, windowMs);
  } catch (err) { return unavailable(err); }
  if (typeof (result as Promise<RateLimitHit>).then === 'function') return (result as Promise<RateLimitHit>).then((r) => limitReached(reply, r, max, windowMs), unavailable);
  result = result as RateLimitHit;
  limitReached(reply, result, max, windowMs);
}

function limitReached(reply: FastifyReply, result: RateLimitHit, max: number, windowMs: number): void {
  const remaining = Math.max(0, max - result.count);
  const resetSec = Math.ceil(result.resetAtMs / 1000);
  reply.header('X-RateLimit-Limit', max).header('X-RateLimit-Remaining', remaining).header('X-RateLimit-Reset', resetSec);
  if (result.count > max) {
    const retryAfter = Math.max(1, Math.ceil((result.resetAtMs - Date.now()) / 1000));
    throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit of ${max} requests per ${windowMs / 1000} s exceeded; retry after ${retryAfter} s`,
      { limit: max, retryAfterSeconds: retryAfter }, { headers: { 'Retry-After': String(retryAfter) } });
  }
}

function declaresOrgIdQuery(schema: unknown): boolean {
  const q = (schema as { querystring?: { properties?: Record<string, unknown> } } | undefined)?.querystring;
  return !!q?.properties && Object.hasOwn(q.properties, 'org_id');
}

/**
 * Rate limit of a response made before routing (Fastify's frameworkErrors: a badly encoded URL, an over-long path
 * parameter): it shares the unknown-route budget, so it carries the X-RateLimit-* headers like every response.
 */
export function rateLimitBeforeRouting(req: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  const platform = (req.server as unknown as { platform?: Platform }).platform;
  if (!platform) return;
  return applyRateLimit(platform, req, reply, {}, null, null);
}

/** Enforces the route's declared needs in the architecture's order: credential, then entitlements, then scope/role/permission. */
export function checkNeeds(needs: RouteNeeds, p: Principal): void {
  if (needs.credentials && !needs.credentials.includes(p.kind)) {
    throw new AppError('FORBIDDEN', p.kind === 'api_key' ? 'This route needs a signed-in user session; API keys cannot call it' : 'This route needs an API key');
  }
  if (needs.rootOnly) {
    const allowed = p.org.isRoot && (p.kind === 'user' ? p.role === 'super_admin'
      : p.role === 'super_admin' && (p.scopes === null || p.scopes.includes('admin')));
    if (!allowed) throw new AppError('FORBIDDEN', 'This route is for platform administrators of the root organization');
  }
  if (needs.feature && !p.org.features.includes(needs.feature)) {
    throw new AppError('FEATURE_DISABLED', `The "${needs.feature}" feature is not enabled for this organization`, { feature: needs.feature });
  }
  if (needs.subscription) {
    const s = p.org.subscriptionStatus;
    if (s === 'past_due') throw new AppError('BILLING_SUBSCRIPTION_PAST_DUE', 'The subscription payment is past due');
    if (s === 'cancelled') throw new AppError('BILLING_SUBSCRIPTION_CANCELLED', 'The subscription has been cancelled');
    if (s !== 'active') throw new AppError('BILLING_SUBSCRIPTION_REQUIRED', 'This feature needs an active subscription');
  }
  if (needs.scope && p.kind === 'api_key' && p.scopes !== null && !scopesAllow(p.scopes, needs.scope)) {
    throw new AppError('FORBIDDEN', `API key lacks the "${needs.scope}" scope`, { requiredScope: needs.scope });
  }
  if (needs.permission && !p.permissions.has(needs.permission)) {
    throw new AppError('PERMISSION_DENIED', `This action needs the "${needs.permission}" permission`, { permission: needs.permission });
  }
  if (needs.stepUp) {
    const fresh = p.kind === 'user' && p.mfaAt && Date.now() - Date.parse(p.mfaAt) <= STEP_UP_WINDOW_MS;
    if (!fresh) throw new AppError('MFA_STEPUP_REQUIRED', 'Confirm with your authenticator code at POST /v1/auth/mfa/step-up, then retry within 5 minutes');
  }
}

export function bearerToken(header: string | undefined): string {
  // "Bearer" with no token is a missing credential too (spec 7: AUTH_REQUIRED), not a malformed one.
  if (!header || /^\s*(Bearer)?\s*$/i.test(header)) throw new AppError('AUTH_REQUIRED', 'Authentication required: send "Authorization: Bearer <token>"');
  const m = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  if (!m) throw new AppError('AUTH_TOKEN_INVALID', 'Authorization header must be "Bearer <token>"');
  return m[1];
}

/**
 * The one core hook: credential, rate limit, then the route's declared needs. Written with a callback rather than
 * as an async function: with a cached credential and the memory rate-limit store every step is synchronous, and
 * the request goes on without a promise or a microtask hop (the authenticated path is the hottest in the server).
 */
export function installGuard(app: FastifyInstance, platform: Platform): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('ctx', null as unknown as ServiceContext);
  // Set when a graceful shutdown starts; requests still arriving on open connections get the envelope's 503.
  let draining = false;
  app.addHook('preClose', (done) => { draining = true; done(); });
  app.addHook('onRequest', (req, reply, done) => {
    try {
      const pending = guard(platform, req, reply, draining);
      if (pending) pending.then(() => done(), done as Hook);
      else done();
    } catch (err) { done(err as Error); }
  });
}

/**
 * A request that arrives while the server drains (on a connection that was already open; Fastify closes it after
 * this answer): 503 SERVICE_UNAVAILABLE in the envelope, with the headers every response carries, instead of
 * Fastify's own 503 body (return503OnClosing is off, app.ts).
 */
function refuseWhileDraining(platform: Platform, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  return Promise.resolve(applyRateLimit(platform, req, reply, {}, null, null)).then(() => {
    throw new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry the request', undefined, { headers: { 'Retry-After': '1' } });
  });
}

function guard(platform: Platform, req: FastifyRequest, reply: FastifyReply, draining: boolean): void | Promise<void> {
  req.ctx = { platform, principal: null, requestId: req.id, ip: req.ip, userAgent: req.headers['user-agent'] ?? null };
  reply.header('X-Request-Id', req.id);
  if ((req.raw as { upgrade?: boolean }).upgrade) closeAfterAnswer(req, reply);
  if (draining) return refuseWhileDraining(platform, req, reply);
  // Unknown routes share one budget per caller, and their 404 carries the rate-limit headers like every response.
  if (req.is404) return chain(markLegacyKey(platform, req, reply), () => applyRateLimit(platform, req, reply, {}, null, null));
  // Fastify builds a new object on every read of request.routeOptions: read it once.
  const routeOptions = req.routeOptions;
  const needs = routeOptions.config as RouteNeeds;
  const url = routeOptions.url ?? null;
  if (needs.deprecatedBy) reply.header('Deprecation', DEPRECATED_SINCE).header('Link', `<${needs.deprecatedBy}>; rel="successor-version"`);
  if (needs.auth === 'public') return chain(markLegacyKey(platform, req, reply), () => afterAuth(platform, req, reply, needs, url, null, null));
  let principal: Principal | undefined;
  let token: string;
  try {
    token = bearerToken(req.headers.authorization);
    principal = platform.credentials.cached(token);
  } catch (err) {
    return afterAuth(platform, req, reply, needs, url, null, err);
  }
  if (principal) return afterAuth(platform, req, reply, needs, url, principal, null);
  return platform.credentials.resolve(token).then(
    (p) => afterAuth(platform, req, reply, needs, url, p, null),
    (err) => afterAuth(platform, req, reply, needs, url, null, err));
}

/** Runs `next` after `first`, synchronously when `first` did not return a promise. */
function chain(first: void | Promise<void>, next: () => void | Promise<void>): void | Promise<void> {
  return first ? first.then(next) : next();
}

/**
 * A legacy API key (no explicit scopes) gets the Deprecation header on every response (design, spec part 9), also
 * where no credential is needed (public routes, unknown paths): the key is looked at there only for this, and
 * whatever is wrong with it is ignored (the route does not need it). No header, no lookup, for anything but a key.
 */
function markLegacyKey(platform: Platform, req: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  const header = req.headers.authorization;
  if (!header) return;
  const token = /^Bearer[ ]+(svc_live_[^\s]+)[ ]*$/i.exec(header)?.[1];
  if (!token) return;
  const mark = (p: Principal | undefined) => { if (p?.legacyKey) reply.header('Deprecation', LEGACY_KEY_DEPRECATED_AT); };
  let cached: Principal | undefined;
  try { cached = platform.credentials.cached(token); } catch { return; }
  if (cached) return mark(cached);
  return platform.credentials.resolve(token).then(mark, () => {});
}

/**
 * A query value with the NUL character (`%00`) is the caller's input error, named like any other bad query value:
 * otherwise it reached PostgreSQL (a search, a filter), which cannot hold it in text, and came back without a field.
 */
function refuseUnstorableQuery(query: Record<string, unknown> | undefined): void {
  for (const [field, value] of Object.entries(query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) {
      const problem = typeof v === 'string' ? unstorableTextProblem(v) : null;
      if (problem) throw new AppError('INVALID_PARAMETER', `Query parameter "${field}" ${problem}`, { field, reason: 'UNSTORABLE_CHARACTER' });
    }
  }
}

/** Rate limit (keyed by the principal when there is one), then the auth error if any, then the route's needs. */
function afterAuth(platform: Platform, req: FastifyRequest, reply: FastifyReply, needs: RouteNeeds, url: string | null,
  principal: Principal | null, authError: unknown): void | Promise<void> {
  const limited = applyRateLimit(platform, req, reply, needs, principal, url);
  const rest = () => {
    needs.originCheck?.(req);
    if (authError) throw authError;
    if (principal) {
      req.principal = principal;
      req.ctx.principal = principal;
      if (principal.legacyKey) {
        // RFC 9745: keys without explicit scopes are deprecated since 2026-01-01.
        reply.header('Deprecation', LEGACY_KEY_DEPRECATED_AT);
      }
      try { checkNeeds(needs, principal); } catch (err) { return refusalOfRow(platform, req, needs, principal, err); }
    }
    // Bad input (400) after the refusals by role or scope (ARCHITECTURE "Auth order"), and with the principal set,
    // so that on a route naming a row another organization's row is 404 first (the error handler, path-rows.ts).
    // Spec part 1: the organization comes from the credential; `org_id` is never accepted in a query string (a route
    // whose query schema declares it, such as an SSO sign-in that names the organization, takes it as its own input).
    if ((req.query as Record<string, unknown> | undefined)?.org_id !== undefined && !declaresOrgIdQuery(req.routeOptions.schema)) {
      throw new AppError('INVALID_PARAMETER', 'Query parameter "org_id" is not accepted: the organization comes from the credential', { field: 'org_id' });
    }
    refuseUnstorableQuery(req.query as Record<string, unknown> | undefined);
  };
  if (limited) return limited.then(rest);
  return rest();
}

/**
 * A refusal of the route's needs (403: credential kind, feature, scope, role, step-up; 402: subscription) on a route
 * whose path names a row: when the caller's organization has no such row (another organization's, or none), 404
 * NOT_FOUND as for anyone (design: rows of another organization are reported as 404, never 403; ARCHITECTURE "Auth
 * order": membership before entitlements and permissions). Only on this refusal path does the guard read the row.
 */
function refusalOfRow(platform: Platform, req: FastifyRequest, needs: RouteNeeds, principal: Principal, refusal: unknown): Promise<void> {
  const target = pathTargetOf(needs.fixture, req.params);
  if (!target || !(refusal instanceof AppError) || (refusal.status !== 403 && refusal.status !== 402)) throw refusal;
  return missingRow(platform.db, principal, target).then((missing) => { throw missing ?? refusal; });
}
