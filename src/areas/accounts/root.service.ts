import { AppError } from '../../core/errors.js';
import type { Platform } from '../../core/context.js';
import { uuidv7 } from '../../core/ids.js';
import { hashPassword } from '../../core/crypto.js';
import { audit } from '../../core/audit.js';
import { hashApiKey, parseApiKey } from '../../core/auth/api-key-format.js';
import { safeEqual } from '../../core/crypto.js';
import { ALL_SCOPES } from '../../core/auth/permissions.js';
import { accountsRepo } from './accounts.repo.js';
import { apiKeysRepo } from './api-keys.repo.js';
import { membersRepo } from './members.repo.js';
import { createOrganizationRow } from './organizations.service.js';
import { insertApiKey } from './api-keys.service.js';
import { lockNamed } from '../../core/db/locks.js';
import { PASSWORD_RULE, assertPassword } from './passwords.js';

const ROOT_KEY_LIFETIME_MS = 364 * 86_400_000; // within the one-year limit of every key
/** The names of the root keys this bootstrap makes (the keys a new ROOT_API_KEY replaces). */
const ROOT_KEY_NAMES = { generated: 'root (first start)', given: 'root (ROOT_API_KEY)' };

/**
 * First start: creates the platform root organization, its super-admin and a root API key with every scope.
 * The key is returned (to print once) only when generated here; ROOT_API_KEY installs a given key instead, renews
 * it at every start, and on a database that had another bootstrap root key revokes that one (rotation).
 * Safe to run on every start and from several nodes at once (with the same ROOT_API_KEY).
 */
export async function ensureRoot(platform: Platform): Promise<{ createdOrg: boolean; generatedKey: string | null; orgId: string }> {
  // Checked at every start, though used only by the first: the most powerful account gets the rule every user gets.
  const rootPassword = process.env.ROOT_ADMIN_PASSWORD;
  if (rootPassword) {
    try { assertPassword(rootPassword); } catch { throw new Error(`ROOT_ADMIN_PASSWORD must be ${PASSWORD_RULE}`); }
  }
  const { config, db } = platform;
  if (config.rootApiKey && !parseApiKey(config.rootApiKey)) {
    throw new AppError('VALIDATION_ERROR', 'ROOT_API_KEY is malformed: expected svc_live_<8 alphanumerics>_<32 or 64 hex/base64url chars>');
  }
  let revokedAny = false;
  const result = await db.systemTx(async (sql) => {
    await lockNamed(sql, 'root-setup');
    let root = await accountsRepo.rootOrg(sql);
    let createdOrg = false;
    let adminId: string;
    const ctx = { platform, principal: null, requestId: 'bootstrap', ip: null };
    if (!root) {
      const org = await createOrganizationRow(sql, platform, 'Platform Root', undefined, { isRoot: true });
      root = { id: org.id };
      createdOrg = true;
      const existing = await accountsRepo.userByEmail(sql, config.rootAdminEmail);
      adminId = existing?.id ?? uuidv7();
      if (!existing) {
        const pw = rootPassword ? await hashPassword(rootPassword) : null;
        await accountsRepo.insertUser(sql, { id: adminId, email: config.rootAdminEmail, name: 'Platform Administrator', passwordHash: pw });
      }
      await accountsRepo.insertMembership(sql, org.id, adminId, 'super_admin');
      await audit(sql, ctx, { orgId: org.id, action: 'organization.created', targetType: 'organization', targetId: org.id, details: { root: true } });
    } else {
      const admin = await membersRepo.firstSuperAdmin(sql, root.id);
      adminId = admin!.user_id;
    }
    const expiresAt = new Date(Date.now() + ROOT_KEY_LIFETIME_MS).toISOString();
    let generatedKey: string | null = null;
    if (config.rootApiKey) {
      const prefix = parseApiKey(config.rootApiKey)!.prefix;
      const have = await apiKeysRepo.byPrefix(sql, prefix);
      // Only a root key this bootstrap installed is the configured key: not a tenant's key that happens to be set here.
      const isRootKey = have && have.org_id === root.id && Object.values(ROOT_KEY_NAMES).includes(have.name);
      if (have && (!isRootKey || !safeEqual(have.key_hash, hashApiKey(config.rootApiKey)))) {
        throw new AppError('VALIDATION_ERROR', `ROOT_API_KEY: its prefix "${prefix}" belongs to another key; set a newly generated key`);
      }
      if (!have) {
        const k = await insertApiKey(sql, root.id, adminId, ROOT_KEY_NAMES.given, ALL_SCOPES, expiresAt, config.rootApiKey);
        await audit(sql, ctx, { orgId: root.id, action: 'api_key.created', targetType: 'api_key', targetId: k.id, details: { root: true } });
        // The configured key is the root key: the one printed at the first start, or an earlier ROOT_API_KEY, stops
        // working (rotation: set a new ROOT_API_KEY and restart). Keys made through the API are not touched.
        const replaced = await apiKeysRepo.revokeNamedExcept(sql, root.id, Object.values(ROOT_KEY_NAMES), prefix);
        for (const r of replaced) {
          await audit(sql, ctx, { orgId: root.id, action: 'api_key.revoked', targetType: 'api_key', targetId: r.id, details: { root: true, replaced_by: k.id } });
        }
        revokedAny = replaced.length > 0;
      } else if (!have.revoked_at) {
        // Renewed at every start: keys live at most a year, and a configured key must not expire under a running platform.
        await apiKeysRepo.setExpiry(sql, have.id, expiresAt);
      } else {
        // Revoked through the API (or replaced by a later ROOT_API_KEY): it stays revoked, and the operator is told.
        platform.log.warn({ prefix }, 'ROOT_API_KEY names a revoked key: it is not reinstated and does not work; set a newly generated key');
      }
    } else if (createdOrg) {
      const k = await insertApiKey(sql, root.id, adminId, ROOT_KEY_NAMES.generated, ALL_SCOPES, expiresAt);
      await audit(sql, ctx, { orgId: root.id, action: 'api_key.created', targetType: 'api_key', targetId: k.id, details: { root: true } });
      generatedKey = k.key;
    }
    return { createdOrg, generatedKey, orgId: root.id };
  });
  // After the commit: a node that re-read the key while the transaction ran would otherwise cache it as still valid.
  if (revokedAny) platform.credentials.invalidate();
  return result;
}
