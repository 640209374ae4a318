import { AppError } from '../../core/errors.js';

/**
 * The 429 of a WebSocket refused before the upgrade because something its caller holds open on this node is at its
 * bound (`reason`: COLLAB_ROOMS for an organization's rooms, SOCKETS_PER_USER for a principal's sockets): one shape,
 * `details: {limit, retryAfterSeconds, reason}` and `Retry-After`, so that clients handle every such refusal alike.
 */
export function tooManyOpen(message: string, limit: number, reason: 'COLLAB_ROOMS' | 'SOCKETS_PER_USER', retryAfterSeconds: number): AppError {
  return new AppError('RATE_LIMIT_EXCEEDED', message, { limit, retryAfterSeconds, reason }, { headers: { 'Retry-After': String(retryAfterSeconds) } });
}

/**
 * How long a client refused for too many sockets is asked to wait: its own sockets free their places when they close,
 * and a dead peer's within two heartbeats (WS_HEARTBEAT_MS); the same as a refusal for too many rooms.
 */
export const SOCKETS_RETRY_AFTER_SECONDS = 30;

/**
 * Whom a socket counts against: the API key for a key credential, else the user behind the session. A key is its own
 * credential (its own scopes, revoked alone, usually a program running elsewhere): counted against its creator, an
 * integration's sockets would lock that user out of the editor. The user id is the same in every organization, so a
 * member of several organizations has one bound, not one per organization. The principal (and a ticket's claims)
 * offers both ids: `apiKeyId` is set only for a key.
 */
export function socketOwner(p: { userId: string; apiKeyId?: string | null }): string {
  return p.apiKeyId ? `key:${p.apiKeyId}` : `user:${p.userId}`;
}

/** The part of a connection (the request's TCP socket) the quota watches. */
export interface Connection {
  readonly destroyed: boolean;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * WebSockets open on this node per principal (socketOwner), at most `max` each (WS_MAX_SOCKETS_PER_USER), shared by
 * the collaboration, deck and sheet sockets: each socket costs memory (its buffers, gate, rate limiter, room seat),
 * and rooms are bounded per organization, sockets on a document already open were not.
 *
 * A socket is counted when it is admitted (admit: the check and the count in one synchronous step, so two requests
 * that pass the check at once cannot both take the last place) and released when its TCP connection closes, which
 * every end of a socket comes to: a close by either side, a heartbeat's terminate(), a shutdown, and an upgrade that
 * fails after the admission (the connection is destroyed).
 */
export class SocketQuota {
  private readonly open = new Map<string, number>();
  constructor(readonly max: number) {}

  /** Sockets of `owner` counted now. */
  count(owner: string): number {
    return this.open.get(owner) ?? 0;
  }

  /**
   * Counts one more socket of `owner`, or throws 429 RATE_LIMIT_EXCEEDED (reason SOCKETS_PER_USER) when it has `max`.
   * Returns the release; calling it again does nothing.
   */
  admit(owner: string): () => void {
    const n = this.count(owner);
    if (n >= this.max) {
      throw tooManyOpen(`This user (or API key) has ${this.max} WebSockets open on this server, the most it may; retry once one has closed`,
        this.max, 'SOCKETS_PER_USER', SOCKETS_RETRY_AFTER_SECONDS);
    }
    this.open.set(owner, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(owner) - 1;
      if (left > 0) this.open.set(owner, left); else this.open.delete(owner);
    };
  }

  /**
   * admit(), released when `conn` closes (at once when it is already destroyed: the client left while the request
   * was checked, and its close event may have passed).
   */
  admitConnection(owner: string, conn: Connection): void {
    const release = this.admit(owner);
    if (conn.destroyed) { release(); return; }
    conn.once('close', release);
  }
}
