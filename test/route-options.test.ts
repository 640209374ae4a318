import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { startPlatform } from '../src/core/platform.js';
import { buildApp, type App } from '../src/app.js';
import type { Platform } from '../src/core/context.js';
import { ERROR_STATUS } from '../src/core/errors.js';
import { STEP_UP_WINDOW_MS } from '../src/core/http/guard.js';
import { totpAt } from '../src/core/auth/totp.js';
import { newTenant, bearer, errorOf, enrollTotp, type Tenant } from './helpers.js';

/**
 * The core route options `stepUp` and `subscription` (route-config.ts, enforced by guard.ts) as reusable guards:
 * no production route declares them yet, so this file builds the real app the way buildTestApp does and adds two
 * routes that declare them before the app is ready, then calls them over HTTP.
 */
let app: App;
let platform: Platform;
let closeAll: () => Promise<void>;
let root: { authorization: string };

const STEP_UP_URL = '/v1/test/step-up';
const SUBSCRIPTION_URL = '/v1/test/subscription';

beforeAll(async () => {
  const config = loadConfig({ NODE_ENV: 'test' }, {
    databaseUrl: inject('databaseUrl'), encryptionKey: inject('encryptionKey'), rootApiKey: inject('rootApiKey'),
    dataDir: inject('dataDir'), logLevel: 'silent', dbPoolSize: 6,
  });
  const running = await startPlatform(config, { info() {}, warn() {}, error() {} });
  platform = running.platform;
  app = await buildApp(running.platform, { logger: false });
  app.get(STEP_UP_URL, { config: { stepUp: true } }, async (req) => ({ success: true, data: { route: 'step-up', kind: req.principal?.kind } }));
  app.get(SUBSCRIPTION_URL, { config: { subscription: true } }, async (req) => ({ success: true, data: { route: 'subscription', kind: req.principal?.kind } }));
  await app.ready();
  closeAll = async () => { await app.close(); await running.close(); };
  root = bearer(inject('rootApiKey'));
});
afterAll(async () => { await closeAll?.(); });

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
const post = (url: string, payload: unknown, headers: Record<string, string>) => app.inject({ method: 'POST', url, payload: payload as object, headers });
const codeNow = (secret: string) => totpAt(secret, Date.now());

const enrollAndActivate = (a: Tenant) => enrollTotp(app, a);

async function sessionId(a: Tenant): Promise<string> {
  return (await get('/v1/me', a.auth)).json().data.credential.session_id;
}

/** Moves the session's last step-up into the past, as if it had happened `agoMs` earlier. */
async function stepUpAgo(sid: string, agoMs: number | null): Promise<void> {
  await platform.db.sys.exec(`UPDATE sessions SET mfa_at = CASE WHEN $2::bigint IS NULL THEN NULL ELSE now() - make_interval(secs => $2::bigint / 1000.0) END WHERE id = $1`, [sid, agoMs]);
  platform.credentials.invalidate();
}

async function setSubscription(orgId: string, status: string): Promise<void> {
  const res = await app.inject({ method: 'PUT', url: `/v1/admin/organizations/${orgId}/entitlements`, headers: root, payload: { subscription_status: status } });
  expect(res.statusCode).toBe(200);
  expect(res.json().data.subscription_status).toBe(status);
}

describe('route option stepUp (MFA step-up within 5 minutes)', () => {
  it('needs a credential at all: 401 AUTH_REQUIRED without one', async () => {
    errorOf(await get(STEP_UP_URL), 401, 'AUTH_REQUIRED');
  });

  it('a session that never stepped up gets 403 MFA_STEPUP_REQUIRED; the route without the option is open to it', async () => {
    const a = await newTenant(app);
    const e = errorOf(await get(STEP_UP_URL, a.auth), 403, 'MFA_STEPUP_REQUIRED');
    expect(e.message).toContain('/v1/auth/mfa/step-up');
    expect((await get(SUBSCRIPTION_URL, a.auth)).statusCode).toBe(200);
  });

  it('a stale step-up gets 403; POST /v1/auth/mfa/step-up makes the same session pass with 200', async () => {
    const a = await newTenant(app);
    const secret = await enrollAndActivate(a);
    const sid = await sessionId(a);
    await stepUpAgo(sid, 10 * 60_000);
    errorOf(await get(STEP_UP_URL, a.auth), 403, 'MFA_STEPUP_REQUIRED');
    const up = await post('/v1/auth/mfa/step-up', { code: codeNow(secret) }, a.auth);
    expect(up.statusCode).toBe(200);
    expect(Date.now() - Date.parse(up.json().data.mfa_at)).toBeLessThan(60_000);
    const ok = await get(STEP_UP_URL, a.auth);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ success: true, data: { route: 'step-up', kind: 'user' } });
  });

  it('the window is 5 minutes: 4 minutes ago passes, 6 minutes ago does not', async () => {
    expect(STEP_UP_WINDOW_MS).toBe(5 * 60_000);
    const a = await newTenant(app);
    await enrollAndActivate(a);
    const sid = await sessionId(a);
    await stepUpAgo(sid, 4 * 60_000);
    expect((await get(STEP_UP_URL, a.auth)).statusCode).toBe(200);
    await stepUpAgo(sid, 6 * 60_000);
    errorOf(await get(STEP_UP_URL, a.auth), 403, 'MFA_STEPUP_REQUIRED');
    await stepUpAgo(sid, null);
    errorOf(await get(STEP_UP_URL, a.auth), 403, 'MFA_STEPUP_REQUIRED');
  });

  it('an API key never counts as stepped up: 403 MFA_STEPUP_REQUIRED even right after its user stepped up', async () => {
    const a = await newTenant(app);
    const secret = await enrollAndActivate(a);
    await stepUpAgo(await sessionId(a), 10 * 60_000);
    expect((await post('/v1/auth/mfa/step-up', { code: codeNow(secret) }, a.auth)).statusCode).toBe(200);
    expect((await get(STEP_UP_URL, a.auth)).statusCode).toBe(200);
    const key = bearer(await a.apiKey());
    errorOf(await get(STEP_UP_URL, key), 403, 'MFA_STEPUP_REQUIRED');
    // the key itself is good: a route without the option answers it
    const other = await get(SUBSCRIPTION_URL, key);
    expect(other.statusCode).toBe(200);
    expect(other.json().data.kind).toBe('api_key');
    // and a key cannot step up by itself (docs/accounts.md)
    errorOf(await post('/v1/auth/mfa/step-up', { code: codeNow(secret) }, key), 403, 'FORBIDDEN');
  });
});

describe('route option subscription (402 BILLING_SUBSCRIPTION_*)', () => {
  it('needs a credential at all: 401 AUTH_REQUIRED without one', async () => {
    errorOf(await get(SUBSCRIPTION_URL), 401, 'AUTH_REQUIRED');
  });

  it('active passes; past_due, cancelled and none get their own code and status; visible at once, for sessions and keys', async () => {
    const a = await newTenant(app);
    const key = bearer(await a.apiKey());
    await setSubscription(a.orgId, 'active');
    for (const who of [a.auth, key]) {
      const res = await get(SUBSCRIPTION_URL, who);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.route).toBe('subscription');
    }
    const cases = [
      ['past_due', 'BILLING_SUBSCRIPTION_PAST_DUE'],
      ['cancelled', 'BILLING_SUBSCRIPTION_CANCELLED'],
      ['none', 'BILLING_SUBSCRIPTION_REQUIRED'],
    ] as const;
    for (const [status, code] of cases) {
      await setSubscription(a.orgId, status);
      expect(ERROR_STATUS[code]).toBe(402);
      for (const who of [a.auth, key]) errorOf(await get(SUBSCRIPTION_URL, who), ERROR_STATUS[code], code);
      // the subscription only gates the routes that declare it
      expect((await get('/v1/me', a.auth)).statusCode).toBe(200);
    }
    await setSubscription(a.orgId, 'active');
    expect((await get(SUBSCRIPTION_URL, a.auth)).statusCode).toBe(200);
    expect((await get(SUBSCRIPTION_URL, key)).statusCode).toBe(200);
  });

  it('one organization\'s subscription does not gate another\'s', async () => {
    const a = await newTenant(app);
    const b = await newTenant(app);
    await setSubscription(a.orgId, 'past_due');
    errorOf(await get(SUBSCRIPTION_URL, a.auth), 402, 'BILLING_SUBSCRIPTION_PAST_DUE');
    expect((await get(SUBSCRIPTION_URL, b.auth)).statusCode).toBe(200);
  });

  it('a direct database change is seen once the credential cache is invalidated', async () => {
    const a = await newTenant(app);
    expect((await get(SUBSCRIPTION_URL, a.auth)).statusCode).toBe(200);
    await platform.db.sys.exec(`UPDATE organizations SET subscription_status = 'cancelled' WHERE id = $1`, [a.orgId]);
    platform.credentials.invalidate();
    errorOf(await get(SUBSCRIPTION_URL, a.auth), 402, 'BILLING_SUBSCRIPTION_CANCELLED');
  });
});
