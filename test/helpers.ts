import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../src/core/config.js';
import { startPlatform } from '../src/core/platform.js';
import { buildApp, type App } from '../src/app.js';
import type { Platform } from '../src/core/context.js';
import { totpAt } from '../src/core/auth/totp.js';

export interface TestApp { app: App; platform: Platform; rootKey: string; close(): Promise<void> }

/** An app on the run's test database; each test file builds one and closes it in afterAll. */
export async function buildTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const config = loadConfig({ NODE_ENV: 'test' }, {
    databaseUrl: inject('databaseUrl'), encryptionKey: inject('encryptionKey'), rootApiKey: inject('rootApiKey'),
    dataDir: inject('dataDir'), logLevel: 'silent', dbPoolSize: 6, ...overrides,
  });
  const running = await startPlatform(config, { info() {}, warn() {}, error() {} });
  const app = await buildApp(running.platform, { logger: false });
  await app.ready();
  return { app, platform: running.platform, rootKey: inject('rootApiKey'), async close() { await app.close(); await running.close(); } };
}

export const uniqueEmail = (tag = 'user') => `${tag}-${randomBytes(6).toString('hex')}@example.test`;
export const STRONG_PASSWORD = 'Correct-Horse-Battery-9';

export interface Tenant {
  userId: string; orgId: string; email: string; password: string;
  token: string; refreshToken: string;
  auth: { authorization: string };
  /** Creates an API key of this user with the given scopes. */
  apiKey(scopes?: string[]): Promise<string>;
}

/** Registers a fresh user with a fresh organization: the unit of isolation between tests. */
export async function newTenant(app: App, opts: { name?: string } = {}): Promise<Tenant> {
  const email = uniqueEmail(opts.name ?? 'user');
  const res = await app.inject({ method: 'POST', url: '/v1/auth/register', payload: { email, password: STRONG_PASSWORD, name: opts.name ?? 'Test User', organization_name: `Org ${email}` } });
  if (res.statusCode !== 201) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
  const d = res.json().data;
  const auth = { authorization: `Bearer ${d.access_token}` };
  return {
    userId: d.user.id, orgId: d.organization.id, email, password: STRONG_PASSWORD,
    token: d.access_token, refreshToken: d.refresh_token, auth,
    async apiKey(scopes = ['projects:write', 'documents:write', 'settings:write', 'notifications:write']) {
      const r = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: auth, payload: { name: 'test key', scopes, expires_at: new Date(Date.now() + 86_400_000).toISOString() } });
      if (r.statusCode !== 201) throw new Error(`api key failed: ${r.statusCode} ${r.body}`);
      return r.json().data.key as string;
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Asserts an error envelope with the exact status and code; returns the error for further checks. */
export function errorOf(res: LightMyRequestResponse, status: number, code: string): { code: string; message: string; details?: Record<string, unknown> } {
  const body = res.json();
  if (res.statusCode !== status || body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.statusCode} ${res.body}`);
  }
  if (body.success !== false || typeof body.error.message !== 'string') throw new Error(`not an error envelope: ${res.body}`);
  return body.error;
}

/**
 * Rate-limit windows are fixed, aligned to the clock (src/core/rate-limit.ts): a burst that straddles a window's end
 * is counted in two windows and the expected 429 never comes. Waits for the next window when fewer than `needMs`
 * are left in the current one.
 */
export async function awayFromWindowEnd(windowMs = 60_000, needMs = 15_000): Promise<void> {
  const msLeft = windowMs - (Date.now() % windowMs);
  if (msLeft < needMs) await new Promise((r) => setTimeout(r, msLeft + 50));
}

/** Enrolls and activates TOTP for the tenant's user (with the current step's code); returns the secret. */
export async function enrollTotp(app: App, who: { auth: Record<string, string> }): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/auth/mfa/totp/enroll', headers: who.auth, payload: {} });
  if (res.statusCode !== 200) throw new Error(`enroll failed: ${res.statusCode} ${res.body}`);
  const { secret } = res.json().data as { secret: string };
  const act = await app.inject({ method: 'POST', url: '/v1/auth/mfa/totp/activate', headers: who.auth, payload: { code: totpAt(secret, Date.now()) } });
  if (act.statusCode !== 200) throw new Error(`activate failed: ${act.statusCode} ${act.body}`);
  return secret;
}

/**
 * A second app on a test app's platform whose log lines are captured as parsed JSON (jobs off: the first app runs
 * them). Not ready yet, so a test can add routes first.
 */
export async function appWithCapturedLogs(t: TestApp): Promise<{ app: App; lines: Array<Record<string, unknown>> }> {
  const pino = (await import('pino')).default;
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  const app = await buildApp({ ...t.platform, config: { ...t.platform.config, jobPollMs: 0 } }, { loggerInstance: logger as never });
  return { app, lines };
}

/** Waits for `cond` (checked every 20 ms) and fails the test when it does not hold within `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (await cond()) return; await new Promise((r) => setTimeout(r, 20)); }
  throw new Error('condition not met in time');
}

/** Starts the app on a free local port (for WebSocket clients); its ws:// base URL. */
export async function listenLocally(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  return `ws://127.0.0.1:${port}`;
}
