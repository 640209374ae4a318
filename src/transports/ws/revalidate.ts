import type { WebSocket } from 'ws';
import type { Platform } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { COLLAB_MESSAGE_BURST, COLLAB_MESSAGES_PER_SECOND, MAX_FRAME_BYTES } from './collab-limits.js';

/** Close code: the credential that opened the socket no longer resolves (signed out, revoked, member removed, expired). */
export const CREDENTIAL_INVALID_CLOSE = 4401;
/** Close code: the credential still resolves but lost what the socket needs (feature, scope, permission, write access). */
export const ACCESS_REVOKED_CLOSE = 4403;
/** Close code: the document is gone. */
export const DOCUMENT_GONE_CLOSE = 4404;

/** The close code and reason (the error code: short, machine-readable) for a failed re-check. */
export function closeFor(err: unknown): [number, string] {
  if (err instanceof AppError) {
    if (err.status === 401) return [CREDENTIAL_INVALID_CLOSE, err.code];
    if (err.status === 402 || err.status === 403) return [ACCESS_REVOKED_CLOSE, err.code];
    if (err.status === 404) return [DOCUMENT_GONE_CLOSE, err.code];
  }
  // The check itself failed (database unreachable): fail closed; the client reconnects and is checked afresh.
  return [1011, 'credential check unavailable'];
}

/**
 * Messages a socket may have held while its re-check is pending: 1,000, what a socket at the highest message rate
 * (collaboration's bursts of 400, then 200 a second; sheets' are lower, message-rate.ts) sends in three seconds of
 * re-check, three times what a node with a thousand sockets queued takes (RECHECK_CONCURRENCY); a stock client (an
 * update and an awareness change per keystroke) would need minutes. The rate limiter runs before the gate, so without
 * this bound only a re-check that never ends (a database that does not answer) would let the queue grow.
 */
export const HELD_MAX_MESSAGES = COLLAB_MESSAGE_BURST + 3 * COLLAB_MESSAGES_PER_SECOND;
/**
 * Bytes of held messages: one frame of the largest size (MAX_FRAME_BYTES, 16 MiB) always fits, as in the
 * collaboration socket's buffer before its room loads (EARLY_MAX_BYTES); frames may each be that large, so the count
 * alone would let one socket make the server hold 1,000 of them (16 GiB).
 */
export const HELD_MAX_BYTES = MAX_FRAME_BYTES;
/**
 * Close code past either bound: 1013 "try again later", the back-pressure code (send-bounded.ts, a room over the
 * node's budget), not 1008: messages pile up here because the server has not finished the re-check (it waits for the
 * database or for other sockets' re-checks), while the client stayed within its message rate (past it the socket was
 * already closed with 1008 before the gate). A client that reconnects is admitted afresh and resends what was dropped
 * (y-websocket syncs; a sheet client resends what was not acked).
 */
export const HELD_OVER_CLOSE = 1013;

/**
 * One socket's gate: after a credential change, the socket's messages are held until its credential was checked
 * again; they are then handled, or dropped with the socket closed (closeFor) when the check fails. So nothing a
 * client sends after a revocation is applied. Changes arriving during a check cause one more check (coalesced).
 * What it holds is bounded (HELD_MAX_MESSAGES, HELD_MAX_BYTES): past either, the socket is closed (HELD_OVER_CLOSE)
 * and what was held is dropped.
 */
export class CredentialGate {
  private held: Array<[handle: () => void, bytes: number]> | null = null;
  private heldBytes = 0;
  private state: 'idle' | 'scheduled' | 'checking' = 'idle';
  private again = false;
  private done = false;

  constructor(private readonly ws: WebSocket, private readonly check: () => Promise<void>, private readonly platform: Platform) {}

  /**
   * Runs `handle` now, or once the pending re-check passed (never when it failed or the socket is closed). `bytes`:
   * the size of the message it handles, counted against HELD_MAX_BYTES while it is held.
   */
  run(handle: () => void, bytes: number): void {
    if (this.done || this.ws.readyState !== 1) return;
    if (!this.held) { handle(); return; }
    this.held.push([handle, bytes]);
    this.heldBytes += bytes;
    if (this.held.length <= HELD_MAX_MESSAGES && this.heldBytes <= HELD_MAX_BYTES) return;
    this.done = true;
    this.held = null;
    this.ws.close(HELD_OVER_CLOSE, `over ${HELD_MAX_MESSAGES} messages or ${HELD_MAX_BYTES} bytes sent during a credential re-check`);
  }

  /** A credential somewhere changed: hold this socket's messages and re-check it. */
  changed(): void {
    if (this.done) return;
    if (!this.held) { this.held = []; this.heldBytes = 0; }
    if (this.state === 'checking') { this.again = true; return; }
    if (this.state === 'scheduled') return;
    this.state = 'scheduled';
    setImmediate(() => void this.recheck());
  }

  private async recheck(): Promise<void> {
    this.state = 'checking';
    try {
      do { this.again = false; await this.check(); } while (this.again && !this.done);
    } catch (err) {
      this.state = 'idle';
      if (this.done) return;
      this.done = true;
      this.held = null;
      const [code, reason] = closeFor(err);
      if (code === 1011) this.platform.log.warn({ err }, 'socket credential re-check failed');
      this.ws.close(code, reason);
      return;
    }
    this.state = 'idle';
    const held = this.held ?? [];
    this.held = null;
    for (const [h, bytes] of held) this.run(h, bytes);
  }

  dispose(): void { this.done = true; this.held = null; }
}

/** How often every open socket is re-checked even without a credential change: a session or key reaching its expiry. */
export const SOCKET_SWEEP_INTERVAL_MS = 60_000;
/**
 * Re-checks running at once (each reads a row on the system pool). Every credential change anywhere re-checks every
 * open socket: all at once, 40 sockets after a burst of revocations waited past the pool's connection timeout and
 * were closed with 1011, though their credentials were fine. Queued, a thousand sockets take about a second.
 */
export const RECHECK_CONCURRENCY = 2;

/**
 * The open sockets of one transport, re-checked on every credential change (CredentialResolver.onChange: local
 * invalidations and other processes' announcements), and all of them every `sweepMs`: expiry is not a change anyone
 * announces, so a socket whose session or key expired closes (4401) within that time. No work per message.
 */
export class CredentialWatch {
  private gates = new Set<CredentialGate>();
  private readonly unsubscribe: () => void;
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly platform: Platform, sweepMs = SOCKET_SWEEP_INTERVAL_MS) {
    this.unsubscribe = platform.credentials.onChange(() => this.recheckAll());
    this.sweep = setInterval(() => this.recheckAll(), sweepMs);
    this.sweep.unref();
  }

  private recheckAll(): void {
    for (const g of this.gates) g.changed();
  }

  private running = 0;
  private waiting: Array<() => void> = [];

  /** Runs `check` once fewer than RECHECK_CONCURRENCY are running; a finished one hands its place to the next. */
  private async queued(check: () => Promise<void>): Promise<void> {
    if (this.running < RECHECK_CONCURRENCY) this.running++;
    else await new Promise<void>((turn) => this.waiting.push(turn));
    try {
      await check();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); else this.running--;
    }
  }

  /**
   * Watches `ws`; `since` is `platform.credentials.changes` read before its credential was checked at connect, so a
   * change that happened between that check and now is not missed.
   */
  watch(ws: WebSocket, since: number, check: () => Promise<void>): CredentialGate {
    const gate = new CredentialGate(ws, () => this.queued(check), this.platform);
    this.gates.add(gate);
    ws.on('close', () => { this.gates.delete(gate); gate.dispose(); });
    if (this.platform.credentials.changes !== since) gate.changed();
    return gate;
  }

  close(): void {
    clearInterval(this.sweep);
    this.unsubscribe();
    for (const g of this.gates) g.dispose();
    this.gates.clear();
  }
}
