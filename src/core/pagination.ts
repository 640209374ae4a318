import { Type } from 'typebox';
import { AppError } from './errors.js';

/** The largest `offset` a list accepts (2^31 - 1); beyond it, 400 INVALID_PARAMETER. */
export const OFFSET_MAX = 2_147_483_647;

/** Whether a value (from a cursor, a client's input) is an offset a list statement accepts: 0 to OFFSET_MAX. */
export const isOffset = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= OFFSET_MAX;

/** Query schema for offset lists: limit 1..max (default per endpoint), offset >= 0. */
export const OffsetQuery = (dflt = 50, max = 100) => ({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: dflt })),
  // Bounded so every accepted value fits PostgreSQL's OFFSET (bigint) and JavaScript numbers exactly.
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: OFFSET_MAX, default: 0 })),
});

/** Query schema for page lists: page from 1, page_size 1..max. */
export const PageQuery = (dflt = 50, max = 100) => ({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: dflt })),
});

export const pageToOffset = (page: number, pageSize: number) => ({ limit: pageSize, offset: (page - 1) * pageSize });

/** Opaque keyset cursor: base64url JSON of the last row's sort key. */
export function encodeCursor(key: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/**
 * The key of a cursor this endpoint issued. `valid` checks the values (types, ranges): a cursor is the client's input,
 * and an altered one must be INVALID_PARAMETER, not a database error when its values reach a statement.
 */
export function decodeCursor<T extends Record<string, unknown>>(cursor: string, fields: (keyof T)[], valid: (key: T) => boolean = () => true): T {
  try {
    const bytes = Buffer.from(cursor, 'base64url');
    // One spelling per cursor: base64url decoding skips characters it cannot use (a trailing one, padding, spaces),
    // so an altered cursor would otherwise read as the one it was made from.
    if (bytes.toString('base64url') !== cursor) throw new Error('not canonical');
    const v = JSON.parse(bytes.toString('utf8'));
    if (!v || typeof v !== 'object' || fields.some((f) => !(f in v)) || !valid(v as T)) throw new Error('shape');
    return v as T;
  } catch {
    throw new AppError('INVALID_PARAMETER', 'Query parameter "cursor" is not a cursor this endpoint issued', { field: 'cursor' });
  }
}

/**
 * A page and its exact total from rows that each carry the list's `count(*) OVER ()` as `total`. A page past the end
 * has no row to carry it, so `count` runs then (spec 2.1: `total` is the list's size whatever the page); an empty
 * first page means an empty list.
 */
export async function pageWithTotal<T>(rows: Array<T & { total: number | string }>, offset: number, count: () => Promise<number>): Promise<{ items: T[]; total: number }> {
  const total = rows.length ? Number(rows[0].total) : offset === 0 ? 0 : await count();
  return { items: rows.map(({ total: _t, ...item }) => item as T), total };
}
