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
  return CONFIGS[primary] ?? 'simple';
}

/**
 * Search text to a to_tsquery expression: words (letters and digits of any script) joined by AND,
 * the last one a prefix (`:*`) so partial titles match while the user types. Operators in the text are
 * not interpreted. null when the text has no word.
 */
export function toPrefixTsquery(text: string): string | null {
  const words = (text.normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 32);
  if (words.length === 0) return null;
  return words.map((w, i) => (i === words.length - 1 ? `${w}:*` : w)).join(' & ');
}
