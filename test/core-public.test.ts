/** Spec 4.1 public endpoints outside the REST areas: container JWKS, CSP reports, pricing. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appWithCapturedLogs, buildTestApp, newTenant, errorOf, type TestApp, type Tenant, awayFromWindowEnd } from './helpers.js';

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

  it('takes a report as the browser sent it (logged, never stored): a NUL or bytes that are not UTF-8 are still 204', async () => {
    expect((await post('application/csp-report', '{"csp-report":{"script-sample":"a\\u0000b"}}')).statusCode).toBe(204);
    const latin1 = Buffer.concat([Buffer.from('{"csp-report":{"script-sample":"caf'), Buffer.from([0xe9]), Buffer.from('"}}')]);
    for (const type of ['application/csp-report', 'application/reports+json; charset=utf-8', 'application/json']) {
      expect((await t.app.inject({ method: 'POST', url: '/v1/security/csp-report', headers: { 'content-type': type }, payload: latin1 })).statusCode, type).toBe(204);
    }
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
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/security/csp-report' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(errorOf(await post('text/plain', 'x'), 415, 'UNSUPPORTED_MEDIA_TYPE').message).toBe('Content-Type "text/plain" is not accepted here; send application/csp-report or application/reports+json or application/json');
    const err = errorOf(await post('application/csp-report', JSON.stringify({ r: 'x'.repeat(17 * 1024) })), 413, 'PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual({ maxBytes: 16384, limit: 16384 });
  });

  it('the logged report has the credentials of its URLs redacted (a page URL with a session token or a signature)', async () => {
    const { app, lines } = await appWithCapturedLogs(t);
    const report = { 'csp-report': { 'document-uri': 'https://app.example/v1/sheet/1/export?token=eyJ.secret.jwt&format=xlsx', 'blocked-uri': 'https://cdn.example/x.js?sig=abc123', 'violated-directive': 'script-src' } };
    const res = await app.inject({ method: 'POST', url: '/v1/security/csp-report', headers: { 'content-type': 'application/csp-report' }, payload: JSON.stringify(report) });
    expect(res.statusCode).toBe(204);
    const line = lines.find((l) => l.msg === 'csp violation report' && l.reqId === res.headers['x-request-id']);
    expect(line?.cspReport).toEqual({ 'csp-report': {
      'document-uri': 'https://app.example/v1/sheet/1/export?token=[REDACTED]&format=xlsx', 'blocked-uri': 'https://cdn.example/x.js?sig=[REDACTED]', 'violated-directive': 'script-src' } });
    expect(JSON.stringify(lines)).not.toContain('eyJ.secret.jwt');
    await app.close();
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

describe('GET /v1/pricing (spec 4.1)', () => {
  const TIERS = ['academic_free', 'pro', 'team', 'business', 'enterprise'];
  const NAMES = ['Academic', 'Pro', 'Team', 'Business', 'Enterprise'];
  const nullableInt = (v: unknown) => v === null || Number.isInteger(v);

  it('public (no credential read, even a bad one), 200, Cache-Control public, max-age=300', async () => {
    for (const headers of [{}, { authorization: 'Bearer garbage-token' }, a.auth]) {
      const res = await t.app.inject({ url: '/v1/pricing', headers });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('data: currency and the tiers of src/core/pricing.ts, each {tier, name, price_cents_monthly, currency, limits, features}', async () => {
    const body = (await t.app.inject({ url: '/v1/pricing' })).json();
    expect(body.success).toBe(true);
    expect(Object.keys(body.data).sort()).toEqual(['currency', 'tiers']);
    expect(body.data.currency).toBe('usd');
    const tiers = body.data.tiers as Array<Record<string, unknown> & { limits: Record<string, unknown>; features: unknown[] }>;
    expect(tiers.map((x) => x.tier)).toEqual(TIERS);
    expect(tiers.map((x) => x.name)).toEqual(NAMES);
    for (const tier of tiers) {
      expect(Object.keys(tier).sort(), String(tier.tier)).toEqual(['currency', 'features', 'limits', 'name', 'price_cents_monthly', 'tier']);
      expect(tier.currency).toBe('usd');
      expect(nullableInt(tier.price_cents_monthly), String(tier.tier)).toBe(true);
      expect(Object.keys(tier.limits).sort()).toEqual(['credits_monthly', 'max_members', 'max_projects']);
      for (const v of Object.values(tier.limits)) expect(nullableInt(v), `${tier.tier}: ${JSON.stringify(tier.limits)}`).toBe(true);
      expect(Array.isArray(tier.features)).toBe(true);
      expect(tier.features.length).toBeGreaterThan(0);
      for (const f of tier.features) expect(typeof f).toBe('string');
    }
    const byTier = Object.fromEntries(tiers.map((x) => [x.tier, x]));
    expect(byTier.pro.limits.max_projects).toBe(500);
    expect(byTier.pro.price_cents_monthly).toBe(2900);
    expect(byTier.academic_free.price_cents_monthly).toBe(0);
    expect(byTier.enterprise).toMatchObject({ price_cents_monthly: null, limits: { max_projects: null, max_members: null, credits_monthly: null } });
  });

  it('PRICING_FILE (a JSON array of tiers) replaces the defaults', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pricing-'));
    const file = path.join(dir, 'pricing.json');
    const custom = [
      { tier: 'pro', name: 'Pro (file)', price_cents_monthly: 1234, currency: 'usd', limits: { max_projects: 7, max_members: 3, credits_monthly: 42 }, features: ['documents'] },
      { tier: 'enterprise', name: 'Enterprise (file)', price_cents_monthly: null, currency: 'usd', limits: { max_projects: null, max_members: null, credits_monthly: null }, features: ['documents', 'mcp'] },
    ];
    writeFileSync(file, JSON.stringify(custom));
    const previous = process.env.PRICING_FILE;
    process.env.PRICING_FILE = file;
    // pricing.ts reads the file once and caches the tiers in module state: fresh modules read it anew.
    vi.resetModules();
    try {
      const pricing = await import('../src/core/pricing.js');
      expect(pricing.planTiers()).toEqual(custom);
      expect(pricing.tierLimits('pro')).toEqual({ max_projects: 7, max_members: 3, credits_monthly: 42 });
      const { buildApp } = await import('../src/app.js');
      const app = await buildApp({ ...t.platform, config: { ...t.platform.config, jobPollMs: 0 } }, { logger: false });
      try {
        await app.ready();
        const res = await app.inject({ url: '/v1/pricing' });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data).toEqual({ currency: 'usd', tiers: custom });
      } finally { await app.close(); }
    } finally {
      if (previous === undefined) delete process.env.PRICING_FILE; else process.env.PRICING_FILE = previous;
      vi.resetModules();
      rmSync(dir, { recursive: true, force: true });
    }
    // The app built before is untouched: its module read no file.
    expect((await t.app.inject({ url: '/v1/pricing' })).json().data.tiers.map((x: { tier: string }) => x.tier)).toEqual(TIERS);
  });
});
