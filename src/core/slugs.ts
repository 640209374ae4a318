import { Type } from 'typebox';
import { AppError } from './errors.js';
import { isUuid } from './ids.js';

/** Spec 2.2: lowercase alphanumeric with single internal hyphens. */
export const SLUG_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Spec 2.2 sets no length; spec 8 checks availability of slugs of 1-256 chars, so a slug can be as long as that. */
export const SLUG_MAX = 256;

/**
 * A slug in a request body. The rules are checked by assertSlug, not by the schema, so that every broken rule (length
 * included) is the same VALIDATION_ERROR naming INVALID_FORMAT or RESERVED_SLUG; the description says them.
 */
export const SlugInput = Type.String({ description: `1-${SLUG_MAX} lowercase letters or digits with single internal hyphens; not UUID-shaped, not reserved` });

/** Words that would collide with routes, subdomains or platform names. */
export const RESERVED_SLUGS = new Set([
  'admin', 'administrator', 'api', 'app', 'apps', 'assets', 'auth', 'billing', 'bootstrap', 'cdn', 'cli', 'dashboard',
  'docs', 'help', 'internal', 'login', 'logout', 'mail', 'mcp', 'me', 'new', 'null', 'undefined', 'oauth', 'openapi',
  'organizations', 'platform', 'pricing', 'projects', 'prove', 'public', 'register', 'root', 'scim', 'settings',
  'signup', 'sso', 'static', 'status', 'support', 'system', 'v1', 'v2', 'www', 'health', 'current', 'edit', 'delete',
]);

export type SlugProblem = 'invalid_format' | 'uuid_shaped' | 'reserved';

/**
 * 32 hex digits in groups of four, a hyphen allowed after any group: every hyphenated form PostgreSQL's uuid input
 * accepts as an id (the canonical 8-4-4-4-12 one, none at all, `a0ee-bc99-...`), not only the canonical one.
 */
const UUID_HEX_RE = /^(?:[0-9a-f]{4}-?){7}[0-9a-f]{4}$/i;

export function slugProblem(slug: string): SlugProblem | null {
  if (isUuid(slug) || UUID_HEX_RE.test(slug)) return 'uuid_shaped';
  if (slug.length < 1 || slug.length > SLUG_MAX || !SLUG_RE.test(slug)) return 'invalid_format';
  if (RESERVED_SLUGS.has(slug)) return 'reserved';
  return null;
}

/** Throws VALIDATION_ERROR whose message names RESERVED_SLUG or INVALID_FORMAT (spec part 7). */
export function assertSlug(slug: string, field = 'slug'): void {
  const p = slugProblem(slug);
  if (!p) return;
  if (p === 'reserved') throw new AppError('VALIDATION_ERROR', `RESERVED_SLUG: "${slug}" is reserved; choose another ${field}`, { field, reason: 'RESERVED_SLUG' });
  const why = p === 'uuid_shaped' ? 'must not look like a UUID' : `must be 1-${SLUG_MAX} lowercase letters or digits with single internal hyphens`;
  throw new AppError('VALIDATION_ERROR', `INVALID_FORMAT: ${field} ${why}`, { field, reason: 'INVALID_FORMAT' });
}

/** Room a generated slug leaves for the suffix that makes it unique: "-" and up to 8 characters (`-2`, `-1f3a9c0d`). */
export const SLUG_SUFFIX_ROOM = 9;

/** A slug from a display name; never empty, never reserved (a suffix is added); short enough for a unique suffix. */
export function slugify(name: string): string {
  let s = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, SLUG_MAX - SLUG_SUFFIX_ROOM).replace(/-+$/g, '');
  if (!s) s = 'item';
  if (slugProblem(s)) s = `${s}-1`.replace(/^-/, '');
  return s;
}
