import { randomUUID } from 'node:crypto';
import { AppError } from '../errors.js';
import type { Database } from '../db/database.js';
import { safeEqual } from '../crypto.js';
import { hashApiKey, looksLikeApiKey, parseApiKey } from './api-key-format.js';
import type { TokenSigner } from './jwt.js';
import { ROLE_PERMISSIONS, type Role } from './permissions.js';
import type { OrgSnapshot, Principal } from './principal.js';

interface Row {
  user_id: string; email: string; user_name: string; user_active: boolean; token_version: number;
  org_id: string; org_name: string; org_slug: string; plan_tier: string; subscription_status: string;
  features: string[]; is_root: boolean; session_duration_days: number; org_deleted_at: string | null;
  org_created_at: string; org_updated_at: string;
  role: Role | null;
}

const PRINCIPAL_COLUMNS = `
  u.id AS user_id, u.email, u.name AS user_name, u.is_active AS user_active, u.token_version,
  o.id AS org_id, o.name AS org_name, o.slug AS org_slug, o.plan_tier, o.subscription_status, o.features,
  o.is_root, o.session_duration_days, o.deleted_at AS org_deleted_at, o.created_at AS org_created_at,
  o.updated_at AS org_updated_at, m.role`;

function orgOf(r: Row): OrgSnapshot {
  return { id: r.org_id, name: r.org_name, slug: r.org_slug, planTier: r.plan_tier, subscriptionStatus: r.subscription_status,
    features: r.features, isRoot: r.is_root, sessionDurationDays: r.session_duration_days,
    createdAt: r.org_created_at, updatedAt: r.org_updated_at };
}

/**
 * Resolves a bearer credential to a Principal. Results are cached in memory for a short TTL; any change
 * that can revoke a credential (logout, key revocation, membership or entitlement change) calls
 * `invalidate()`, which empties the cache at once on this process and announces it on CREDENTIALS_CHANNEL, so every
 * other process on the database (other instances, a server after a CLI command) empties its cache within
 * milliseconds too. While a process's listener is down, the TTL is what bounds how long a revoked credential lasts there.
 */
export const CREDENTIALS_CHANNEL = 'credentials_changed';

const SESSION_EXPIRED = 'Session has expired; sign in again';
const KEY_EXPIRED = 'API key has expired; create a new one';

type KeyRow = Row & { key_id: string; key_hash: string; scopes: string[] | null; expires_at: string; revoked_at: string | null };
const KEY_SELECT = `SELECT k.id AS key_id, k.key_hash, k.scopes, k.expires_at, k.revoked_at, ${PRINCIPAL_COLUMNS}
         FROM api_keys k
         JOIN organizations o ON o.id = k.org_id
         JOIN users u ON u.id = k.created_by_user_id
         LEFT JOIN memberships m ON m.org_id = k.org_id AND m.user_id = k.created_by_user_id`;

type SessionRow = Row & { session_org: string; revoked_at: string | null; mfa_at: string | null; expires_at: string };
const SESSION_SELECT = `SELECT s.org_id AS session_org, s.revoked_at, s.mfa_at, s.expires_at, ${PRINCIPAL_COLUMNS}
         FROM sessions s
         JOIN users u ON u.id = s.user_id
         JOIN organizations o ON o.id = s.org_id
         LEFT JOIN memberships m ON m.org_id = s.org_id AND m.user_id = s.user_id`;

/** How often an API key's last_used_at is written at most. */
const KEY_USE_WRITE_MS = 60_000;

export class CredentialResolver {
  private cache = new Map<string, { principal: Principal; until: number; tokenExp?: number; expiredMessage?: string }>();
  private listeners = new Set<() => void>();
  private lastUsedWritten = new Map<string, number>();
  /** Bumped by every invalidation: a lookup that started before one is answered but not cached. */
  private generation = 0;
  /** Our own announcements come back to us; they need no second clear. */
  private readonly instance = randomUUID();
  private announced: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Database, private readonly signer: TokenSigner, private readonly ttlMs: number) {
    db.listener.subscribe(CREDENTIALS_CHANNEL, {
      notify: (from) => { if (from !== this.instance) this.clear(); },
      reset: () => this.clear(),
    });
  }

  invalidate(): void {
    this.clear();
    const sent = this.db.sys.exec(`SELECT pg_notify('${CREDENTIALS_CHANNEL}', $1)`, [this.instance]).catch(() => {});
    this.announced = Promise.all([this.announced, sent]);
  }

  /**
   * Calls `listener` after every cache clear: a local invalidate(), another process's announcement, or a reconnect of
   * the listener (announcements may have been missed). Holders of long-lived connections (WebSockets) re-check their
   * credential then. Returns the unsubscribe function.
   */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  /** Counts the changes seen so far: a connection authenticated before a change it was not yet subscribed to re-checks. */
  get changes(): number { return this.generation; }

  /** Resolves once every invalidation so far has been announced (awaited before the platform closes, e.g. after a CLI command). */
  async settled(): Promise<void> { await this.announced; }

  private clear(): void {
    this.generation++;
    this.cache.clear();
    for (const l of [...this.listeners]) {
      try { l(); } catch { /* a listener's failure must not stop the others or the invalidation */ }
    }
  }

  /** The cached principal of a token, without waiting (undefined when it must be looked up); throws when it expired. */
  /**
   * On every insertion: entries are in expiry order (each is inserted last, with the same TTL), so the expired ones
   * are at the front and the pass stops at the first live one: the work is the number of entries it removes.
   */
  private sweep(now: number): void {
    for (const [token, entry] of this.cache) {
      if (entry.until > now) break;
      this.cache.delete(token);
    }
  }

  cached(token: string): Principal | undefined {
    const now = Date.now();
    const hit = this.cache.get(token);
    if (!hit) return undefined;
    if (hit.until <= now) { this.cache.delete(token); return undefined; }
    if (hit.tokenExp && hit.tokenExp * 1000 <= now) throw new AppError('AUTH_TOKEN_EXPIRED', hit.expiredMessage ?? 'Token has expired; refresh it or sign in again');
    if (hit.principal.apiKeyId) this.touchKey(hit.principal.apiKeyId, hit.principal.orgId, now);
    return hit.principal;
  }

  async resolve(token: string): Promise<Principal> {
    const hit = this.cached(token);
    if (hit) return hit;
    const now = Date.now();
    const generation = this.generation;
    const { principal, tokenExp, expiredMessage } = looksLikeApiKey(token) ? await this.fromApiKey(token) : await this.fromJwt(token);
    // Entries past their TTL go when their token comes back; those whose token never does are swept here.
    this.sweep(now);
    if (this.cache.size > 50_000) this.cache.clear();
    if (generation === this.generation) {
      this.cache.delete(token); // re-inserted at the end: the map stays in expiry order (one TTL for all)
      this.cache.set(token, { principal, until: now + this.ttlMs, tokenExp, expiredMessage });
    }
    if (principal.apiKeyId) this.touchKey(principal.apiKeyId, principal.orgId, now);
    return principal;
  }

  /**
   * The principal of a credential already admitted (an open WebSocket), looked up again by its session or key id
   * rather than by the token: the same rules as resolve() (revocation, session or key expiry, token version,
   * membership, organization), but an access token's own 15-minute `exp` does not end a connection opened with it.
   * Not cached; called after credential changes, not per request.
   */
  async recheck(p: Principal): Promise<Principal> {
    if (p.kind === 'api_key') {
      if (!p.apiKeyId) throw new AppError('INVALID_API_KEY', 'API key is not recognised');
      return this.keyPrincipal(await this.db.sys.one<KeyRow>(`${KEY_SELECT} WHERE k.id = $1`, [p.apiKeyId])).principal;
    }
    if (!p.sessionId || p.tokenVersion === undefined) throw new AppError('AUTH_TOKEN_INVALID', 'Session has ended; sign in again');
    const row = await this.db.sys.one<SessionRow>(`${SESSION_SELECT} WHERE s.id = $1`, [p.sessionId]);
    return this.sessionPrincipal(row, { sid: p.sessionId, org: p.orgId, sub: p.userId, ver: p.tokenVersion }).principal;
  }

  private async fromApiKey(token: string): Promise<{ principal: Principal; tokenExp?: number; expiredMessage?: string }> {
    const parsed = parseApiKey(token);
    if (!parsed) throw new AppError('INVALID_API_KEY', 'API key is malformed; expected svc_live_<8-char prefix>_<secret>');
    const row = await this.db.sys.one<KeyRow>(`${KEY_SELECT} WHERE k.prefix = $1`, [parsed.prefix]);
    if (!row || !safeEqual(row.key_hash, hashApiKey(token))) throw new AppError('INVALID_API_KEY', 'API key is not recognised');
    return this.keyPrincipal(row);
  }

  private keyPrincipal(row: KeyRow | undefined): { principal: Principal; tokenExp: number; expiredMessage: string } {
    if (!row) throw new AppError('INVALID_API_KEY', 'API key is not recognised');
    if (row.revoked_at) throw new AppError('INVALID_API_KEY', 'API key has been revoked');
    if (row.org_deleted_at) throw new AppError('INVALID_API_KEY', 'API key belongs to an organization that no longer exists');
    if (!row.role) throw new AppError('INVALID_API_KEY', 'API key creator is no longer a member of the organization');
    if (!row.user_active) throw new AppError('INVALID_API_KEY', 'API key creator\'s account is deactivated');
    if (Date.parse(row.expires_at) <= Date.now()) throw new AppError('AUTH_TOKEN_EXPIRED', KEY_EXPIRED);
    return {
      principal: {
        kind: 'api_key', userId: row.user_id, email: row.email, name: row.user_name, orgId: row.org_id, org: orgOf(row),
        role: row.role, permissions: ROLE_PERMISSIONS[row.role], scopes: row.scopes, legacyKey: row.scopes === null,
        apiKeyId: row.key_id, keyExpiresAt: new Date(row.expires_at).toISOString(),
      },
      tokenExp: Math.floor(Date.parse(row.expires_at) / 1000),
      expiredMessage: KEY_EXPIRED,
    };
  }

  /**
   * An access token is valid while its own `exp` and its session's `expires_at` both lie ahead: a session past its
   * expiry is AUTH_TOKEN_EXPIRED (no refresh helps then), and the cache entry ends at the earlier of the two.
   */
  private async fromJwt(token: string): Promise<{ principal: Principal; tokenExp: number; expiredMessage?: string }> {
    if (token.split('.').length !== 3) throw new AppError('AUTH_TOKEN_INVALID', 'Bearer token is neither an API key nor a JWT');
    const claims = await this.signer.verify(token, 'access');
    const row = await this.db.sys.one<SessionRow>(`${SESSION_SELECT} WHERE s.id = $1`, [String(claims.sid)]);
    const { principal, sessionExp } = this.sessionPrincipal(row, { sid: String(claims.sid), org: claims.org, sub: claims.sub, ver: claims.ver });
    const sessionFirst = sessionExp < claims.exp;
    return { principal, tokenExp: sessionFirst ? sessionExp : claims.exp, expiredMessage: sessionFirst ? SESSION_EXPIRED : undefined };
  }

  private sessionPrincipal(row: SessionRow | undefined, claims: { sid: string; org: unknown; sub: string; ver: unknown }): { principal: Principal; sessionExp: number } {
    if (!row || row.revoked_at || row.session_org !== claims.org || row.user_id !== claims.sub) {
      throw new AppError('AUTH_TOKEN_INVALID', 'Session has ended; sign in again');
    }
    if (row.token_version !== claims.ver || !row.user_active) throw new AppError('AUTH_TOKEN_INVALID', 'Token has been revoked; sign in again');
    if (row.org_deleted_at || !row.role) throw new AppError('AUTH_TOKEN_INVALID', 'Token is no longer valid for this organization');
    const sessionEnds = Date.parse(row.expires_at);
    if (!(sessionEnds > Date.now())) throw new AppError('AUTH_TOKEN_EXPIRED', SESSION_EXPIRED);
    return {
      principal: {
        kind: 'user', userId: row.user_id, email: row.email, name: row.user_name, orgId: row.org_id, org: orgOf(row),
        role: row.role, permissions: ROLE_PERMISSIONS[row.role], scopes: null, legacyKey: false,
        sessionId: claims.sid, mfaAt: row.mfa_at, tokenVersion: row.token_version,
      },
      // Whole seconds, rounded down: a cache entry never outlives the session.
      sessionExp: Math.floor(sessionEnds / 1000),
    };
  }

  /**
   * last_used_at is written at most once a minute per key, off the request path. The map remembers only the writes of
   * the last minute: each write goes to its end, so the older ones are at the front and are dropped there (it held
   * every key ever used, revoked ones included).
   */
  private touchKey(keyId: string, orgId: string, now: number): void {
    const last = this.lastUsedWritten.get(keyId) ?? 0;
    if (now - last < KEY_USE_WRITE_MS) return;
    this.lastUsedWritten.delete(keyId);
    this.lastUsedWritten.set(keyId, now);
    for (const [id, at] of this.lastUsedWritten) {
      if (now - at < KEY_USE_WRITE_MS) break;
      this.lastUsedWritten.delete(id);
    }
    void this.db.sys.exec(`UPDATE api_keys SET last_used_at = now() WHERE org_id = $1 AND id = $2`, [orgId, keyId]).catch(() => {});
  }
}
