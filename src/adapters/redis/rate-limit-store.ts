import type { RateLimitHit, RateLimitStore } from '../../core/rate-limit.js';
import type { RedisConnection } from './client.js';

/**
 * Fixed-window counters in Redis (REDIS_URL), shared by every node: the same windows as the memory store (aligned to
 * the clock, so every node counts in the same one), one key per limit key and window, expiring a second after it.
 */
export class RedisRateLimitStore implements RateLimitStore {
  constructor(private readonly redis: RedisConnection, private readonly prefix = 'platform:rl:') {}

  private window(key: string, windowMs: number): { redisKey: string; resetAtMs: number } {
    const index = Math.floor(Date.now() / windowMs);
    return { redisKey: `${this.prefix}${windowMs}:${index}:${key}`, resetAtMs: (index + 1) * windowMs };
  }

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    const w = this.window(key, windowMs);
    return { count: await this.redis.incrExpireAt(w.redisKey, w.resetAtMs + 1_000), resetAtMs: w.resetAtMs };
  }

  async undo(key: string, windowMs: number): Promise<void> {
    const w = this.window(key, windowMs);
    await this.redis.decrExpireAt(w.redisKey, w.resetAtMs + 1_000);
  }

  close(): Promise<void> { return this.redis.close(); }
}
