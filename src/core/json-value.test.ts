import { describe, expect, it } from 'vitest';
import { sameJsonValue } from './json-value.js';

describe('sameJsonValue', () => {
  it('ignores key order and -0, and tells real differences', () => {
    expect(sameJsonValue({ b: 2, aa: { y: [1, 2], x: null } }, { aa: { x: null, y: [1, 2] }, b: 2 })).toBe(true);
    expect(sameJsonValue({ x: -0 }, { x: 0 })).toBe(true);
    expect(sameJsonValue('a', 'a')).toBe(true);
    expect(sameJsonValue(undefined, undefined)).toBe(true);
    expect(sameJsonValue({ x: [1, 2] }, { x: [2, 1] })).toBe(false);
    expect(sameJsonValue({ x: 1 }, { x: '1' })).toBe(false);
    expect(sameJsonValue({ x: 1 }, { x: 1, y: null })).toBe(false);
    expect(sameJsonValue(null, undefined)).toBe(false);
  });
});
