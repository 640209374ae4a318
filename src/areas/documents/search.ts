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
 * Search text to a to_tsquery expression: each whitespace-separated chunk that has a letter or digit (of any script)
 * becomes one quoted term, all joined by AND, the last one a prefix (`:*`) so partial titles match while the user
 * types. Quoting hands each chunk to the same parser that built the documents' vectors, so text the parser keeps
 * whole matches too: `marker-1795` (indexed as `marker` then `-1795`), `ada@example.com`, `v1.2.3`. Operators in
 * the text are not interpreted. null when the text has no word.
 */
export function toPrefixTsquery(text: string): string | null {
  const chunks = text.normalize('NFKC').split(/\s+/u).filter((c) => /[\p{L}\p{N}]/u.test(c)).slice(0, 32);
  if (chunks.length === 0) return null;
  const quoted = chunks.map((c) => `'${c.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`);
  return quoted.map((q, i) => (i === quoted.length - 1 ? `${q}:*` : q)).join(' & ');
}
