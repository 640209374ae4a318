import { AppError } from '../../../core/errors.js';
import type { PlatformEvent } from '../../../core/events.js';
import { sameJsonValue } from '../../../core/json-value.js';

/**
 * Alert rule `conditions`: an object of `path -> expected`. A rule fires when every entry holds
 * for the event (an empty object always holds). `path` is a key of the event's data, or a dotted path
 * into it (`project.slug`), or one of `actor_user_id`, `target_type`, `target_id`, `recipients`.
 *   scalar (string, number, boolean, null): equal (when the actual value is an array: it contains it)
 *   array: the actual value is one of them (values of any JSON type, compared as values)
 *   object: every entry holds; a key starting with `$` is an operator on the value ($eq $ne $in $nin $exists $gt
 *     $gte $lt $lte $contains), any other key a path into the value (`{"a": {"b": 1}}` is `{"a.b": 1}`)
 * Spec 2.7 and 4.6 make `conditions` an object bounded only by its size, so any JSON object within the bounds is
 * accepted, nested objects and arrays of objects included; refused (400) are only an operator the platform does not
 * have, an operator given an argument it cannot use, and a key of 0 or more than 200 characters.
 */
export type Conditions = Record<string, unknown>;
const OPERATORS = new Set(['$eq', '$ne', '$in', '$nin', '$exists', '$gt', '$gte', '$lt', '$lte', '$contains']);

const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Throws VALIDATION_ERROR naming the first condition that is not of the documented forms. */
export function assertConditions(c: Conditions, field = 'conditions'): void {
  for (const [path, expected] of Object.entries(c)) assertExpected(path, expected, `${field}.${path}`);
}

function assertExpected(path: string, expected: unknown, where: string): void {
  const bad = (why: string) => new AppError('VALIDATION_ERROR', `Condition "${where}" ${why}`, { field: where });
  if (path.length === 0 || path.length > 200) throw bad('needs a key of 1-200 characters');
  if (!isObject(expected)) return; // a scalar, or an array of values the actual value may be
  for (const [op, arg] of Object.entries(expected)) {
    if (!op.startsWith('$')) { assertExpected(op, arg, `${where}.${op}`); continue; }
    if (!OPERATORS.has(op)) throw bad(`uses unknown operator "${op}"; use one of ${[...OPERATORS].join(', ')}`);
    if ((op === '$in' || op === '$nin') && !(Array.isArray(arg) && arg.every(isScalar))) throw bad(`${op} needs an array of scalars`);
    if (op === '$exists' && typeof arg !== 'boolean') throw bad('$exists needs true or false');
    if (['$gt', '$gte', '$lt', '$lte'].includes(op) && typeof arg !== 'number' && typeof arg !== 'string') throw bad(`${op} needs a number or a string`);
    if (op === '$contains' && !isScalar(arg)) throw bad('$contains needs a scalar');
    if ((op === '$eq' || op === '$ne') && !isScalar(arg)) throw bad(`${op} needs a scalar`);
  }
}

function lookup(root: Record<string, unknown>, path: string): unknown {
  if (Object.prototype.hasOwnProperty.call(root, path)) return root[path];
  let cur: unknown = root;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

const same = (a: unknown, b: unknown) => a === b || (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && sameJsonValue(a, b));
const eq = (actual: unknown, expected: unknown) =>
  same(actual, expected) || (Array.isArray(actual) && actual.some((a) => same(a, expected)));
const cmp = (a: unknown, b: unknown, f: (x: number) => boolean) =>
  (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')
    ? f(a < b ? -1 : a > b ? 1 : 0) : false;

function holds(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) return expected.some((e) => eq(actual, e));
  if (!isObject(expected)) return eq(actual, expected);
  return Object.entries(expected).every(([op, arg]) => {
    if (!op.startsWith('$')) return holds(isObject(actual) ? lookup(actual, op) : undefined, arg);
    switch (op) {
      case '$eq': return eq(actual, arg);
      case '$ne': return !eq(actual, arg);
      case '$in': return (arg as unknown[]).some((e) => eq(actual, e));
      case '$nin': return !(arg as unknown[]).some((e) => eq(actual, e));
      case '$exists': return (actual !== undefined) === arg;
      case '$gt': return cmp(actual, arg, (c) => c > 0);
      case '$gte': return cmp(actual, arg, (c) => c >= 0);
      case '$lt': return cmp(actual, arg, (c) => c < 0);
      case '$lte': return cmp(actual, arg, (c) => c <= 0);
      case '$contains': return typeof actual === 'string' ? actual.includes(String(arg)) : Array.isArray(actual) && actual.includes(arg);
      default: return false;
    }
  });
}

/** Whether an event satisfies a rule's conditions (see the type's comment for the semantics). */
export function matchesConditions(conditions: Conditions, event: PlatformEvent): boolean {
  const root: Record<string, unknown> = {
    ...event.data, actor_user_id: event.actorUserId, target_type: event.targetType, target_id: event.targetId, recipients: event.recipients ?? [],
  };
  return Object.entries(conditions).every(([path, expected]) => holds(lookup(root, path), expected));
}
