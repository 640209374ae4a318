/**
 * A database outage under a running server: a PostgreSQL of this file's own (embedded, on a temporary DATA_DIR) is
 * stopped mid-test. Requests that need the database answer 503 SERVICE_UNAVAILABLE with Retry-After as soon as the
 * connection is refused (not after the pool's 10 s wait), logged once each with the cause; /v1/health says unhealthy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { startEmbeddedPostgres, type EmbeddedPg } from '../src/core/db/embedded.js';
import { loadConfig } from '../src/core/config.js';
import { startPlatform, type RunningPlatform } from '../src/core/platform.js';
import { buildApp, type App } from '../src/app.js';
import { errorOf, newTenant, type Tenant } from './helpers.js';

let dir: string;
let pgServer: EmbeddedPg;
let running: RunningPlatform;
let app: App;
let tenant: Tenant;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'platform-outage-'));
  pgServer = await startEmbeddedPostgres({ dataDir: dir, port: 0 });
  const config = loadConfig({ NODE_ENV: 'test' }, {
    databaseUrl: pgServer.url, dataDir: dir, encryptionKey: randomBytes(32).toString('hex'),
    logLevel: 'silent', dbPoolSize: 4, credentialCacheTtlMs: 0, jobPollMs: 0,
  });
  running = await startPlatform(config, { info() {}, warn() {}, error() {} });
  const logger = pino({ level: 'info' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  app = await buildApp(running.platform, { loggerInstance: logger as never });
  await app.ready();
  tenant = await newTenant(app);
  expect((await app.inject({ url: '/v1/me', headers: tenant.auth })).statusCode).toBe(200);
  await pgServer.stop();
}, 120_000);

afterAll(async () => {
  await app?.close();
  await running?.close({ force: true });
  await pgServer?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the database stopped under a running server', () => {
  it('an authenticated request answers 503 SERVICE_UNAVAILABLE with Retry-After, at once, logged once with the cause', async () => {
    const started = Date.now();
    const res = await app.inject({ url: '/v1/me', headers: { ...tenant.auth, 'x-request-id': 'outage-me' } });
    const took = Date.now() - started;
    const err = errorOf(res, 503, 'SERVICE_UNAVAILABLE');
    expect(err.message).toMatch(/database is unavailable/i);
    expect(err.details?.requestId).toBe('outage-me');
    expect(res.headers['retry-after']).toBe('5');
    // A refused connection is known at once: far less than the pool's 10 s wait for a connection.
    expect(took).toBeLessThan(5000);
    const mine = lines.filter((l) => l.reqId === 'outage-me' && Number(l.level) >= 40);
    expect(mine, JSON.stringify(mine)).toHaveLength(1);
    expect(mine[0].level).toBe(40); // warn: an outage of something else, not a fault of this server
    expect(String(mine[0].cause)).toMatch(/ECONNREFUSED/);
    expect(JSON.stringify(mine[0])).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('a public route that writes (sign-in) answers the same', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: tenant.email, password: tenant.password } });
    errorOf(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('5');
  });

  it('/v1/health says unhealthy with 503, in its documented shape', async () => {
    const res = await app.inject({ url: '/v1/health' });
    const err = errorOf(res, 503, 'SERVICE_UNAVAILABLE');
    expect(err.details?.database).toBe('unreachable');
    expect(res.headers['retry-after']).toBe('5');
  });
});
