import { describe, expect, it } from 'vitest';
import { isUuid, uuidv7 } from './ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('has the RFC 9562 version 7 layout and variant', () => {
    for (let i = 0; i < 1000; i++) expect(uuidv7()).toMatch(V7);
  });

  it('carries the current unix time in milliseconds', () => {
    const before = Date.now();
    const id = uuidv7();
    const after = Date.now();
    const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after + 1);
  });

  it('is strictly increasing within this process, also inside one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i] > ids[i - 1])) throw new Error(`not monotonic at ${i}: ${ids[i - 1]} then ${ids[i]}`);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('isUuid accepts any RFC 4122 text form and refuses others', () => {
    expect(isUuid(uuidv7())).toBe(true);
    expect(isUuid('550e8400-e29b-41d4-a716-446655440000')).toBe(true);
    expect(isUuid('550E8400-E29B-41D4-A716-446655440000')).toBe(true);
    for (const bad of ['', 'not-a-uuid', '550e8400e29b41d4a716446655440000', '550e8400-e29b-41d4-a716-44665544000', '{550e8400-e29b-41d4-a716-446655440000}']) expect(isUuid(bad)).toBe(false);
  });
});
