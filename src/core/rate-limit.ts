export interface RateLimitHit { count: number; resetAtMs: number }

/** Counter store behind the rate limiter: memory on one node, Redis when REDIS_URL is set (adapters/redis). */
export interface RateLimitStore {
  /**
   * Counts one hit for `key` in the current fixed window of `windowMs`; returns the count so far and when the window
   * resets. A store in this process answers at once (no promise: the request path then needs no await); a networked
   * store returns a promise.
   */
  hit(key: string, windowMs: number): RateLimitHit | Promise<RateLimitHit>;
  /** Takes one hit of the current window back (an attempt that turned out not to count, such as a right password). */
  undo(key: string, windowMs: number): void | Promise<void>;
  /** Stops the store (timers, its connection). */
  close(): void | Promise<void>;
}

export class MemoryRateLimitStore implements RateLimitStore {
  private windows = new Map<string, { count: number; resetAtMs: number }>();
  private sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs);
    this.sweeper.unref();
  }

  hit(key: string, windowMs: number): RateLimitHit {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.resetAtMs <= now) {
      w = { count: 0, resetAtMs: (Math.floor(now / windowMs) + 1) * windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return { count: w.count, resetAtMs: w.resetAtMs };
  }

  undo(key: string, windowMs: number): void {
    const w = this.windows.get(key);
    if (w && w.resetAtMs > Date.now() && w.resetAtMs - windowMs <= Date.now() && w.count > 0) w.count--;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, w] of this.windows) if (w.resetAtMs <= now) this.windows.delete(k);
  }

  close(): void { clearInterval(this.sweeper); }
}
