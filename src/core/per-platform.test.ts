import { describe, expect, it } from 'vitest';
import { perPlatform } from './per-platform.js';
import type { Platform } from './context.js';

describe('perPlatform', () => {
  it('makes one value per platform, on first use, and hands the same one after', () => {
    let made = 0;
    const counter = perPlatform(() => ({ n: ++made }));
    const a = {} as Platform;
    const b = {} as Platform;
    expect(made).toBe(0);
    const first = counter(a);
    expect(counter(a)).toBe(first);
    expect(counter(b)).not.toBe(first);
    expect(made).toBe(2);
  });
});
