import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { KEY_LENGTH } from '../../core/settings-keys.js';

export const strict = { additionalProperties: false } as const;
export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
export const JsonObject = (description?: string) => Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) });
export { KEY_LENGTH, assertSettingKeys } from '../../core/settings-keys.js';
export const KeyParams = Type.Object({ key: Type.String(KEY_LENGTH) });

/** Nesting depth of a JSON value: a scalar is 0, `{}` and `[]` are 1. */
export function jsonDepth(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  let max = 0;
  for (const child of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) {
    const d = jsonDepth(child);
    if (d > max) max = d;
  }
  return max + 1;
}

/**
 * Refuses a stored JSON document that is too big or too deep with 413 PAYLOAD_TOO_LARGE
 * (`details.maxBytes` or `details.limit`, as spec part 7 names them), before anything is written.
 */
export function assertBoundedJson(field: string, value: unknown, bounds: { maxBytes: number; maxDepth: number }): void {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  if (bytes > bounds.maxBytes) {
    throw new AppError('PAYLOAD_TOO_LARGE', `Field "${field}" is ${bytes} bytes when serialized; the limit is ${bounds.maxBytes}`, { field, maxBytes: bounds.maxBytes, limit: bounds.maxBytes, bytes });
  }
  const depth = jsonDepth(value);
  if (depth > bounds.maxDepth) {
    throw new AppError('PAYLOAD_TOO_LARGE', `Field "${field}" nests ${depth} levels deep; the limit is ${bounds.maxDepth}`, { field, limit: bounds.maxDepth, maxBytes: bounds.maxBytes, depth });
  }
}

/** Shallow merge used by settings PUTs: given keys replace, a null value removes the key. */
export function mergeTopLevel(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
