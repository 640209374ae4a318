/** Spec 4.1 public endpoints outside the REST areas: container JWKS, CSP reports. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant, awayFromWindowEnd } from './helpers.js';

let t: TestApp;
let a: Tenant;
beforeAll(async () => { t = await buildTestApp({ corsOrigins: ['https://app.example'] }); a = await newTenant(t.app); });
afterAll(async () => { await t.close(); });

describe('GET /v1/containers/.well-known/jwks.json (spec 4.1)', () => {
  it('public, 200, zero or one EdDSA key, Cache-Control public, max-age=300', async () => {
    const res = await t.app.inject({ url: '/v1/containers/.well-known/jwks.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const keys = res.json().keys as Array<{ kty: string; crv: string; alg: string }>;
    expect(Array.isArray(keys)).toBe(true);
    expect(keys.length).toBeLessThanOrEqual(1);
    for (const k of keys) expect([k.kty, k.crv, k.alg]).toEqual(['OKP', 'Ed25519', 'EdDSA']);
  });
});

describe('POST /v1/security/csp-report (spec 4.1)', () => {
  const post = (type: string, payload: string) => t.app.inject({ method: 'POST', url: '/v1/security/csp-report', headers: { 'content-type': type, 'x-forwarded-for': '203.0.113.9' }, payload });

  it('accepts the three report media types with 204, no credential needed', async () => {
    expect((await post('application/csp-report', JSON.stringify({ 'csp-report': { 'document-uri': 'https://app.example/' } }))).statusCode).toBe(204);
    expect((await post('application/reports+json', JSON.stringify([{ type: 'csp-violation', body: {} }]))).statusCode).toBe(204);
    expect((await post('application/json', '{}')).statusCode).toBe(204);
  });

  it('a report that is not JSON is 400 INVALID_JSON under every report type; __proto__ keys are 400 VALIDATION_ERROR; over-deep is 413', async () => {
    for (const type of ['application/csp-report', 'application/reports+json', 'application/json']) {
      errorOf(await post(type, '{"csp-report": '), 400, 'INVALID_JSON');
      errorOf(await post(type, '{"__proto__": {"polluted": true}}'), 400, 'VALIDATION_ERROR');
    }
    const deep = errorOf(await post('application/csp-report', '['.repeat(200) + ']'.repeat(200)), 413, 'PAYLOAD_TOO_LARGE');
    expect(deep.details).toMatchObject({ limit: t.platform.config.jsonMaxDepth });
  });

  it('415 for other media types; 413 PAYLOAD_TOO_LARGE above 16 KB', async () => {
    errorOf(await post('text/plain', 'x'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const err = errorOf(await post('application/csp-report', JSON.stringify({ r: 'x'.repeat(17 * 1024) })), 413, 'PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual({ maxBytes: 16384, limit: 16384 });
  });

  it('429 RATE_LIMIT_EXCEEDED with Retry-After above 100 requests per minute per address', async () => {
    const app = await buildTestApp();
    try {
      const send = () => app.app.inject({ method: 'POST', url: '/v1/security/csp-report', headers: { 'content-type': 'application/json' }, payload: '{}', remoteAddress: '198.51.100.7' });
      await awayFromWindowEnd();
      for (let i = 0; i < 100; i++) expect((await send()).statusCode).toBe(204);
      const res = await send();
      errorOf(res, 429, 'RATE_LIMIT_EXCEEDED');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['x-ratelimit-limit']).toBe('100');
    } finally { await app.close(); }
  });
});
