import { describe, expect, it } from 'vitest';
import { assertConditions, matchesConditions } from './conditions.js';
import type { PlatformEvent } from '../../../core/events.js';

const event = (data: Record<string, unknown>): PlatformEvent => ({
  type: 'task.overdue', orgId: 'o', actorUserId: null, targetType: 'task', targetId: 't', data, at: new Date().toISOString(),
});

describe('alert rule conditions', () => {
  it('accept any JSON object (spec 2.7: conditions is an object, bounded only by its size): nested objects and arrays of objects too', () => {
    for (const c of [
      { threshold: { hours: 24 } },
      { filters: { priority: 'high', project: { slug: 'mars' } } },
      { rules: [{ field: 'priority', op: 'eq', value: 'high' }] },
      { days: { $gt: 2, unit: 'd' } },
      { anything: {} },
    ]) expect(() => assertConditions(c)).not.toThrow();
  });

  it('still refuse an operator the platform does not have, and operators given arguments they cannot use', () => {
    expect(() => assertConditions({ title: { $regex: '.*' } })).toThrow(/unknown operator "\$regex"/);
    expect(() => assertConditions({ a: { b: { $in: 'x' } } })).toThrow(/\$in needs an array/);
    let err: unknown;
    try { assertConditions({ a: { b: { $foo: 1 } } }); } catch (e) { err = e; }
    expect((err as { details?: unknown } | undefined)?.details).toEqual({ field: 'conditions.a.b' });
  });

  it('a key that is not an operator is a path into the value: {"a": {"b": 1}} holds as {"a.b": 1}', () => {
    const ev = event({ project: { slug: 'mars', tags: ['x'] }, priority: 'high' });
    expect(matchesConditions({ project: { slug: 'mars' } }, ev)).toBe(true);
    expect(matchesConditions({ project: { slug: 'venus' } }, ev)).toBe(false);
    expect(matchesConditions({ project: { slug: { $in: ['mars', 'venus'] }, tags: 'x' } }, ev)).toBe(true);
    expect(matchesConditions({ priority: { slug: 'mars' } }, ev)).toBe(false); // a scalar has no paths
    expect(matchesConditions({ project: {} }, ev)).toBe(true);
  });

  it('an array lists the values the actual value may be, objects compared as values', () => {
    const ev = event({ assignee: { id: 'u1', role: 'dev' }, labels: [{ k: 'a' }, { k: 'b' }] });
    expect(matchesConditions({ assignee: [{ role: 'dev', id: 'u1' }, { id: 'u2' }] }, ev)).toBe(true);
    expect(matchesConditions({ assignee: [{ id: 'u2' }] }, ev)).toBe(false);
    expect(matchesConditions({ labels: [{ k: 'b' }] }, ev)).toBe(true); // an array contains it
    expect(matchesConditions({ labels: [{ k: 'c' }] }, ev)).toBe(false);
  });
});
