import { actor, requirePermission, type ServiceContext } from '../../../core/context.js';
import { AppError, notFound } from '../../../core/errors.js';
import { audit } from '../../../core/audit.js';
import type { Sql } from '../../../core/db/database.js';
import { assertBoundedJson, assertSettingKeys, mergeTopLevel } from '../common.js';
import { settingsRepo } from './settings.repo.js';
import { offlineSyncPreference } from './account.service.js';
import { NOTIFICATION_KEYS_MAX, SETTINGS_BOUNDS, STAY_LOGGED_IN_HOURS, type PersonalizationInput } from './settings.schemas.js';

const has = (o: Record<string, unknown>, k: string) => Object.prototype.hasOwnProperty.call(o, k);

export async function getOrgSettings(ctx: ServiceContext) {
  const p = actor(ctx);
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => settingsRepo.orgSettings(sql, p.orgId));
  if (!row) throw notFound('Organization');
  return { settings: row.settings, updated_at: row.updated_at };
}

export async function getOrgSetting(ctx: ServiceContext, key: string) {
  const { settings } = await getOrgSettings(ctx);
  if (!has(settings, key)) throw notFound(`Setting "${key}"`, { key });
  return { key, value: settings[key] };
}

/** Merges top-level keys into the organization settings (null removes a key); needs org.manage_settings. */
export async function putOrgSettings(ctx: ServiceContext, patch: Record<string, unknown>) {
  const p = requirePermission(ctx, 'org.manage_settings');
  assertSettingKeys('settings', patch);
  const out = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const cur = await settingsRepo.orgSettingsForUpdate(sql, p.orgId);
    if (!cur) throw notFound('Organization');
    const next = mergeTopLevel(cur.settings, patch);
    assertBoundedJson('settings', next, SETTINGS_BOUNDS);
    const row = (await settingsRepo.writeOrgSettings(sql, p.orgId, next))!;
    await audit(sql, ctx, { action: 'organization.settings_updated', targetType: 'organization', targetId: p.orgId, details: { keys: Object.keys(patch) } });
    return row;
  });
  ctx.platform.credentials.invalidate(); // the organization's updated_at moved, which GET /v1/me shows
  return { settings: out.settings, updated_at: out.updated_at };
}

const DEFAULT_NOTIFICATIONS = { emailNotifications: true, pushNotifications: true, weeklyDigest: false, mentionAlerts: true };
const DEFAULT_STAY_HOURS = 24;

/** The largest allowed stayLoggedInHours value not above the organization's cap (never below 1 hour). */
export function clampStayHours(hours: number, sessionDurationDays: number): number {
  const cap = sessionDurationDays * 24;
  if (hours <= cap) return hours;
  return [...STAY_LOGGED_IN_HOURS].reverse().find((h) => h <= cap) ?? STAY_LOGGED_IN_HOURS[0];
}

/** The personalization answer from a stored document (or none): defaults filled in, hours clamped. */
export function personalizationView(doc: Record<string, unknown> | undefined, updatedAt: string | null, sessionDurationDays: number) {
  const d = doc ?? {};
  const stay = typeof d.stayLoggedInHours === 'number' ? d.stayLoggedInHours : DEFAULT_STAY_HOURS;
  return {
    themeMode: (d.themeMode as 'light' | 'dark' | 'system') ?? 'system',
    language: (d.language as string) ?? 'en',
    stayLoggedInHours: clampStayHours(stay, sessionDurationDays) as 1 | 8 | 24 | 168 | 720,
    notifications: { ...DEFAULT_NOTIFICATIONS, ...((d.notifications as Record<string, boolean>) ?? {}) },
    maxStayLoggedInHours: sessionDurationDays * 24,
    updated_at: updatedAt,
  };
}

async function sessionDays(sql: Sql, orgId: string, fallback: number): Promise<number> {
  return (await settingsRepo.orgSettings(sql, orgId))?.session_duration_days ?? fallback;
}

/** The caller's personalization in this organization; defaults until saved. */
export async function getPersonalization(ctx: ServiceContext) {
  const p = actor(ctx);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const [doc, days] = [await settingsRepo.userDoc(sql, p.orgId, p.userId, 'personalization'), await sessionDays(sql, p.orgId, p.org.sessionDurationDays)];
    return personalizationView(doc?.value, doc?.updated_at ?? null, days);
  });
}

/**
 * The notifications object as stored and answered: the four named keys' defaults, then the caller's keys (extra
 * boolean keys included). Counted after the defaults so a GET answer can always be sent back by PUT.
 */
function withDefaultNotifications(given: Record<string, boolean>): Record<string, boolean> {
  const out = { ...DEFAULT_NOTIFICATIONS, ...given };
  if (Object.keys(out).length > NOTIFICATION_KEYS_MAX) {
    throw new AppError('VALIDATION_ERROR', `Field "notifications" must NOT have more than ${NOTIFICATION_KEYS_MAX} keys, counting the four named ones (defaults fill in those not given)`,
      { field: 'notifications', rule: 'maxProperties', limit: NOTIFICATION_KEYS_MAX });
  }
  return out;
}

/** Saves the caller's personalization; stayLoggedInHours is stored clamped to the organization's cap. */
export async function putPersonalization(ctx: ServiceContext, input: PersonalizationInput) {
  const p = actor(ctx);
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const days = await sessionDays(sql, p.orgId, p.org.sessionDurationDays);
    const prev = await settingsRepo.userDocForUpdate(sql, p.orgId, p.userId, 'personalization');
    const stay = input.stayLoggedInHours ?? (prev?.value.stayLoggedInHours as number | undefined) ?? DEFAULT_STAY_HOURS;
    const value = {
      themeMode: input.themeMode, language: input.language,
      notifications: withDefaultNotifications(input.notifications),
      stayLoggedInHours: clampStayHours(stay, days),
    };
    const row = await settingsRepo.writeUserDoc(sql, p.orgId, p.userId, 'personalization', value);
    await audit(sql, ctx, { action: 'settings.personalization_updated', targetType: 'user', targetId: p.userId });
    return personalizationView(row.value, row.updated_at, days);
  });
}

export async function getPreferences(ctx: ServiceContext) {
  const p = actor(ctx);
  const doc = await ctx.platform.db.tenant(p.orgId, (sql) => settingsRepo.userDoc(sql, p.orgId, p.userId, 'preferences'));
  return { preferences: doc?.value ?? {}, updated_at: doc?.updated_at ?? null };
}

export async function getPreference(ctx: ServiceContext, key: string) {
  const { preferences } = await getPreferences(ctx);
  if (!has(preferences, key)) throw notFound(`Preference "${key}"`, { key });
  return { key, value: preferences[key] };
}

/** Merges top-level keys into the caller's preferences (null removes); 413 beyond 64 KB or depth 8. */
export async function putPreferences(ctx: ServiceContext, given: Record<string, unknown>) {
  const p = actor(ctx);
  assertSettingKeys('preferences', given);
  const patch = Object.hasOwn(given, 'offline_sync') ? { ...given, offline_sync: offlineSyncPreference(given.offline_sync) } : given;
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const prev = await settingsRepo.userDocForUpdate(sql, p.orgId, p.userId, 'preferences');
    const next = mergeTopLevel(prev?.value ?? {}, patch);
    assertBoundedJson('preferences', next, SETTINGS_BOUNDS);
    const row = await settingsRepo.writeUserDoc(sql, p.orgId, p.userId, 'preferences', next);
    await audit(sql, ctx, { action: 'settings.preferences_updated', targetType: 'user', targetId: p.userId, details: { keys: Object.keys(patch) } });
    return { preferences: row.value, updated_at: row.updated_at };
  });
}
