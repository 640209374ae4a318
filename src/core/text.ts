import { AppError } from './errors.js';

/** Length in characters (code points), as JSON Schema's maxLength counts them: an emoji is one character, not two. */
export const charLength = (s: string): number => [...s].length;


const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

/** The path (`a.b[2]`) of the first string, key included, that is not well-formed UTF-16; null when all are. */
function firstIllFormed(value: unknown, path: string): string | null {
  if (typeof value === 'string') return wellFormed(value) ? null : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) { const p = firstIllFormed(value[i], `${path}[${i}]`); if (p !== null) return p; }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (!wellFormed(k)) return at;
      const p = firstIllFormed(v, at);
      if (p !== null) return p;
    }
  }
  return null;
}

/**
 * Refuses a value holding an unpaired UTF-16 surrogate anywhere (keys included): PostgreSQL can store it neither in
 * text (it would become U+FFFD) nor in jsonb. 400 VALIDATION_ERROR, reason UNSTORABLE_CHARACTER, naming the field.
 * JSON request bodies (core/http/json-parser.ts) and MCP tool arguments pass through it.
 */
export function assertStorableText(value: unknown): void {
  const found = firstIllFormed(value, '');
  if (found === null) return;
  const field = (found as string & { toWellFormed(): string }).toWellFormed(); // a key may hold the surrogate itself
  throw new AppError('VALIDATION_ERROR', `${field ? `Field "${field}"` : 'The body'} contains an unpaired UTF-16 surrogate (\\uD800-\\uDFFF), which cannot be stored`,
    { reason: 'UNSTORABLE_CHARACTER', ...(field ? { field } : {}) });
}
