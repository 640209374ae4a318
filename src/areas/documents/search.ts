/** BCP-47 primary language to PostgreSQL text-search configuration; anything unknown indexes with `simple`. */
const CONFIGS: Record<string, string> = {
  en: 'english', de: 'german', fr: 'french', es: 'spanish', it: 'italian', pt: 'portuguese', nl: 'dutch',
  sv: 'swedish', da: 'danish', no: 'norwegian', nb: 'norwegian', nn: 'norwegian', fi: 'finnish', ru: 'russian',
  hu: 'hungarian', ro: 'romanian', tr: 'turkish', ar: 'arabic', el: 'greek', id: 'indonesian', ga: 'irish',
  lt: 'lithuanian', ne: 'nepali', sr: 'serbian', ta: 'tamil', hy: 'armenian', eu: 'basque', ca: 'catalan', hi: 'hindi', yi: 'yiddish',
};

/** Default english; `metadata.language` / the `language` query parameter choose another (e.g. "de", "pt-BR"). */
export function searchLanguage(tag: unknown): string {
  if (typeof tag !== 'string' || !tag) return 'english';
  const primary = tag.toLowerCase().split('-')[0];
  // Own keys only: a tag such as "constructor" or "__proto__" must not read Object.prototype.
  return Object.hasOwn(CONFIGS, primary) ? CONFIGS[primary] : 'simple';
}

/**
 * Search text to a to_tsquery expression: the whitespace-separated pieces that have a letter or digit (of any script),
 * joined by AND, the last one a prefix (`:*`) so partial titles match while the user types. A piece of letters and
 * digits alone is one quoted term. A piece with other characters in it matches either way it can be read: quoted
 * whole, it goes through the same parser that built the documents' vectors, so text the parser keeps whole is found
 * as typed (`marker-1795`, indexed as `marker` then `-1795`; `ada@example.com`; `v1.2.3`); split into its words, it
 * finds the same words written apart (`self-driving` finds "self driving"). Operators in the text are not
 * interpreted. null when the text has no word.
 */
export function toPrefixTsquery(text: string): string | null {
  // Lowercased here with Unicode case mapping, as the documents' text is before it is indexed (migration 0067): the
  // database's own lowercasing may be ASCII only (the C locale).
  const pieces = text.normalize('NFKC').toLowerCase().split(/\s+/u).filter((c) => /[\p{L}\p{N}]/u.test(c)).slice(0, 32);
  if (pieces.length === 0) return null;
  return pieces.map((piece, i) => readings(piece, i === pieces.length - 1)).join(' & ');
}

const WORD = /[\p{L}\p{N}]+/gu;
const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** One piece as a to_tsquery operand: quoted whole, or (whole | its words AND-ed) when it has other characters. */
function readings(piece: string, prefix: boolean): string {
  const star = prefix ? ':*' : '';
  const words = piece.match(WORD)!;
  if (words.length === 1 && words[0] === piece) return `${quote(piece)}${star}`;
  const apart = words.map((w, i) => `${quote(w)}${i === words.length - 1 ? star : ''}`).join(' & ');
  return `(${quote(piece)}${star} | (${apart}))`;
}
