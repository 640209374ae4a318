import { AppError } from './errors.js';

/** Length in characters (code points), as JSON Schema's maxLength counts them: an emoji is one character, not two. */
export const charLength = (s: string): number => [...s].length;


const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();
const NUL = '\u0000';

type Unstorable = { path: string; what: 'surrogate' | 'nul' | 'number' };
/** What PostgreSQL cannot store in one string: an unpaired surrogate, or (when asked) the NUL character. */
const flaw = (s: string, nul: boolean): Unstorable['what'] | null => (!wellFormed(s) ? 'surrogate' : nul && s.includes(NUL) ? 'nul' : null);

/**
 * The first string, key included, PostgreSQL cannot store, or number that is not finite (a JSON literal past the
 * double range, 1e400, parses as Infinity, which JSON and jsonb cannot hold: it was stored as null), with its path
 * (`a.b[2]`); null when all can be.
 */
function firstUnstorable(value: unknown, path: string, nul: boolean): Unstorable | null {
  if (typeof value === 'string') { const what = flaw(value, nul); return what && { path, what }; }
  if (typeof value === 'number') return Number.isFinite(value) ? null : { path, what: 'number' };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) { const f = firstUnstorable(value[i], `${path}[${i}]`, nul); if (f) return f; }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      const what = flaw(k, nul);
      if (what) return { path: at, what };
      const f = firstUnstorable(v, at, nul);
      if (f) return f;
    }
  }
  return null;
}

/**
 * Refuses a value holding text PostgreSQL cannot store, anywhere (keys included): an unpaired UTF-16 surrogate
 * (text would hold U+FFFD instead, jsonb refuses it) and, with `nul`, the NUL character (refused by both).
 * 400 VALIDATION_ERROR, reason UNSTORABLE_CHARACTER, naming the field: its path, or `field` when given (a service
 * checking its inputs one field at a time). JSON request bodies (core/http/json-parser.ts: surrogates and NUL) and
 * MCP tool arguments pass through it; the documents area also checks NUL in what it builds itself.
 */
export function assertStorableText(value: unknown, opts: { nul?: boolean; field?: string; within?: string } = {}): void {
  const found = firstUnstorable(value, '', opts.nul ?? false);
  if (!found) return;
  const path = (found.path as string & { toWellFormed(): string }).toWellFormed(); // a key may hold the surrogate itself
  if (opts.within) {
    // The value is the parsed text of one field (a sheet's JSON content): that field, and the path inside it.
    throw new AppError('VALIDATION_ERROR', `Field "${opts.within}" ${FLAW_PHRASE[found.what]}${path ? ` (at ${path})` : ''}`,
      { reason: REASON[found.what], field: opts.within, ...(path ? { path } : {}) });
  }
  const field = opts.field ?? path;
  const subject = field ? `Field "${field}"` : 'The body';
  throw new AppError('VALIDATION_ERROR', `${subject} ${FLAW_PHRASE[found.what]}`, { reason: REASON[found.what], ...(field ? { field } : {}) });
}

const REASON: Record<Unstorable['what'], string> = { nul: 'UNSTORABLE_CHARACTER', surrogate: 'UNSTORABLE_CHARACTER', number: 'NUMBER_OUT_OF_RANGE' };

const FLAW_PHRASE: Record<Unstorable['what'], string> = {
  nul: 'must not contain the NUL character (\\u0000), which cannot be stored',
  surrogate: 'contains an unpaired UTF-16 surrogate (\\uD800-\\uDFFF), which cannot be stored',
  number: 'is a number out of range: numbers must be finite, at most about 1.8e308 in size',
};

/**
 * Why one string cannot be stored (an unpaired surrogate, or the NUL character), phrased to follow a field name, or
 * null: for callers that word their own errors (the sheet socket's `"value" must not contain ...`).
 */
export function unstorableTextProblem(text: string): string | null {
  const what = flaw(text, true);
  return what && FLAW_PHRASE[what];
}

/**
 * Why a number cannot be stored (one that is not finite: a literal past the double range, 1e400, parses as Infinity,
 * which JSON writes as null), phrased to follow a field name, or null: for callers that word their own errors.
 */
export function unstorableNumberProblem(n: number): string | null {
  return Number.isFinite(n) ? null : FLAW_PHRASE.number;
}

/** Whitespace and invisible format characters (zero-width space, joiners, bidi marks: Unicode category Cf). */
const INVISIBLE = /[\s\p{Cf}]/gu;

/**
 * A name or title as stored: trimmed, and refused (400 VALIDATION_ERROR naming `field`) when nothing visible is left:
 * blank, or only zero-width or other invisible characters, which would list as an empty name.
 */
export function nonBlankText(value: string, field: string): string {
  const trimmed = value.trim();
  if (trimmed.replace(INVISIBLE, '') === '') throw new AppError('VALIDATION_ERROR', `${field} must not be blank`, { field, reason: 'BLANK' });
  if (BIDI_CONTROL.test(trimmed)) {
    throw new AppError('VALIDATION_ERROR', `${field} must not contain bidirectional embedding, override or isolate characters (U+202A-U+202E, U+2066-U+2069)`, { field, reason: 'BIDI_CONTROL' });
  }
  return trimmed;
}

/**
 * Bidirectional embeddings, overrides and isolates: they reorder how the text around them is shown, so a name can
 * display as another ("Trojan Source"). Right-to-left scripts need none of them (the marks U+200E/U+200F stay allowed).
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;

/**
 * Characters a download's name must not carry: path and shell separators, control and format characters (Cf): the
 * bidi controls U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, which make "invoice\u202Efdp.exe" read as
 * "invoiceexe.pdf", and the invisible ones (soft hyphen, zero-width space, BOM...); also lone surrogates (Cs), which
 * have no UTF-8 form, and the line and paragraph separators. The zero-width non-joiner and joiner (U+200C, U+200D)
 * stay: Persian and Indic words and emoji sequences need them, and they reorder nothing.
 */
const UNSAFE_FILENAME = /(?:[\\/:*?"<>|\p{Cc}\p{Cs}\p{Zl}\p{Zp}]|(?![\u200C\u200D])\p{Cf})+/gu;

/** A name (a title, a client's choice) as a download's file name: each unsafe run one "_", trimmed; `fallback` when nothing is left. */
export function safeFilename(name: string, fallback: string): string {
  const safe = name.replace(UNSAFE_FILENAME, '_').trim();
  // Joiners alone would make a name nobody sees.
  return /[^\s\u200C\u200D]/u.test(safe) ? safe : fallback;
}
