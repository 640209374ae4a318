import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryRateLimitStore } from './rate-limit.js';

describe('MemoryRateLimitStore', () => {
  afterEach(() => { vi.useRealTimers(); });

  it('counts hits per key in clock-aligned windows; undo takes one back in the current window only', () => {
    vi.useFakeTimers({ now: 120_000 + 10_000 });
    const store = new MemoryRateLimitStore();
    try {
      expect(store.hit('k', 60_000)).toEqual({ count: 1, resetAtMs: 180_000 });
      expect(store.hit('k', 60_000).count).toBe(2);
      expect(store.hit('other', 60_000).count).toBe(1);
      store.undo('k', 60_000);
      expect(store.hit('k', 60_000).count).toBe(2);
      store.undo('never-hit', 60_000); // nothing to take back: no entry is made
      expect(store.hit('never-hit', 60_000).count).toBe(1);
      vi.setSystemTime(180_000 + 1);
      store.undo('k', 60_000); // the window of those hits is over: the new window is untouched
      expect(store.hit('k', 60_000)).toEqual({ count: 1, resetAtMs: 240_000 });
      store.undo('k', 60_000);
      store.undo('k', 60_000); // never below zero
      expect(store.hit('k', 60_000).count).toBe(1);
    } finally { store.close(); }
  });
});
