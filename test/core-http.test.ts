/** Core contracts over HTTP: rate limits (headers, 429, fail-closed, per credential and route), CORS, JSON size and depth. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import net, { type AddressInfo } from 'node:net';
import { appWithCapturedLogs, buildTestApp, newTenant, bearer, errorOf, awayFromWindowEnd, type TestApp, type Tenant } from './helpers.js';
import { installGuard } from '../src/core/http/guard.js';
import { installErrorHandler } from '../src/core/http/error-handler.js';
import { AppError } from '../src/core/errors.js';
import { jsonDepthExceeds } from '../src/core/http/json-parser.js';
import { MemoryRateLimitStore, type RateLimitStore } from '../src/core/rate-limit.js';
import type { Platform } from '../src/core/context.js';
import type { Principal } from '../src/core/auth/principal.js';

// Tenants and keys are made on an app with the default budgets; the limited app only serves the requests under test.
let setup: TestApp;
beforeAll(async () => { setup = await buildTestApp(); });
afterAll(async () => { await setup.close(); });

function expectRateHeaders(res: { headers: Record<string, unknown> }, limit: number, remaining?: number) {
  expect(Number(res.headers['x-ratelimit-limit'])).toBe(limit);
  expect(res.headers['x-ratelimit-remaining']).toBeDefined();
  if (remaining !== undefined) expect(Number(res.headers['x-ratelimit-remaining'])).toBe(remaining);
  const reset = Number(res.headers['x-ratelimit-reset']);
  const now = Date.now() / 1000;
  expect(reset).toBeGreaterThanOrEqual(Math.floor(now));
  expect(reset).toBeLessThanOrEqual(Math.ceil(now + 61));
}

describe('rate limits', () => {
  let t: TestApp;
  let a: Tenant;
  let key1: string;
  let key2: string;
  beforeAll(async () => {
    t = await buildTestApp({ rateLimit: { max: 3, authMax: 3, windowMs: 60_000 } });
    a = await newTenant(setup.app);
    key1 = await a.apiKey(['settings:read']);
    key2 = await a.apiKey(['settings:read']);
    await awayFromWindowEnd(60_000, 30_000); // the tests below count on one window
  });
  afterAll(async () => { await t.close(); });

  it('headers on success, 401, 404 and public routes; 429 RATE_LIMIT_EXCEEDED with Retry-After after the budget', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ url: '/v1/me', headers: a.auth });
      expect(res.statusCode).toBe(200);
      expectRateHeaders(res, 3, 2 - i);
    }
    const over = await t.app.inject({ url: '/v1/me', headers: a.auth });
    const err = errorOf(over, 429, 'RATE_LIMIT_EXCEEDED');
    expectRateHeaders(over, 3, 0);
    const retry = Number(over.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(err.details?.limit).toBe(3);

    expectRateHeaders(await t.app.inject({ url: '/v1/organizations' }), 3);       // 401
    expectRateHeaders(await t.app.inject({ url: '/v1/health' }), 3);              // public
    const nf = await t.app.inject({ url: '/v1/does-not-exist', headers: a.auth }); // 404
    expect(nf.statusCode).toBe(404);
    expectRateHeaders(nf, 3);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth, payload: { nope: 1 } }); // 400
    expect(bad.statusCode).toBe(400);
    expectRateHeaders(bad, 3);
  });

  it('budgets are per credential: two keys of one user have separate budgets', async () => {
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ url: '/v1/api-keys', headers: bearer(key1) })).statusCode).toBe(200);
    errorOf(await t.app.inject({ url: '/v1/api-keys', headers: bearer(key1) }), 429, 'RATE_LIMIT_EXCEEDED');
    const other = await t.app.inject({ url: '/v1/api-keys', headers: bearer(key2) });
    expect(other.statusCode).toBe(200);
    expectRateHeaders(other, 3, 2);
  });

  it('budgets are per route: another route still answers', async () => {
    for (let i = 0; i < 4; i++) await t.app.inject({ url: '/v1/organizations/current', headers: bearer(key1) });
    errorOf(await t.app.inject({ url: '/v1/organizations/current', headers: bearer(key1) }), 429, 'RATE_LIMIT_EXCEEDED');
    expect((await t.app.inject({ url: '/v1/organizations', headers: bearer(key1) })).statusCode).toBe(200);
  });

  it('unauthenticated requests are limited per address, before the 401', async () => {
    for (let i = 0; i < 3; i++) errorOf(await t.app.inject({ url: '/v1/organizations/current/members' }), 401, 'AUTH_REQUIRED');
    errorOf(await t.app.inject({ url: '/v1/organizations/current/members' }), 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('a new made-up credential on every request does not get a new budget: failed credentials count per address', async () => {
    const junk = (i: number) => ({ authorization: `Bearer svc_live_QQQQQQQ${i}_${'0123456789abcdef'.repeat(2)}` });
    const from = (remoteAddress: string, i: number) => t.app.inject({ url: '/v1/me', headers: junk(i), remoteAddress });
    for (let i = 0; i < 3; i++) errorOf(await from('198.51.100.21', i), 401, 'INVALID_API_KEY');
    errorOf(await from('198.51.100.21', 3), 429, 'RATE_LIMIT_EXCEEDED');
    errorOf(await t.app.inject({ url: '/v1/me', remoteAddress: '198.51.100.21' }), 429, 'RATE_LIMIT_EXCEEDED');
    // Another address has its own budget, and a valid credential from the limited address is limited by its own.
    errorOf(await from('198.51.100.22', 9), 401, 'INVALID_API_KEY');
    expect((await t.app.inject({ url: '/v1/me', headers: bearer(key1), remoteAddress: '198.51.100.21' })).statusCode).toBe(200);
  });

  it('auth routes have their own per-address budget (authMax)', async () => {
    const login = () => t.app.inject({ method: 'POST', url: '/v1/auth/login', remoteAddress: '198.51.100.7', payload: { email: 'nobody@example.test', password: 'wrong-password-1' } });
    for (let i = 0; i < 3; i++) expect((await login()).statusCode).toBe(401);
    const over = await login();
    errorOf(over, 429, 'RATE_LIMIT_EXCEEDED');
    expect(over.headers['retry-after']).toBeDefined();
  });
});

describe('rate limiter outage (guard on a minimal app)', () => {
  let app: FastifyInstance;
  let store: RateLimitStore;
  const principal: Principal = {
    kind: 'api_key', userId: 'u1', email: 'u@example.test', name: 'U', orgId: 'o1',
    org: { id: 'o1', name: 'O', slug: 'o', planTier: 'free', subscriptionStatus: 'active', features: [], isRoot: false, sessionDurationDays: 30, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
    role: 'owner', permissions: new Set(), scopes: null, legacyKey: false, apiKeyId: 'k1',
  };
  beforeAll(async () => {
    store = new MemoryRateLimitStore();
    const platform = {
      config: { rateLimit: { max: 5, authMax: 5, windowMs: 60_000 } },
      get rateLimitStore() { return store; },
      credentials: { cached: () => undefined, resolve: async (token: string) => { if (token !== 'good') throw new AppError('AUTH_TOKEN_INVALID', 'bad token'); return principal; } },
    } as unknown as Platform;
    app = Fastify({ logger: false });
    installErrorHandler(app);
    installGuard(app, platform);
    app.post('/mcp', { config: { rateLimit: { failClosed: true } } }, async () => ({ success: true, data: 'mcp' }));
    app.get('/open', async () => ({ success: true, data: 'open' }));
    app.get('/public', { config: { auth: 'public', rateLimit: { failClosed: true, max: 2 } } }, async () => ({ success: true, data: 'public' }));
    await app.ready();
  });
  afterAll(async () => { await app.close(); });

  it('with a working store both routes answer with headers', async () => {
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: bearer('good') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('5');
    expect((await app.inject({ url: '/public' })).headers['x-ratelimit-limit']).toBe('2');
  });

  it('a store that answers with a promise (a networked store) limits the same way', async () => {
    const counts = new Map<string, number>();
    store = { async hit(key: string) { counts.set(key, (counts.get(key) ?? 0) + 1); return { count: counts.get(key)!, resetAtMs: Date.now() + 60_000 }; }, undo() {}, close() {} };
    try {
      const ok = await app.inject({ url: '/public' });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['x-ratelimit-remaining']).toBe('1');
      await app.inject({ url: '/public' });
      errorOf(await app.inject({ url: '/public' }), 429, 'RATE_LIMIT_EXCEEDED');
      errorOf(await app.inject({ url: '/open', headers: bearer('bad') }), 401, 'AUTH_TOKEN_INVALID');
    } finally { store = new MemoryRateLimitStore(); }
  });

  it('a store that throws: 503 SERVICE_UNAVAILABLE only where the route fails closed', async () => {
    store = { async hit() { throw new Error('redis: connection refused'); }, undo() {}, close() {} };
    const closed = await app.inject({ method: 'POST', url: '/mcp', headers: bearer('good') });
    const err = errorOf(closed, 503, 'SERVICE_UNAVAILABLE');
    expect(err.message).not.toContain('redis');
    expect(closed.headers['retry-after']).toBeDefined();
    errorOf(await app.inject({ url: '/public' }), 503, 'SERVICE_UNAVAILABLE');
    const open = await app.inject({ url: '/open', headers: bearer('good') });
    expect(open.statusCode).toBe(200);
    expect(open.json().data).toBe('open');
  });

  it('the credential is still checked when the limiter is down on a fail-open route', async () => {
    errorOf(await app.inject({ url: '/open', headers: bearer('bad') }), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await app.inject({ url: '/open' }), 401, 'AUTH_REQUIRED');
  });
});

describe('MemoryRateLimitStore', () => {
  it('counts per key in fixed windows and resets', async () => {
    const s = new MemoryRateLimitStore(10);
    await awayFromWindowEnd(1_000, 500); // the three hits below land in one window even on a busy machine
    const before = Date.now();
    const a1 = await s.hit('a', 1_000);
    const a2 = await s.hit('a', 1_000);
    const b1 = await s.hit('b', 1_000);
    expect([a1.count, a2.count, b1.count]).toEqual([1, 2, 1]);
    expect(a1.resetAtMs % 1_000).toBe(0);
    expect(a1.resetAtMs).toBeGreaterThan(before);
    expect(a2.resetAtMs).toBe(a1.resetAtMs);
    await new Promise((r) => setTimeout(r, a2.resetAtMs - Date.now() + 5));
    expect((await s.hit('a', 1_000)).count).toBe(1);
    s.close();
  });
});

describe('CORS', () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => { t = await buildTestApp({ corsOrigins: ['https://app.example'] }); a = await newTenant(setup.app); });
  afterAll(async () => { await t.close(); });

  it('an allowlisted origin gets Access-Control-Allow-Origin and the exposed headers', async () => {
    const res = await t.app.inject({ url: '/v1/me', headers: { ...a.auth, origin: 'https://app.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(String(res.headers['access-control-expose-headers'])).toMatch(/X-RateLimit-Remaining/);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('a route with a Vary of its own keeps Origin in it (bootstrap: Origin and Authorization)', async () => {
    const res = await t.app.inject({ url: '/v1/bootstrap', headers: { ...a.auth, origin: 'https://app.example' } });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers.vary).split(/,\s*/).sort()).toEqual(['Authorization', 'Origin']);
    expect(String((await t.app.inject({ url: '/v1/bootstrap', headers: a.auth })).headers.vary).split(/,\s*/).sort()).toEqual(['Authorization', 'Origin']);
  });

  it('another origin gets no Access-Control-Allow-Origin', async () => {
    const res = await t.app.inject({ url: '/v1/me', headers: { ...a.auth, origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a call without Origin (server to server) is unaffected', async () => {
    const res = await t.app.inject({ url: '/v1/me', headers: a.auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a preflight from an allowlisted origin succeeds without a credential; others get no CORS headers', async () => {
    const pre = await t.app.inject({ method: 'OPTIONS', url: '/v1/organizations', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');
    const evil = await t.app.inject({ method: 'OPTIONS', url: '/v1/organizations', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    expect(evil.statusCode).not.toBe(401);
  });

  it('a preflight allows every method the API uses (PUT, PATCH, DELETE too) and carries X-Request-Id and the rate-limit headers', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const pre = await t.app.inject({ method: 'OPTIONS', url: '/v1/organizations/current', headers: { origin: 'https://app.example', 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' } });
      expect({ method, status: pre.statusCode, body: pre.body }).toEqual({ method, status: 204, body: '' });
      expect(String(pre.headers['access-control-allow-methods']).split(/,\s*/)).toContain(method);
      expect(pre.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(pre.headers['x-request-id']).toEqual(expect.any(String));
      expect(pre.headers['x-ratelimit-limit']).toEqual(expect.any(String));
      expect(pre.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    }
    // An OPTIONS from an allowed origin without Access-Control-Request-Method: no text/plain 400 outside the envelope.
    const bare = await t.app.inject({ method: 'OPTIONS', url: '/v1/me', headers: { origin: 'https://app.example' } });
    expect(bare.statusCode).toBe(204);
    // A refused origin: the envelope's 404, with the same headers.
    const evil = await t.app.inject({ method: 'OPTIONS', url: '/v1/me', headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' } });
    errorOf(evil, 404, 'NOT_FOUND');
    expect(evil.headers['x-ratelimit-limit']).toEqual(expect.any(String));
  });

  it('errors carry CORS headers too, so browsers can read the envelope', async () => {
    const res = await t.app.inject({ url: '/v1/me', headers: { origin: 'https://app.example' } });
    errorOf(res, 401, 'AUTH_REQUIRED');
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
  });
});

describe('JSON size and depth', () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => { t = await buildTestApp({ bodyLimitBytes: 2048, jsonMaxDepth: 5 }); a = await newTenant(setup.app); });
  afterAll(async () => { await t.close(); });
  const post = (payload: string) => t.app.inject({ method: 'POST', url: '/v1/organizations', headers: { ...a.auth, 'content-type': 'application/json' }, payload });

  it('a body over the configured limit: 413 PAYLOAD_TOO_LARGE with details.maxBytes and details.limit', async () => {
    const err = errorOf(await post(JSON.stringify({ name: 'x'.repeat(3000) })), 413, 'PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual({ maxBytes: 2048, limit: 2048 });
  });

  it('nesting deeper than the limit: 413 PAYLOAD_TOO_LARGE with details.limit; at the limit it parses', async () => {
    const nested = (levels: number) => `{"name":"n","settings":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    const err = errorOf(await post(nested(6)), 413, 'PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual({ limit: 5, maxBytes: 2048 });
    // 5 levels: parsed, then refused by the schema (400), not by the depth guard
    errorOf(await post(nested(5)), 400, 'VALIDATION_ERROR');
  });

  it('default limits: 1 MiB body, depth 32', async () => {
    const big = await setup.app.inject({ method: 'POST', url: '/v1/organizations', headers: { ...a.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }) });
    expect(errorOf(big, 413, 'PAYLOAD_TOO_LARGE').details?.maxBytes).toBe(1024 * 1024);
    const deep = await setup.app.inject({ method: 'POST', url: '/v1/organizations', headers: { ...a.auth, 'content-type': 'application/json' }, payload: `{"a":${'['.repeat(40)}${']'.repeat(40)}}` });
    expect(errorOf(deep, 413, 'PAYLOAD_TOO_LARGE').details?.limit).toBe(32);
  });

  it('jsonDepthExceeds ignores brackets inside strings and escaped quotes', () => {
    expect(jsonDepthExceeds('{"a":[[1]]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[[[1]]]}', 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":"[[[[[[[[{{{{{{"}', 1)).toBe(false);
    expect(jsonDepthExceeds('{"a":"\\"[[[[[[[["}', 1)).toBe(false);
    expect(jsonDepthExceeds('[{},{},{},{}]', 2)).toBe(false);
    expect(jsonDepthExceeds('['.repeat(100000), 32)).toBe(true);
  });
});

describe('graceful shutdown', () => {
  it('a request arriving on an open connection while the server drains gets the envelope\'s 503 with the usual headers', async () => {
    const t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    let raw = '';
    socket.on('data', (d) => { raw += d; });
    const ended = new Promise((resolve) => socket.on('close', resolve));
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      // A request in flight (its body not sent yet) keeps the connection open through the start of the drain.
      const body = '{"refresh_token":"rt_unknown"}';
      socket.write(`POST /v1/auth/refresh HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      await sleep(150);
      const closing = t.app.close();
      await sleep(150);
      socket.write(body);
      socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
      await ended;
      await closing;
    } finally {
      socket.destroy();
      await t.close();
    }
    const [first, second] = raw.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 401 /);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    const [head, payload] = second.split('\r\n\r\n');
    expect(JSON.parse(payload)).toEqual({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), details: { requestId: expect.any(String) } } });
    expect(head).toMatch(/\r\nconnection: close\r\n/i);
    expect(head).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(head).toMatch(/\r\nx-request-id: \S+\r\n/i);
    expect(head).toMatch(/\r\nx-ratelimit-limit: \d+\r\n/i);
  });
});

describe('request logging', () => {
  it('one line per request, carrying its request id; no second pair from Fastify', async () => {
    const { app, lines } = await appWithCapturedLogs(setup);
    try {
      await app.ready();
      const res = await app.inject({ url: '/v1/health', headers: { 'x-request-id': 'log-test-0001' } });
      expect(res.headers['x-request-id']).toBe('log-test-0001');
      const mine = lines.filter((l) => l.reqId === 'log-test-0001');
      expect(mine.map((l) => l.msg)).toEqual(['request completed']);
      expect(mine[0]).toMatchObject({ method: 'GET', url: '/v1/health', statusCode: 200 });
      expect(lines.filter((l) => l.msg === 'incoming request')).toEqual([]);
    } finally { await app.close(); }
  });
});

describe('HEAD', () => {
  it('answers every GET route with its status and headers and no body; the guard applies as for GET', async () => {
    const health = await setup.app.inject({ method: 'HEAD', url: '/v1/health' });
    expect(health.statusCode).toBe(200);
    expect(health.body).toBe('');
    expect(health.headers['content-type']).toMatch(/^application\/json/);
    expect(health.headers['x-request-id']).toBeDefined();
    expect(health.headers['x-ratelimit-limit']).toBeDefined();

    const anonymous = await setup.app.inject({ method: 'HEAD', url: '/v1/me' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).toBe('');
    const a = await newTenant(setup.app);
    const me = await setup.app.inject({ method: 'HEAD', url: '/v1/me', headers: a.auth });
    expect(me.statusCode).toBe(200);
    expect(me.body).toBe('');
    expect((await setup.app.inject({ method: 'HEAD', url: '/v1/no-such-route' })).statusCode).toBe(404);
    expect((await setup.app.inject({ method: 'HEAD', url: '/docs' })).statusCode).not.toBe(401);
  });

  it('HEAD twins are not separate operations: neither in the OpenAPI document nor in the route list', async () => {
    expect(setup.app.routeList.some((r) => r.method === 'HEAD')).toBe(false);
    const doc = (await setup.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const methods = Object.values(doc.paths as Record<string, Record<string, unknown>>).flatMap((ops) => Object.keys(ops));
    expect(methods).not.toContain('head');
    expect(methods).toContain('get');
  });
});

describe('input PostgreSQL cannot store or that names nothing', () => {
  const json = (url: string, body: string, who: Tenant, method: 'POST' | 'PUT' = 'POST') =>
    setup.app.inject({ method, url, headers: { ...who.auth, 'content-type': 'application/json' }, payload: body });
  let a: Tenant;
  beforeAll(async () => { a = await newTenant(setup.app); });
  const projectCount = async () => (await setup.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE org_id = $1`, [a.orgId]))!.n;

  it('an unpaired surrogate escape anywhere in a JSON body is 400 UNSTORABLE_CHARACTER naming the field, and nothing is written', async () => {
    const before = await projectCount();
    for (const [body, field] of [
      ['{"name":"sur","settings":{"k":"\\ud800"}}', 'settings.k'],
      ['{"name":"sur\\udfffx"}', 'name'],
      ['{"name":"ok","settings":{"\\ud800":1}}', 'settings.\ufffd'],
      ['{"name":"ok","settings":{"list":["a","\\uDBFF"]}}', 'settings.list[1]'],
    ] as const) {
      const e = errorOf(await json('/v1/projects', body, a), 400, 'VALIDATION_ERROR');
      expect(e.details).toMatchObject({ reason: 'UNSTORABLE_CHARACTER', field });
    }
    expect(await projectCount()).toBe(before);
    // a well-formed pair (an emoji written as escapes) is fine
    const ok = await json('/v1/projects', '{"name":"pair \\ud83d\\ude00"}', a);
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data.name).toBe('pair \u{1F600}');
  });

  it('a number literal past the double range (it parses as Infinity, stored as null) is 400 NUMBER_OUT_OF_RANGE naming the field', async () => {
    const before = await projectCount();
    for (const [body, field] of [
      ['{"name":"big","settings":{"n":1e400}}', 'settings.n'],
      ['{"name":"big","settings":{"list":[1, -2E+999]}}', 'settings.list[1]'],
      [`{"name":"big","settings":{"n":${'9'.repeat(400)}}}`, 'settings.n'],
      [`{"name":"big","settings":{"n":1${'0'.repeat(300)}e10}}`, 'settings.n'], // a long mantissa, a short exponent
      [`{"name":"big","settings":{"n":9${'0'.repeat(307)}e1}}`, 'settings.n'], // 308 digits, a one-digit exponent
    ] as const) {
      const e = errorOf(await json('/v1/projects', body, a), 400, 'VALIDATION_ERROR');
      expect(e.details).toMatchObject({ reason: 'NUMBER_OUT_OF_RANGE', field });
    }
    expect(await projectCount()).toBe(before);
    // Large but finite numbers, and the same text inside a string, are fine.
    const ok = await json('/v1/projects', '{"name":"1e400 in a string","settings":{"n":1e300,"s":"1e400"}}', a);
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data.settings).toEqual({ n: 1e300, s: '1e400' });
  });

  it('a key that would reach the prototype is 400 VALIDATION_ERROR (a field no body accepts), not INVALID_JSON', async () => {
    const e = errorOf(await json('/v1/projects', '{"name":"proto","__proto__":{"x":1}}', a), 400, 'VALIDATION_ERROR');
    expect(e.details).toMatchObject({ reason: 'UNKNOWN_FIELD' });
    errorOf(await json('/v1/projects', '{"name":', a), 400, 'INVALID_JSON');
  });

  it('date-times outside years 1-9999 are 400 VALIDATION_ERROR (PostgreSQL has no year 0), not a database error', async () => {
    const p = (await json('/v1/projects', '{"name":"dates"}', a)).json().data;
    for (const due of ['0000-01-01T00:00:00Z', '0001-01-01T00:30:00+01:00']) {
      errorOf(await json(`/v1/projects/${p.id}/tasks`, JSON.stringify({ title: 'd', due_date: due }), a), 400, 'VALIDATION_ERROR');
    }
    for (const due of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
      const r = await json(`/v1/projects/${p.id}/tasks`, JSON.stringify({ title: 'd', due_date: due }), a);
      expect(r.statusCode).toBe(201);
      const task = (await setup.app.inject({ method: 'GET', url: `/v1/tasks/${r.json().data}`, headers: a.auth })).json().data;
      expect(task.due_date).toBe(new Date(due).toISOString());
    }
  });

  it('an empty id segment (a trailing slash, a double slash) is 404 NOT_FOUND, not INVALID_ID_FORMAT', async () => {
    for (const url of ['/v1/projects/', '/v1/documents/', '/v1/projects//tasks']) {
      errorOf(await setup.app.inject({ method: 'GET', url, headers: a.auth }), 404, 'NOT_FOUND');
    }
    errorOf(await setup.app.inject({ method: 'GET', url: '/v1/projects/nope', headers: a.auth }), 400, 'INVALID_ID_FORMAT');
  });
});

describe('requests the HTTP parser refuses', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => { await t.close(); });

  const raw = (request: string) => new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let out = '';
    socket.on('data', (d) => { out += d.toString('latin1'); });
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
  const parse = (response: string) => {
    const [head, body] = response.split('\r\n\r\n');
    return { status: Number(head!.split(' ')[1]), head: head!, body: JSON.parse(body!) };
  };

  it('an unknown method token gets the envelope: 400 VALIDATION_ERROR', async () => {
    const r = parse(await raw('FOO /v1/projects HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(r.status).toBe(400);
    expect(r.head).toMatch(/content-type: application\/json; charset=utf-8/i);
    expect(r.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: 'Unknown HTTP method' } });
    // Every answer names a request id, also one Node's parser refused before any request existed.
    expect(r.head).toMatch(/\r\nx-request-id: [0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\r\n/i);
  });

  it('headers over the size limit get the envelope: 431 PAYLOAD_TOO_LARGE', async () => {
    const r = parse(await raw(`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(r.status).toBe(431);
    expect(r.body.success).toBe(false);
    expect(r.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
