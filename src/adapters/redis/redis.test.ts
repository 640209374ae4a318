import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, firstConnect, redisClient, type RedisConnection } from './client.js';
import { RedisRateLimitStore } from './rate-limit-store.js';
import { RedisTicketStore } from '../../areas/documents/tickets.js';
import { startRedisServer } from './test-server.js';
import { connectRedisFanout } from './fanout.js';
import { until } from '../../../test/helpers.js';

let srv: Awaited<ReturnType<typeof startRedisServer>>;
let nodeA: RedisConnection;
let nodeB: RedisConnection;

beforeAll(async () => {
  srv = await startRedisServer();
  nodeA = await connectRedis(srv.url, () => {});
  nodeB = await connectRedis(srv.url, () => {});
});
afterAll(async () => { await nodeA.close(); await nodeB.close(); await srv.close(); });

describe('the first connection to REDIS_URL', () => {
  it('a Redis that does not answer fails the start within the bound, naming REDIS_URL and its host, never its password', async () => {
    const errors: Error[] = [];
    const url = 'redis://:start-secret@127.0.0.1:1';
    const t0 = Date.now();
    await expect(firstConnect(redisClient(url, (e) => errors.push(e)), url, 300)).rejects.toThrow(new Error('REDIS_URL: no Redis answered at 127.0.0.1:1 within 0.3 s'));
    expect(Date.now() - t0).toBeLessThan(5_000);
    const seen = errors.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(errors.length).toBe(seen); // destroyed: it stops trying
    expect(errors.map((e) => e.message).join(' ')).not.toContain('start-secret');
  });
});

describe('Redis rate-limit store (REDIS_URL)', () => {
  it('two nodes count in one fixed window; the key expires a second after it; undo takes a hit back', async () => {
    const a = new RedisRateLimitStore(nodeA);
    const b = new RedisRateLimitStore(nodeB);
    const first = await a.hit('GET /v1/me|key:1', 60_000);
    expect(first.count).toBe(1);
    expect(first.resetAtMs % 60_000).toBe(0);
    expect((await b.hit('GET /v1/me|key:1', 60_000)).count).toBe(2);
    expect((await a.hit('GET /v1/me|key:1', 60_000)).count).toBe(3);
    await b.undo('GET /v1/me|key:1', 60_000);
    expect((await a.hit('GET /v1/me|key:1', 60_000)).count).toBe(3);
    expect((await a.hit('GET /v1/me|key:2', 60_000)).count).toBe(1);
    const [key, entry] = [...srv.data.entries()].find(([k]) => k.endsWith('|key:1'))!;
    expect(key.startsWith('platform:rl:60000:')).toBe(true);
    expect(entry.expiresAt).toBe(first.resetAtMs + 1_000);
  });

  it('a Redis that hangs fails the hit within a second (the limiter then lets the request through or answers 503)', async () => {
    const store = new RedisRateLimitStore(nodeA);
    srv.pause();
    const started = Date.now();
    try {
      await expect(store.hit('k', 60_000)).rejects.toThrow(/timed out/);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally { srv.resume(); }
    // The connection that lost a reply was replaced: the next command gets its own answer.
    let next: number | undefined;
    for (let i = 0; i < 50 && next === undefined; i++) next = await store.hit('after-the-hang', 60_000).then((r) => r.count, () => undefined) ?? (await new Promise((r) => setTimeout(r, 50)), undefined);
    expect(next).toBe(1);
  });
});

describe('Redis ticket store (REDIS_URL)', () => {
  it('a ticket issued on one node is taken once on another; unknown, malformed and expired tickets are null', async () => {
    const a = new RedisTicketStore(nodeA);
    const b = new RedisTicketStore(nodeB);
    const claims = { orgId: 'o', userId: 'u', sessionId: 's', apiKeyId: null, scope: null };
    const { ticket, expiresInSeconds } = await a.issue(claims);
    expect(ticket).toMatch(/^[0-9a-f]{64}$/);
    expect(expiresInSeconds).toBe(60);
    expect([...srv.data.keys()].some((k) => k.includes(ticket))).toBe(false); // only its hash is kept
    const [took, again] = await Promise.all([b.take(ticket), a.take(ticket)]);
    expect([took, again].filter(Boolean)).toEqual([claims]);
    expect(await b.take('f'.repeat(64))).toBeNull();
    expect(await b.take('not-a-ticket')).toBeNull();
    const short = await a.issue(claims, 0.05);
    await new Promise((r) => setTimeout(r, 80));
    expect(await b.take(short.ticket)).toBeNull();
  });

  it('a Redis that is gone is 503 SERVICE_UNAVAILABLE, not a refused or a lost ticket', async () => {
    const gone = await startRedisServer();
    const conn = await connectRedis(gone.url, () => {});
    const store = new RedisTicketStore(conn);
    await gone.close();
    await expect(store.issue({ orgId: 'o', userId: 'u', sessionId: null, apiKeyId: null, scope: null })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await expect(store.take('a'.repeat(64))).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await conn.close().catch(() => {});
  });
});

describe('Redis fan-out (REDIS_URL)', () => {
  it('another node hears a channel\'s messages byte for byte, in order; the publisher does not hear itself; unsubscribed hears nothing', async () => {
    const a = await connectRedisFanout(srv.url, () => {});
    const b = await connectRedisFanout(srv.url, () => {});
    try {
      const heardByA: number[][] = [];
      const heardByB: number[][] = [];
      const stopA = a.subscribe('doc-1', { message: (m) => heardByA.push([...m]), resync() {} });
      const stopB = b.subscribe('doc-1', { message: (m) => heardByB.push([...m]), resync() {} });
      b.subscribe('doc-2', { message: () => heardByB.push([-1]), resync() {} });
      await new Promise((r) => setTimeout(r, 50)); // the SUBSCRIBE commands are answered
      const binary = Uint8Array.of(0, 13, 10, 255, 36, 42);
      a.publish('doc-1', binary);
      a.publish('doc-1', Uint8Array.of(1));
      await until(() => heardByB.length === 2);
      expect(heardByB).toEqual([[...binary], [1]]);
      expect(heardByA).toEqual([]);
      expect([...srv.data.keys()]).not.toContain('platform:fanout:doc-1'); // channels, not keys
      stopB();
      await new Promise((r) => setTimeout(r, 50));
      a.publish('doc-1', Uint8Array.of(2));
      b.publish('doc-1', Uint8Array.of(3));
      await until(() => heardByA.length === 1);
      expect(heardByA).toEqual([[3]]);
      expect(heardByB).toHaveLength(2);
      stopA();
    } finally { await a.close(); await b.close(); }
  });

  it('publishes that failed resync their channel once, here and (by a notice) on the other nodes, however many failed', async () => {
    const a = await connectRedisFanout(srv.url, () => {});
    const b = await connectRedisFanout(srv.url, () => {});
    try {
      const resyncs = { a: 0, b: 0, other: 0 };
      a.subscribe('doc-4', { message() {}, resync: () => { resyncs.a++; } });
      b.subscribe('doc-4', { message() {}, resync: () => { resyncs.b++; } });
      b.subscribe('doc-5', { message() {}, resync: () => { resyncs.other++; } });
      await new Promise((r) => setTimeout(r, 50));
      srv.pause();
      try {
        for (let i = 0; i < 30; i++) a.publish('doc-4', Uint8Array.of(i));
        await new Promise((r) => setTimeout(r, 1_200)); // they time out
      } finally { srv.resume(); }
      await until(() => resyncs.a >= 1 && resyncs.b >= 1, 5_000);
      await new Promise((r) => setTimeout(r, 2_500)); // nothing more comes
      expect(resyncs).toEqual({ a: 1, b: 1, other: 0 });
    } finally { await a.close(); await b.close(); }
  });

  it('a channel subscribed while the connection was down is subscribed once it is back', async () => {
    const a = await connectRedisFanout(srv.url, () => {});
    const b = await connectRedisFanout(srv.url, () => {});
    try {
      srv.dropConnections();
      await new Promise((r) => setTimeout(r, 10));
      const heard: number[][] = [];
      a.subscribe('doc-6', { message: (m) => heard.push([...m]), resync() {} });
      // Both clients reconnect with a backoff (up to 2 s a try): on a busy machine that can take several tries.
      await until(() => srv.channels().includes('platform:fanout:doc-6'), 20_000);
      b.publish('doc-6', Uint8Array.of(6));
      await until(() => heard.length === 1, 20_000);
      expect(heard).toEqual([[6]]);
    } finally { await a.close(); await b.close(); }
  });

  it('after the connection to Redis is lost and back, every subscriber is told to resync', async () => {
    const a = await connectRedisFanout(srv.url, () => {});
    try {
      let resyncs = 0;
      a.subscribe('doc-3', { message() {}, resync: () => { resyncs++; } });
      await new Promise((r) => setTimeout(r, 50));
      srv.dropConnections();
      await until(() => resyncs >= 1, 5_000);
    } finally { await a.close(); }
  });
});
