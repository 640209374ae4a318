import { AppError } from '../../core/errors.js';
import type { ServiceContext } from '../../core/context.js';

/** A budget of attempts per key in a fixed, clock-aligned window (src/core/rate-limit.ts). */
export interface AttemptBudget { max: number; windowMs: number }

/**
 * Counts one attempt against `key`; past the budget every attempt is 429, right or wrong, until the window ends.
 * Returns what the caller calls once the attempt proved right: a successful sign-in or code is taken back, so the
 * budget counts failures only (guessing is what it limits; a user or client signing in often is not). A caller that
 * never calls it counts every attempt (password-reset e-mails: each one lands in a mailbox).
 */
export async function throttle(ctx: ServiceContext, key: string, limit: AttemptBudget): Promise<() => void> {
  const storeKey = `auth:${key}`;
  const { rateLimitStore } = ctx.platform;
  const succeeded = () => { void Promise.resolve().then(() => rateLimitStore.undo(storeKey, limit.windowMs)).catch(() => {}); };
  let r: { count: number; resetAtMs: number };
  try { r = await rateLimitStore.hit(storeKey, limit.windowMs); } catch { return () => {}; } // the route limit still applies
  if (r.count <= limit.max) return succeeded;
  const retryAfter = Math.max(1, Math.ceil((r.resetAtMs - Date.now()) / 1000));
  // The 429's rate-limit headers describe this budget, the one that ran out (not the route's general one).
  throw new AppError('RATE_LIMIT_EXCEEDED', `Too many attempts; retry after ${retryAfter} s`, { limit: limit.max, retryAfterSeconds: retryAfter }, {
    headers: { 'Retry-After': String(retryAfter), 'X-RateLimit-Limit': String(limit.max), 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(Math.ceil(r.resetAtMs / 1000)) },
  });
}
