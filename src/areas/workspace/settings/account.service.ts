import { actor, type ServiceContext } from '../../../core/context.js';
import { notFound, validation } from '../../../core/errors.js';
import { STEP_UP_WINDOW_MS } from '../../../core/http/guard.js';
import { accountRepo, settingsRepo } from './settings.repo.js';
import { SYNC_PAGE_MAX, SYNC_TYPES } from '../../sync/sync.repo.js';

/** The caller's profile in this organization, with the display choices of their personalization. */
export async function getProfile(ctx: ServiceContext) {
  const p = actor(ctx);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const user = await accountRepo.user(sql, p.userId);
    if (!user) throw notFound('User');
    const pers = (await settingsRepo.userDoc(sql, p.orgId, p.userId, 'personalization'))?.value ?? {};
    return {
      ...user, role: p.role,
      organization: { id: p.org.id, name: p.org.name, slug: p.org.slug },
      language: (pers.language as string) ?? 'en',
      themeMode: (pers.themeMode as 'light' | 'dark' | 'system') ?? 'system',
    };
  });
}

/** The caller's security posture: MFA, the current session, active sessions and keys, the session cap. */
export async function getSecurity(ctx: ServiceContext) {
  const p = actor(ctx);
  // mfa_enabled is not readable by the tenant role (users is shared); read the caller's own row as owner.
  const mfa = await accountRepo.mfaEnabled(ctx.platform.db.sys, p.userId);
  return ctx.platform.db.tenant(p.orgId, async (sql) => {
    const counts = await accountRepo.liveCredentialCounts(sql, p.orgId, p.userId);
    const session = p.sessionId ? (await accountRepo.session(sql, p.orgId, p.sessionId)) ?? null : null;
    return {
      mfa_enabled: mfa?.mfa_enabled ?? false, credential_kind: p.kind, session,
      active_sessions: counts.sessions, active_api_keys: counts.keys,
      session_duration_days: p.org.sessionDurationDays, step_up_window_seconds: STEP_UP_WINDOW_MS / 1000,
    };
  });
}

/** Built-in assistant skills; an organization turns one off with settings `ai_skills: {<key>: false}`. */
export const AI_SKILLS = [
  { key: 'summarize', name: 'Summarize', description: 'Summarize documents, threads and task activity' },
  { key: 'task_breakdown', name: 'Task breakdown', description: 'Split a spec or a task into subtasks' },
  { key: 'draft_reply', name: 'Draft reply', description: 'Draft replies to messages and comments' },
  { key: 'translate', name: 'Translate', description: 'Translate text into the language of your personalization' },
  { key: 'search', name: 'Workspace search', description: 'Answer questions from the documents and tasks you can see' },
] as const;

/** GET /v1/settings/ai-skills and its alias /v1/settings/skills. */
export async function getSkills(ctx: ServiceContext) {
  const p = actor(ctx);
  const org = await ctx.platform.db.tenant(p.orgId, (sql) => settingsRepo.orgSettings(sql, p.orgId));
  const overrides = (org?.settings.ai_skills ?? {}) as Record<string, unknown>;
  return { skills: AI_SKILLS.map((s) => ({ ...s, enabled: overrides[s.key] !== false })) };
}

const STORAGE_LIMIT_MB = { min: 1, max: 10_240 };

/**
 * The preference `offline_sync` as PUT /v1/settings/preferences may store it: an object of `enabled` and
 * `sync_on_reconnect` (booleans) and `storage_limit_mb` (integer 1-10240), each optional; null removes it; `max_items`
 * and `resource_types` only with the values the sync config always has (a client writing back what it read), and
 * then left out of what is stored. Checked
 * when written, so a client never believes a setting was saved that the sync config would then ignore.
 */
export function offlineSyncPreference(value: unknown): Record<string, unknown> | null {
  if (value === null) return null;
  const field = 'preferences.offline_sync';
  if (typeof value !== 'object' || Array.isArray(value)) throw validation(`${field} must be an object`, { field });
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === 'enabled' || k === 'sync_on_reconnect') {
      if (typeof v !== 'boolean') throw validation(`${field}.${k} must be true or false`, { field: `${field}.${k}` });
    } else if (k === 'storage_limit_mb') {
      if (!Number.isInteger(v) || (v as number) < STORAGE_LIMIT_MB.min || (v as number) > STORAGE_LIMIT_MB.max) {
        throw validation(`${field}.storage_limit_mb must be an integer from ${STORAGE_LIMIT_MB.min} to ${STORAGE_LIMIT_MB.max}`, { field: `${field}.storage_limit_mb` });
      }
    } else if (k === 'max_items') {
      // Read-only parts of the sync config (spec 2.8): a client writing back the object it read is accepted as long
      // as it repeats them; a different value would be a setting the config ignores.
      if (v !== SYNC_PAGE_MAX) throw validation(`${field}.max_items is always ${SYNC_PAGE_MAX}`, { field: `${field}.max_items` });
    } else if (k === 'resource_types') {
      const same = Array.isArray(v) && v.length === SYNC_TYPES.length && SYNC_TYPES.every((t) => v.includes(t));
      if (!same) throw validation(`${field}.resource_types is always ${JSON.stringify(SYNC_TYPES)}`, { field: `${field}.resource_types` });
    } else {
      throw validation(`${field} has no setting "${k}"; it takes enabled, sync_on_reconnect and storage_limit_mb (max_items and resource_types only as the sync config has them)`, { field: `${field}.${k}`, reason: 'UNKNOWN_FIELD' });
    }
  }
  // The fixed parts are not stored: the config always has its own, and a stored copy would be refused later (a new
  // sync type) when written back.
  const { max_items: _max, resource_types: _types, ...settings } = value as Record<string, unknown>;
  return settings;
}

/** Spec 2.8 offline sync preferences; the user may override enabled, sync_on_reconnect, storage_limit_mb in preferences.offline_sync. */
export async function getSyncConfig(ctx: ServiceContext) {
  const p = actor(ctx);
  const prefs = (await ctx.platform.db.tenant(p.orgId, (sql) => settingsRepo.userDoc(sql, p.orgId, p.userId, 'preferences')))?.value ?? {};
  return syncConfigOf((prefs.offline_sync ?? {}) as Record<string, unknown>);
}

/** The sync config of an `offline_sync` preference (`{}`: the spec 2.8 defaults). */
export function syncConfigOf(o: Record<string, unknown>) {
  // Values stored before they were checked on write may still be out of range: those fall back to the default.
  const mb = Number.isInteger(o.storage_limit_mb) && (o.storage_limit_mb as number) >= STORAGE_LIMIT_MB.min && (o.storage_limit_mb as number) <= STORAGE_LIMIT_MB.max ? o.storage_limit_mb as number : 50;
  return {
    enabled: typeof o.enabled === 'boolean' ? o.enabled : true,
    max_items: SYNC_PAGE_MAX,
    sync_on_reconnect: typeof o.sync_on_reconnect === 'boolean' ? o.sync_on_reconnect : true,
    storage_limit_mb: mb,
    resource_types: [...SYNC_TYPES], // the types GET /v1/sync/{resourceType} serves, as /v1/preferences/offline-sync says
  };
}
