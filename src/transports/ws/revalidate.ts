import type { WebSocket } from 'ws';
import type { Platform } from '../../core/context.js';
import { AppError } from '../../core/errors.js';

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
 * One socket's gate: after a credential change, the socket's messages are held until its credential was checked
 * again; they are then handled, or dropped with the socket closed (closeFor) when the check fails. So nothing a
 * client sends after a revocation is applied. Changes arriving during a check cause one more check (coalesced).
 */
export class CredentialGate {
  private held: Array<() => void> | null = null;
  private state: 'idle' | 'scheduled' | 'checking' = 'idle';
  private again = false;
  private done = false;

  constructor(private readonly ws: WebSocket, private readonly check: () => Promise<void>, private readonly platform: Platform) {}

  /** Runs `handle` now, or once the pending re-check passed (never when it failed or the socket is closed). */
  run(handle: () => void): void {
    if (this.done || this.ws.readyState !== 1) return;
    if (this.held) this.held.push(handle);
    else handle();
  }

  /** A credential somewhere changed: hold this socket's messages and re-check it. */
  changed(): void {
    if (this.done) return;
    this.held ??= [];
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
    for (const h of held) this.run(h);
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
