import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp } from '../../../../test/helpers.js';
import { memberOf } from '../test-support.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

const req = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });

describe('organization settings', () => {
  it('reads, merges (null removes), reads one key; 404 for an unknown key; 400 for a key over 200 chars', async () => {
    const a = await newTenant(t.app);
    const g0 = await req('GET', '/v1/settings/org', a.auth);
    expect(g0.statusCode).toBe(200);
    expect(g0.json()).toMatchObject({ success: true, data: { settings: {} } });
    const put = await req('PUT', '/v1/settings/org', a.auth, { settings: { theme: 'blue', limits: { max: 3 }, gone: 1 } });
    expect(put.statusCode).toBe(200);
    expect(put.json().data.settings).toEqual({ theme: 'blue', limits: { max: 3 }, gone: 1 });
    const put2 = await req('PUT', '/v1/settings/org', a.auth, { settings: { gone: null, extra: [1, 2] } });
    expect(put2.json().data.settings).toEqual({ theme: 'blue', limits: { max: 3 }, extra: [1, 2] });
    const one = await req('GET', '/v1/settings/org/limits', a.auth);
    expect(one.statusCode).toBe(200);
    expect(one.json().data).toEqual({ key: 'limits', value: { max: 3 } });
    errorOf(await req('GET', '/v1/settings/org/gone', a.auth), 404, 'NOT_FOUND');
    errorOf(await req('GET', `/v1/settings/org/${'k'.repeat(201)}`, a.auth), 400, 'VALIDATION_ERROR');
    errorOf(await req('GET', '/v1/settings/org/', a.auth), 400, 'VALIDATION_ERROR');
    expect((await req('GET', `/v1/settings/org/${'k'.repeat(200)}`, a.auth)).statusCode).toBe(404);
  });

  it('needs org.manage_settings to write: a member or viewer gets 403 PERMISSION_DENIED, but can read', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a, 'member');
    const v = await memberOf(t.app, a, 'viewer');
    errorOf(await req('PUT', '/v1/settings/org', m.auth, { settings: { x: 1 } }), 403, 'PERMISSION_DENIED');
    errorOf(await req('PUT', '/v1/settings/org', v.auth, { settings: { x: 1 } }), 403, 'PERMISSION_DENIED');
    expect((await req('GET', '/v1/settings/org', m.auth)).statusCode).toBe(200);
    const admin = await memberOf(t.app, a, 'admin');
    expect((await req('PUT', '/v1/settings/org', admin.auth, { settings: { x: 1 } })).statusCode).toBe(200);
  });

  it('validates the body, refuses oversize settings with 413, and needs a credential', async () => {
    const a = await newTenant(t.app);
    errorOf(await req('PUT', '/v1/settings/org', a.auth, {}), 400, 'VALIDATION_ERROR');
    errorOf(await req('PUT', '/v1/settings/org', a.auth, { settings: 'x' }), 400, 'VALIDATION_ERROR');
    errorOf(await req('PUT', '/v1/settings/org', a.auth, { settings: {}, org_id: a.orgId }), 400, 'VALIDATION_ERROR');
    const big = errorOf(await req('PUT', '/v1/settings/org', a.auth, { settings: { blob: 'x'.repeat(70_000) } }), 413, 'PAYLOAD_TOO_LARGE');
    expect(big.details).toMatchObject({ maxBytes: 65536 });
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/settings/org' }), 401, 'AUTH_REQUIRED');
    errorOf(await t.app.inject({ method: 'PUT', url: '/v1/settings/org', payload: { settings: {} } }), 401, 'AUTH_REQUIRED');
  });

  it('API keys need the settings scope (403 FORBIDDEN without it)', async () => {
    const a = await newTenant(t.app);
    const k = await a.apiKey(['projects:read']);
    errorOf(await req('GET', '/v1/settings/org', bearer(k)), 403, 'FORBIDDEN');
    const rk = await a.apiKey(['settings:read']);
    expect((await req('GET', '/v1/settings/org', bearer(rk))).statusCode).toBe(200);
    errorOf(await req('PUT', '/v1/settings/org', bearer(rk), { settings: {} }), 403, 'FORBIDDEN');
  });
});

describe('personalization', () => {
  const body = { themeMode: 'dark', language: 'de-CH', notifications: { emailNotifications: false, weeklyDigest: true } };

  it('returns defaults, saves, and is per user and organization', async () => {
    const a = await newTenant(t.app);
    const g = await req('GET', '/v1/settings/personalization', a.auth);
    expect(g.statusCode).toBe(200);
    expect(g.json().data).toMatchObject({ themeMode: 'system', language: 'en', stayLoggedInHours: 24, updated_at: null,
      notifications: { emailNotifications: true, pushNotifications: true, weeklyDigest: false, mentionAlerts: true } });
    const p = await req('PUT', '/v1/settings/personalization', a.auth, { ...body, stayLoggedInHours: 168 });
    expect(p.statusCode).toBe(200);
    expect(p.json().data).toMatchObject({ themeMode: 'dark', language: 'de-CH', stayLoggedInHours: 168,
      notifications: { emailNotifications: false, pushNotifications: true, weeklyDigest: true, mentionAlerts: true } });
    expect((await req('GET', '/v1/settings/personalization', a.auth)).json().data.themeMode).toBe('dark');
    const m = await memberOf(t.app, a);
    expect((await req('GET', '/v1/settings/personalization', m.auth)).json().data.themeMode).toBe('system');
    // The same user in their own organization has separate settings.
    expect((await req('GET', '/v1/settings/personalization', m.home.auth)).json().data.themeMode).toBe('system');
  });

  it('clamps stayLoggedInHours to the organization session_duration_days cap', async () => {
    const a = await newTenant(t.app);
    const up = await req('PUT', '/v1/organizations/current', a.auth, { session_duration_days: 3 });
    expect(up.statusCode).toBe(200);
    const p = await req('PUT', '/v1/settings/personalization', a.auth, { ...body, stayLoggedInHours: 720 });
    expect(p.statusCode).toBe(200);
    expect(p.json().data).toMatchObject({ stayLoggedInHours: 24, maxStayLoggedInHours: 72 });
    await req('PUT', '/v1/organizations/current', a.auth, { session_duration_days: 30 });
    const p2 = await req('PUT', '/v1/settings/personalization', a.auth, { ...body, stayLoggedInHours: 720 });
    expect(p2.json().data.stayLoggedInHours).toBe(720);
  });

  it('accepts every BCP-47 tag shape: region, script, private use, grandfathered', async () => {
    const a = await newTenant(t.app);
    for (const language of ['en', 'de-CH', 'zh-Hant-TW', 'en-US-x-twain', 'x-klingon', 'i-klingon', 'haw-US']) {
      const res = await req('PUT', '/v1/settings/personalization', a.auth, { ...body, language });
      expect(res.statusCode, language).toBe(200);
      expect(res.json().data.language).toBe(language);
    }
  });

  it('requires themeMode, language, notifications and checks every enum', async () => {
    const a = await newTenant(t.app);
    for (const bad of [
      { language: 'en', notifications: {} },
      { themeMode: 'dark', notifications: {} },
      { themeMode: 'dark', language: 'en' },
      { ...body, themeMode: 'blue' },
      { ...body, language: 'not a tag!' },
      { ...body, language: 'x' },
      { ...body, language: 'x-' },
      { ...body, language: 'e' },
      { ...body, language: 'en-toolongsubtag' },
      { ...body, stayLoggedInHours: 2 },
      { ...body, stayLoggedInHours: '24' },
      { ...body, notifications: { emailNotifications: 'yes' } },
      { ...body, notifications: { 'not a key': true } },
      { ...body, notifications: { ['k'.repeat(65)]: true } },
      { ...body, notifications: { other: 'yes' } },
      { ...body, extra: 1 },
    ]) errorOf(await req('PUT', '/v1/settings/personalization', a.auth, bad), 400, 'VALIDATION_ERROR');
  });
});

describe('personalization notifications beyond the four named keys (spec 2.8 "keys seen")', () => {
  const base = { themeMode: 'light', language: 'en' };
  const put = (auth: Record<string, string>, notifications: unknown) => req('PUT', '/v1/settings/personalization', auth, { ...base, notifications });

  it('stores an extra boolean key and reads it back through GET and the bootstrap', async () => {
    const a = await newTenant(t.app);
    const p = await put(a.auth, { emailNotifications: false, smsAlerts: true, 'team_digest-2': false });
    expect(p.statusCode).toBe(200);
    const want = { emailNotifications: false, pushNotifications: true, weeklyDigest: false, mentionAlerts: true, smsAlerts: true, 'team_digest-2': false };
    expect(p.json().data.notifications).toEqual(want);
    const g = await req('GET', '/v1/settings/personalization', a.auth);
    expect(g.json().data.notifications).toEqual(want);
    const boot = await req('GET', '/v1/bootstrap', a.auth);
    expect(boot.statusCode).toBe(200);
    expect(boot.json().data.settings.personalization).toEqual(g.json().data);
    // What GET answers can be sent back as is.
    expect((await put(a.auth, g.json().data.notifications)).statusCode).toBe(200);
    // PUT replaces the object: an extra key not sent again is gone, the named ones fall back to their defaults.
    expect((await put(a.auth, { smsAlerts: false })).json().data.notifications).toEqual({ ...want, emailNotifications: true, smsAlerts: false, 'team_digest-2': undefined });
  });

  it('refuses a non-boolean extra value naming the field', async () => {
    const a = await newTenant(t.app);
    for (const v of ['yes', 1, null, {}, []]) {
      const e = errorOf(await put(a.auth, { smsAlerts: v }), 400, 'VALIDATION_ERROR');
      expect(e.details?.field).toBe('notifications.smsAlerts');
      expect(e.message).toContain('notifications.smsAlerts');
    }
  });

  it('holds at most 32 keys, the four named ones counted', async () => {
    const a = await newTenant(t.app);
    const extra = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i % 2 === 0]));
    const named = { emailNotifications: true, pushNotifications: false, weeklyDigest: true, mentionAlerts: false };
    const e = errorOf(await put(a.auth, { ...named, ...extra(29) }), 400, 'VALIDATION_ERROR');
    expect(e.details?.field).toBe('notifications');
    errorOf(await put(a.auth, extra(33)), 400, 'VALIDATION_ERROR');
    // 29 extra keys pass the schema but make 33 once the named defaults are filled in.
    errorOf(await put(a.auth, extra(29)), 400, 'VALIDATION_ERROR');
    const ok = await put(a.auth, { ...named, ...extra(28) });
    expect(ok.statusCode).toBe(200);
    expect(Object.keys(ok.json().data.notifications)).toHaveLength(32);
    expect((await req('GET', '/v1/settings/personalization', a.auth)).json().data.notifications).toEqual({ ...named, ...extra(28) });
  });

  it('keeps the four named keys as before: booleans, defaults for those not given', async () => {
    const a = await newTenant(t.app);
    const p = await put(a.auth, { weeklyDigest: true, mentionAlerts: false });
    expect(p.json().data.notifications).toEqual({ emailNotifications: true, pushNotifications: true, weeklyDigest: true, mentionAlerts: false });
    for (const k of ['emailNotifications', 'pushNotifications', 'weeklyDigest', 'mentionAlerts']) {
      const e = errorOf(await put(a.auth, { [k]: 'false' }), 400, 'VALIDATION_ERROR');
      expect(e.details?.field).toBe(`notifications.${k}`);
    }
  });
});

describe('preferences', () => {
  it('merges, reads by key (404 unknown), and bounds size (413) and depth (413)', async () => {
    const a = await newTenant(t.app);
    expect((await req('GET', '/v1/settings/preferences', a.auth)).json().data).toEqual({ preferences: {}, updated_at: null });
    const p = await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { sidebar: { collapsed: true }, pageSize: 50 } });
    expect(p.statusCode).toBe(200);
    await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { pageSize: null, tz: 'UTC' } });
    const g = await req('GET', '/v1/settings/preferences', a.auth);
    expect(g.json().data.preferences).toEqual({ sidebar: { collapsed: true }, tz: 'UTC' });
    expect((await req('GET', '/v1/settings/preferences/sidebar', a.auth)).json().data).toEqual({ key: 'sidebar', value: { collapsed: true } });
    errorOf(await req('GET', '/v1/settings/preferences/pageSize', a.auth), 404, 'NOT_FOUND');
    errorOf(await req('GET', `/v1/settings/preferences/${'p'.repeat(201)}`, a.auth), 400, 'VALIDATION_ERROR');
    errorOf(await req('GET', '/v1/settings/preferences/', a.auth), 400, 'VALIDATION_ERROR');
    const size = errorOf(await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { big: 'x'.repeat(66_000) } }), 413, 'PAYLOAD_TOO_LARGE');
    expect(size.details).toMatchObject({ field: 'preferences', maxBytes: 65536 });
    let deep: unknown = 1;
    for (let i = 0; i < 9; i++) deep = { d: deep };
    const depth = errorOf(await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { deep } }), 413, 'PAYLOAD_TOO_LARGE');
    expect(depth.details).toMatchObject({ field: 'preferences', limit: 8 });
    errorOf(await req('PUT', '/v1/settings/preferences', a.auth, { preferences: [] }), 400, 'VALIDATION_ERROR');
    errorOf(await req('PUT', '/v1/settings/preferences', a.auth, {}), 400, 'VALIDATION_ERROR');
    // Nothing was written by the refused requests.
    expect((await req('GET', '/v1/settings/preferences', a.auth)).json().data.preferences).toEqual({ sidebar: { collapsed: true }, tz: 'UTC' });
  });

  it('concurrent first PUTs of different keys all survive the merge (the missing row is locked too)', async () => {
    const a = await newTenant(t.app);
    const rs = await Promise.all(Array.from({ length: 6 }, (_, i) => req('PUT', '/v1/settings/preferences', a.auth, { preferences: { [`k${i}`]: i } })));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(6).fill(200));
    expect((await req('GET', '/v1/settings/preferences', a.auth)).json().data.preferences).toEqual({ k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5 });
  });

  it('is per user', async () => {
    const a = await newTenant(t.app);
    const m = await memberOf(t.app, a);
    await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { mine: 1 } });
    errorOf(await req('GET', '/v1/settings/preferences/mine', m.auth), 404, 'NOT_FOUND');
  });
});

describe('profile, security, skills, sync-config', () => {
  it('profile shows the caller in this organization', async () => {
    const a = await newTenant(t.app);
    const r = await req('GET', '/v1/settings/profile', a.auth);
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ id: a.userId, email: a.email, role: 'owner', organization: { id: a.orgId }, language: 'en', themeMode: 'system' });
  });

  it('security shows MFA state, the session and counts', async () => {
    const a = await newTenant(t.app);
    await a.apiKey(['settings:read']);
    const r = await req('GET', '/v1/settings/security', a.auth);
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ mfa_enabled: false, credential_kind: 'user', active_sessions: 1, active_api_keys: 1, session_duration_days: 30, step_up_window_seconds: 300 });
    expect(r.json().data.session.id).toBeTruthy();
    const k = await a.apiKey(['settings:read']);
    const rk = await req('GET', '/v1/settings/security', bearer(k));
    expect(rk.json().data).toMatchObject({ credential_kind: 'api_key', session: null });
  });

  it('skills and its ai-skills alias answer the same data; an organization can turn a skill off', async () => {
    const a = await newTenant(t.app);
    await req('PUT', '/v1/settings/org', a.auth, { settings: { ai_skills: { translate: false } } });
    const s1 = await req('GET', '/v1/settings/ai-skills', a.auth);
    const s2 = await req('GET', '/v1/settings/skills', a.auth);
    expect(s1.statusCode).toBe(200);
    expect(s2.json()).toEqual(s1.json());
    expect(s1.json().data.skills.find((s: { key: string }) => s.key === 'translate').enabled).toBe(false);
    expect(s1.json().data.skills.find((s: { key: string }) => s.key === 'summarize').enabled).toBe(true);
    // The alias is deprecated (spec 9): its answers say so, errors too, and name the route to use; the route's do not.
    expect(s2.headers).toMatchObject({ deprecation: '@1767225600', link: '</v1/settings/ai-skills>; rel="successor-version"' });
    const refused = await t.app.inject({ url: '/v1/settings/skills' });
    errorOf(refused, 401, 'AUTH_REQUIRED');
    expect(refused.headers.deprecation).toBe('@1767225600');
    expect(s1.headers.deprecation).toBeUndefined();
  });

  it('sync-config gives spec 2.8 defaults and honours preferences.offline_sync', async () => {
    const a = await newTenant(t.app);
    const d = await req('GET', '/v1/settings/sync-config', a.auth);
    expect(d.json().data).toMatchObject({ enabled: true, max_items: 500, sync_on_reconnect: true, storage_limit_mb: 50 });
    expect((await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { offline_sync: { enabled: false, storage_limit_mb: 200 } } })).statusCode).toBe(200);
    const s = await req('GET', '/v1/settings/sync-config', a.auth);
    expect(s.json().data).toMatchObject({ enabled: false, max_items: 500, storage_limit_mb: 200 });
  });

  it('refuses an offline_sync preference the sync config could not honour (400), storing nothing', async () => {
    const a = await newTenant(t.app);
    for (const [offline, field] of [
      [{ storage_limit_mb: 0 }, 'preferences.offline_sync.storage_limit_mb'], [{ storage_limit_mb: 10_241 }, 'preferences.offline_sync.storage_limit_mb'],
      [{ storage_limit_mb: 1.5 }, 'preferences.offline_sync.storage_limit_mb'], [{ enabled: 'yes' }, 'preferences.offline_sync.enabled'],
      [{ max_items: 9 }, 'preferences.offline_sync.max_items'], ['bad', 'preferences.offline_sync'], [[], 'preferences.offline_sync'],
      [{ resource_types: ['tasks'] }, 'preferences.offline_sync.resource_types'], [{ colour: 'red' }, 'preferences.offline_sync.colour'],
    ] as const) {
      const res = await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { offline_sync: offline } });
      expect(errorOf(res, 400, 'VALIDATION_ERROR').details, JSON.stringify(offline)).toMatchObject({ field });
    }
    expect((await req('GET', '/v1/settings/preferences', a.auth)).json().data.preferences).toEqual({});
    expect((await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { offline_sync: { storage_limit_mb: 10_240, sync_on_reconnect: false } } })).statusCode).toBe(200);
    expect((await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { offline_sync: null } })).statusCode).toBe(200);
  });

  it('the sync config read back and written as the offline_sync preference is accepted (its fixed parts repeated)', async () => {
    const a = await newTenant(t.app);
    const read = (await req('GET', '/v1/preferences/offline-sync', a.auth)).json().data;
    expect(read).toMatchObject({ max_items: 500, resource_types: expect.any(Array) });
    const written = { ...read, enabled: false, resource_types: [...read.resource_types].reverse() };
    expect((await req('PUT', '/v1/settings/preferences', a.auth, { preferences: { offline_sync: written } })).statusCode).toBe(200);
    expect((await req('GET', '/v1/preferences/offline-sync', a.auth)).json().data).toEqual({ ...read, enabled: false });
    // Only the settings are stored (the fixed parts are the config's own).
    expect((await req('GET', '/v1/settings/preferences', a.auth)).json().data.preferences.offline_sync).toEqual({ enabled: false, sync_on_reconnect: true, storage_limit_mb: 50 });
  });

  it('every read route needs a credential', async () => {
    for (const url of ['/v1/settings/personalization', '/v1/settings/preferences', '/v1/settings/preferences/x', '/v1/settings/org/x', '/v1/settings/profile',
      '/v1/settings/security', '/v1/settings/skills', '/v1/settings/ai-skills', '/v1/settings/sync-config', '/v1/settings/views']) {
      errorOf(await t.app.inject({ method: 'GET', url }), 401, 'AUTH_REQUIRED');
    }
  });
});

describe('setting and preference keys are 1-200 characters on write too (spec part 8)', () => {
  it('PUT refuses an empty or 201-character top-level key with 400 VALIDATION_ERROR and writes nothing; 200 is accepted', async () => {
    const a = await newTenant(t.app);
    for (const [url, field] of [['/v1/settings/org', 'settings'], ['/v1/settings/preferences', 'preferences']] as const) {
      for (const key of ['', 'k'.repeat(201), '😀'.repeat(201)]) {
        const e = errorOf(await req('PUT', url, a.auth, { [field]: { ok: 1, [key]: 1 } }), 400, 'VALIDATION_ERROR');
        expect(e.details).toMatchObject({ field, reason: 'KEY_LENGTH', minLength: 1, maxLength: 200 });
      }
      expect((await req('GET', url, a.auth)).json().data[field]).toEqual({});
      const k200 = '😀'.repeat(200); // code points, as GET .../{key} counts them
      expect((await req('PUT', url, a.auth, { [field]: { [k200]: 1 } })).statusCode).toBe(200);
      const one = await req('GET', `${url}/${encodeURIComponent(k200)}`, a.auth);
      expect(one.statusCode).toBe(200);
      expect(one.json().data).toEqual({ key: k200, value: 1 });
      // A null value removes; removing a key that cannot exist is harmless and accepted.
      expect((await req('PUT', url, a.auth, { [field]: { [k200]: null, ['k'.repeat(201)]: null } })).json().data[field]).toEqual({});
    }
  });
});
