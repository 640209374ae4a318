import { isDeepStrictEqual } from 'node:util';

/**
 * Whether two JSON values are the same value as PostgreSQL jsonb keeps them: object keys in any order (jsonb stores
 * them in its own), and numbers as JSON writes them (-0 is 0). Used to tell a write that changes nothing.
 */
export function sameJsonValue(a: unknown, b: unknown): boolean {
  const normal = (v: unknown) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
  return isDeepStrictEqual(normal(a), normal(b));
}
