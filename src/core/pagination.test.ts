import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { Type } from 'typebox';
import { OffsetQuery, PageQuery, decodeCursor, encodeCursor, pageToOffset } from './pagination.js';
import { ok, okList } from './http/envelope.js';
import { AppError } from './errors.js';

const coerce = new Ajv({ coerceTypes: 'array', useDefaults: true, strict: false });

describe('envelope helpers', () => {
  it('ok wraps data', () => { expect(ok({ a: 1 })).toEqual({ success: true, data: { a: 1 } }); });

  it('okList: has_more is offset + limit < total (not the count of rows returned)', () => {
    expect(okList([1, 2], { total: 5, limit: 2, offset: 0 }).pagination).toEqual({ total: 5, limit: 2, offset: 0, has_more: true });
    expect(okList([5], { total: 5, limit: 2, offset: 4 }).pagination.has_more).toBe(false);
    expect(okList([3, 4], { total: 5, limit: 2, offset: 2 }).pagination.has_more).toBe(true);
    expect(okList([], { total: 4, limit: 2, offset: 2 }).pagination.has_more).toBe(false);
    expect(okList([], { total: 0, limit: 50, offset: 0 })).toEqual({ success: true, data: [], pagination: { total: 0, limit: 50, offset: 0, has_more: false } });
    // Fewer rows than limit (rows hidden by filters) does not stop paging while total says more.
    expect(okList([1], { total: 10, limit: 5, offset: 0 }).pagination.has_more).toBe(true);
  });
});

describe('query schemas', () => {
  it('OffsetQuery: defaults, bounds, integers', () => {
    const v = coerce.compile(Type.Object(OffsetQuery(25, 100)));
    const q: Record<string, unknown> = {};
    expect(v(q)).toBe(true);
    expect(q).toEqual({ limit: 25, offset: 0 });
    expect(v({ limit: '100', offset: '7' })).toBe(true);
    for (const bad of [{ limit: '0' }, { limit: '101' }, { limit: '1.5' }, { offset: '-1' }, { limit: 'x' }, { offset: '2147483648' }, { offset: '100000000000000000000' }]) expect(v({ ...bad }), JSON.stringify(bad)).toBe(false);
    expect(v({ offset: '2147483647' })).toBe(true);
  });

  it('PageQuery: page from 1, page_size within max; pageToOffset', () => {
    const v = coerce.compile(Type.Object(PageQuery(50, 200)));
    const q: Record<string, unknown> = {};
    expect(v(q)).toBe(true);
    expect(q).toEqual({ page: 1, page_size: 50 });
    expect(v({ page: '0' })).toBe(false);
    expect(v({ page_size: '201' })).toBe(false);
    expect(v({ page: '100001' })).toBe(false);
    expect(pageToOffset(1, 50)).toEqual({ limit: 50, offset: 0 });
    expect(pageToOffset(3, 20)).toEqual({ limit: 20, offset: 40 });
  });
});

describe('cursor', () => {
  it('round-trips an opaque base64url key', () => {
    const key = { created_at: '2026-01-01T00:00:00.000Z', id: '0190a0b0-0000-7000-8000-000000000000' };
    const c = encodeCursor(key);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor<typeof key>(c, ['created_at', 'id'])).toEqual(key);
  });

  it('a cursor it did not issue is 400 INVALID_PARAMETER naming "cursor"', () => {
    const issued = encodeCursor({ id: '0190a0b0-0000-7000-8000-000000000000', n: 1 });
    // Spellings base64url decoding reads as the issued cursor: a character appended, padding, a space inside.
    const respelled = [`${issued}x`, `${issued}=`, `${issued.slice(0, 4)} ${issued.slice(4)}`];
    for (const s of respelled) expect(Buffer.from(s, 'base64url').toString()).toBe(Buffer.from(issued, 'base64url').toString());
    for (const bad of ['not-base64-json', encodeCursor({ other: 1 }), Buffer.from('null').toString('base64url'), Buffer.from('"s"').toString('base64url'), '', ...respelled]) {
      try {
        decodeCursor(bad, ['id']);
        throw new Error(`accepted ${bad}`);
      } catch (e) {
        expect(e).toBeInstanceOf(AppError);
        expect((e as AppError).code).toBe('INVALID_PARAMETER');
        expect((e as AppError).status).toBe(400);
        expect((e as AppError).details).toEqual({ field: 'cursor' });
      }
    }
  });
});
