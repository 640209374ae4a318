import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type Tenant, type TestApp, awayFromWindowEnd } from '../../../test/helpers.js';
import { insertApiKey } from '../../areas/accounts/api-keys.service.js';
import type { RateLimitStore } from '../../core/rate-limit.js';

// HTTP-level rules of the MCP endpoint (spec 4.2): credentials, rate limit (fail closed), deprecation, metadata.
let t: TestApp;
let owner: Tenant;
const RATE_MAX = 5;

beforeAll(async () => {
  t = await buildTestApp({ rateLimit: { max: RATE_MAX, authMax: 600, windowMs: 60_000 } });
  owner = await newTenant(t.app, { name: 'mcp-transport' });
});
afterAll(async () => { await t.close(); });

const ping = (headers: Record<string, string>) => t.app.inject({
  method: 'POST', url: '/v1/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
});

describe('MCP transport rules', () => {
  it('401 AUTH_REQUIRED without a key and INVALID_API_KEY for a bad one, pointing at the resource metadata', async () => {
    const none = await ping({});
    errorOf(none, 401, 'AUTH_REQUIRED');
    expect(none.headers['www-authenticate']).toMatch(/^Bearer resource_metadata=".*\/\.well-known\/oauth-protected-resource\/v1\/mcp"$/);
    errorOf(await ping(bearer('svc_live_abcdefgh_' + '0'.repeat(32))), 401, 'INVALID_API_KEY');
    errorOf(await ping(bearer('svc_live_bad')), 401, 'INVALID_API_KEY');
    // Spec 4.2 lists only AUTH_REQUIRED and INVALID_API_KEY: a token that is neither a key nor JWT-shaped is a bad key.
    const junk = await ping(bearer('not-an-api-key'));
    errorOf(junk, 401, 'INVALID_API_KEY');
    expect(junk.headers['www-authenticate']).toMatch(/resource_metadata=/);
    // A JWT-shaped token was a session attempt and keeps the token codes; REST keeps its own code for junk.
    errorOf(await ping(bearer('aaa.bbb.ccc')), 401, 'AUTH_TOKEN_INVALID');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/me', headers: bearer('not-an-api-key') }), 401, 'AUTH_TOKEN_INVALID');
  });

  it('429 RATE_LIMIT_EXCEEDED with Retry-After past the per-credential budget', async () => {
    const key = await owner.apiKey(['mcp:*']);
    await awayFromWindowEnd();
    for (let i = 0; i < RATE_MAX; i++) {
      const ok = await ping(bearer(key));
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['x-ratelimit-limit']).toBe(String(RATE_MAX));
    }
    const limited = await ping(bearer(key));
    errorOf(limited, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('503 SERVICE_UNAVAILABLE when the rate limiter store fails (fail closed)', async () => {
    const key = await owner.apiKey(['mcp:*']);
    const real = t.platform.rateLimitStore;
    const broken: RateLimitStore = { async hit() { throw new Error('limiter store down'); }, undo() {}, close() {} };
    t.platform.rateLimitStore = broken;
    try {
      const res = await ping(bearer(key));
      errorOf(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBeDefined();
    } finally {
      t.platform.rateLimitStore = real;
    }
    expect((await ping(bearer(key))).statusCode).toBe(200);
  });

  it('legacy keys (scopes NULL) work with a Deprecation header', async () => {
    const legacy = await t.platform.db.tenantTx(owner.orgId, (sql) => insertApiKey(sql, owner.orgId, owner.userId, 'legacy', null, new Date(Date.now() + 86_400_000).toISOString()));
    const res = await t.app.inject({
      method: 'POST', url: '/v1/mcp', headers: { ...bearer(legacy.key), 'content-type': 'application/json', accept: 'application/json' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'projects.list', arguments: {} } }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toMatch(/^(@\d+|true)$/);
    expect(res.json().result.isError).toBeUndefined();
    const scoped = await ping(bearer(await owner.apiKey(['mcp:*'])));
    expect(scoped.headers.deprecation).toBeUndefined();
  });

  it('a signed-in session (JWT) may use MCP with its role', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/v1/mcp', headers: { ...owner.auth, 'content-type': 'application/json', accept: 'application/json' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'me.get', arguments: {} } }),
    });
    expect(res.json().result.structuredContent.credential.kind).toBe('user');
  });

  it('accepts application/json with parameters (charset); other media types are 415', async () => {
    const key = await owner.apiKey(['mcp:*']);
    const withCharset = await ping({ ...bearer(key), 'content-type': 'application/json; charset=utf-8' });
    expect(withCharset.statusCode).toBe(200);
    expect(withCharset.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const parseError = await t.app.inject({ method: 'POST', url: '/v1/mcp', headers: { ...bearer(key), 'content-type': 'application/json;charset=UTF-8' }, payload: '{' });
    expect(parseError.statusCode).toBe(200);
    expect(parseError.json().error.code).toBe(-32700);
    expect((await ping({ ...bearer(key), 'content-type': 'text/plain' })).statusCode).toBe(415);
  });

  it('GET /.well-known/oauth-protected-resource/v1/mcp is public RFC 9728 metadata', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/v1/mcp', headers: { host: 'api.example.test' } });
    expect(res.statusCode).toBe(200);
    const m = res.json();
    expect(m.resource).toBe('http://api.example.test/v1/mcp');
    expect(m.authorization_servers).toEqual([]);
    expect(m.bearer_methods_supported).toEqual(['header']);
    expect(m.scopes_supported).toEqual(expect.arrayContaining(['mcp:*', 'mcp:projects.read', 'mcp:projects.write', 'mcp:tasks.write', 'projects:read']));
    expect(typeof m.resource_documentation).toBe('string');
  });

  it('the endpoint is documented in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(doc.paths['/v1/mcp'].post).toBeDefined();
    expect(doc.paths['/.well-known/oauth-protected-resource/v1/mcp'].get.security).toEqual([]);
  });
});
