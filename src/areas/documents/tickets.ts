import type { Database } from '../../core/db/database.js';
import type { RedisConnection } from '../../adapters/redis/client.js';
import { AppError } from '../../core/errors.js';
import { randomHex, sha256Hex } from '../../core/crypto.js';

export const TICKET_TTL_SECONDS = 60;

/** Who a collaboration ticket was issued to; checked again (session, membership) when it is redeemed. */
export interface TicketClaims { orgId: string; userId: string; sessionId: string | null; apiKeyId: string | null; scope: string | null }

/**
 * Single-use, 60-second collaboration tickets (spec 4.5, 8). `take` is atomic: of two concurrent
 * redemptions exactly one gets the claims. PostgreSQL by default, Redis (GETDEL) with REDIS_URL.
 */
export interface TicketStore {
  issue(claims: TicketClaims, ttlSeconds?: number): Promise<{ ticket: string; expiresInSeconds: number }>;
  take(ticket: string): Promise<TicketClaims | null>;
}

const TICKET_RE = /^[0-9a-f]{64}$/;

/** Default store: PostgreSQL, so every node of a deployment accepts a ticket any node issued. Only hashes are kept. */
export class PgTicketStore implements TicketStore {
  constructor(private readonly db: Database) {}

  async issue(c: TicketClaims, ttlSeconds = TICKET_TTL_SECONDS) {
    const ticket = randomHex(32);
    await this.db.sys.exec(`INSERT INTO collaboration_tickets (ticket_hash, org_id, user_id, session_id, api_key_id, scope, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`, [sha256Hex(ticket), c.orgId, c.userId, c.sessionId, c.apiKeyId, c.scope, ttlSeconds]);
    // Expired rows are few (60 s lifetime); sweep some on the way.
    void this.db.sys.exec(`DELETE FROM collaboration_tickets WHERE expires_at < now() - interval '1 minute'`).catch(() => {});
    return { ticket, expiresInSeconds: ttlSeconds };
  }

  async take(ticket: string) {
    if (!TICKET_RE.test(ticket)) return null;
    const row = await this.db.sys.one<{ org_id: string; user_id: string; session_id: string | null; api_key_id: string | null; scope: string | null; live: boolean }>(
      `DELETE FROM collaboration_tickets WHERE ticket_hash = $1 RETURNING org_id, user_id, session_id, api_key_id, scope, expires_at > now() AS live`,
      [sha256Hex(ticket)]);
    if (!row || !row.live) return null;
    return { orgId: row.org_id, userId: row.user_id, sessionId: row.session_id, apiKeyId: row.api_key_id, scope: row.scope };
  }
}

/** In-process store for a single node (COLLAB_TICKET_STORE=memory). */
export class MemoryTicketStore implements TicketStore {
  private tickets = new Map<string, { claims: TicketClaims; until: number }>();
  async issue(claims: TicketClaims, ttlSeconds = TICKET_TTL_SECONDS) {
    const ticket = randomHex(32);
    const now = Date.now();
    for (const [k, v] of this.tickets) if (v.until < now) this.tickets.delete(k);
    this.tickets.set(sha256Hex(ticket), { claims, until: now + ttlSeconds * 1000 });
    return { ticket, expiresInSeconds: ttlSeconds };
  }
  async take(ticket: string) {
    if (!TICKET_RE.test(ticket)) return null;
    const key = sha256Hex(ticket);
    const hit = this.tickets.get(key);
    this.tickets.delete(key);
    return hit && hit.until > Date.now() ? hit.claims : null;
  }
}

const storeDown = (): never => { throw new AppError('SERVICE_UNAVAILABLE', 'The ticket store (Redis) is unavailable; retry shortly'); };

/** REDIS_URL: tickets in the deployment's Redis, by hash, expiring with their lifetime; GETDEL spends one atomically. */
export class RedisTicketStore implements TicketStore {
  constructor(private readonly redis: RedisConnection, private readonly prefix = 'platform:collab-ticket:') {}

  async issue(claims: TicketClaims, ttlSeconds = TICKET_TTL_SECONDS) {
    const ticket = randomHex(32);
    await this.redis.setPx(this.prefix + sha256Hex(ticket), JSON.stringify(claims), ttlSeconds * 1000).catch(storeDown);
    return { ticket, expiresInSeconds: ttlSeconds };
  }

  async take(ticket: string) {
    if (!TICKET_RE.test(ticket)) return null;
    const raw = await this.redis.getDel(this.prefix + sha256Hex(ticket)).catch(storeDown);
    return raw === null ? null : (JSON.parse(raw) as TicketClaims);
  }
}
