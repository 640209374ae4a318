/** REDIS_URL: nodes of one deployment share rate-limit counters and collaboration tickets (design: first start and configuration). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp } from './helpers.js';
import { startRedisServer } from '../src/adapters/redis/test-server.js';
import { redeemTicket } from '../src/areas/documents/collab.service.js';
import { loadConfig } from '../src/core/config.js';

let redis: Awaited<ReturnType<typeof startRedisServer>>;
let nodeA: TestApp;
let nodeB: TestApp;

beforeAll(async () => {
  redis = await startRedisServer();
  const overrides = { redisUrl: redis.url, rateLimit: { max: 3, authMax: 600, windowMs: 60_000 } };
  [nodeA, nodeB] = await Promise.all([buildTestApp(overrides), buildTestApp(overrides)]);
});
afterAll(async () => { await Promise.all([nodeA?.close(), nodeB?.close()]); await redis.close(); });

describe('two nodes on one Redis', () => {
  it('share one rate-limit budget', async () => {
    // Far enough from the end of the minute that the four requests fall in one window.
    const msLeft = 60_000 - (Date.now() % 60_000);
    if (msLeft < 5_000) await new Promise((r) => setTimeout(r, msLeft + 50));
    const hit = (node: TestApp) => node.app.inject({ url: '/v1/pricing', headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect((await hit(nodeA)).headers['x-ratelimit-remaining']).toBe('2');
    expect((await hit(nodeB)).headers['x-ratelimit-remaining']).toBe('1');
    expect((await hit(nodeA)).headers['x-ratelimit-remaining']).toBe('0');
    errorOf(await hit(nodeB), 429, 'RATE_LIMIT_EXCEEDED');
    expect([...redis.data.keys()].some((k) => k.startsWith('platform:rl:60000:'))).toBe(true);
  });

  it('a collaboration ticket issued by one node is redeemed once, on any node; only its hash is in Redis', async () => {
    const owner = await newTenant(nodeA.app);
    const r = await nodeA.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: owner.auth });
    expect(r.statusCode).toBe(200);
    const ticket = r.json().data.ticket as string;
    expect([...redis.data.keys()].filter((k) => k.startsWith('platform:collab-ticket:'))).toHaveLength(1);
    expect([...redis.data.keys()].some((k) => k.includes(ticket))).toBe(false);
    expect(await redeemTicket(nodeB.platform, ticket)).toMatchObject({ orgId: owner.orgId, userId: owner.userId });
    await expect(redeemTicket(nodeA.platform, ticket)).rejects.toMatchObject({ code: 'AUTH_TOKEN_INVALID' });
  });

  it('REDIS_URL must be a redis:// or rediss:// URL', () => {
    expect(() => loadConfig({ REDIS_URL: 'localhost:6379' })).toThrow('REDIS_URL must');
    expect(() => loadConfig({ REDIS_URL: 'http://localhost:6379' })).toThrow('REDIS_URL must start with redis:// or rediss://');
    expect(loadConfig({ REDIS_URL: 'rediss://u:p@cache.internal:6380/0' }).redisUrl).toBe('rediss://u:p@cache.internal:6380/0');
    expect(loadConfig({}).redisUrl).toBeNull();
  });
});
