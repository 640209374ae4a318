import { describe, expect, it } from 'vitest';
import { assertSlug, RESERVED_SLUGS, SLUG_MAX, slugify, slugProblem } from './slugs.js';
import { AppError } from './errors.js';

function refusal(slug: string): AppError {
  try { assertSlug(slug); } catch (e) { return e as AppError; }
  throw new Error(`"${slug}" was accepted`);
}

describe('slugs', () => {
  it('accepts lowercase alphanumerics with single internal hyphens', () => {
    for (const s of ['a', 'acme', 'acme-2', 'a-b-c', '123', 'x'.repeat(SLUG_MAX)]) expect(slugProblem(s), s).toBeNull();
  });

  it('refuses bad formats with INVALID_FORMAT in a VALIDATION_ERROR', () => {
    for (const s of ['', 'Acme', '-acme', 'acme-', 'ac--me', 'ac me', 'acme_1', 'ác', 'x'.repeat(SLUG_MAX + 1)]) {
      expect(slugProblem(s), s).toBe('invalid_format');
      const e = refusal(s);
      expect([e.code, e.status]).toEqual(['VALIDATION_ERROR', 400]);
      expect(e.message).toContain('INVALID_FORMAT');
    }
  });

  it('refuses reserved words with RESERVED_SLUG', () => {
    for (const s of ['admin', 'api', 'v1', 'docs', 'me']) {
      expect(slugProblem(s)).toBe('reserved');
      const e = refusal(s);
      expect(e.code).toBe('VALIDATION_ERROR');
      expect(e.message).toContain('RESERVED_SLUG');
    }
  });

  it('refuses UUID-shaped slugs (they would shadow id lookups)', () => {
    expect(slugProblem('550e8400-e29b-41d4-a716-446655440000')).toBe('uuid_shaped');
    expect(slugProblem('550e8400e29b41d4a716446655440000')).toBe('uuid_shaped'); // the hyphen-less form is a UUID too
    // Other hyphenations PostgreSQL reads as the same id (a hyphen after any group of four hex digits).
    expect(slugProblem('01a219ac-c0c87731-bdd6-671be5259c84')).toBe('uuid_shaped');
    expect(slugProblem('a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11')).toBe('uuid_shaped');
    expect(slugProblem('a0eebc999c0b4ef8bb6d6bb9bd380a1')).toBe(null); // 31 digits
    expect(slugProblem('a0e-ebc999c0b4ef8bb6d6bb9bd380a11')).toBe(null); // a hyphen inside a group of four
    expect(slugProblem('550e8400e29b41d4a71644665544000')).toBeNull(); // 31 hex digits: not a UUID
    expect(refusal('550e8400-e29b-41d4-a716-446655440000').message).toContain('INVALID_FORMAT');
  });

  it('slugify gives a valid, non-reserved slug for any name', () => {
    const names = ['Acme Inc.', '  Ünïcödé Café  ', '***', '', 'Admin', 'API', 'a'.repeat(500), '--x--', '550e8400-e29b-41d4-a716-446655440000', '日本語'];
    for (const n of names) {
      const s = slugify(n);
      expect(slugProblem(s), `${n} -> ${s}`).toBeNull();
      expect(RESERVED_SLUGS.has(s)).toBe(false);
    }
    expect(slugify('Acme Inc.')).toBe('acme-inc');
    expect(slugify('Café Crème')).toBe('cafe-creme');
  });

  it('a generated slug with its longest unique suffix is still a valid slug', () => {
    const long = slugify('a'.repeat(500));
    expect(slugProblem(`${long}-1f3a9c0d`)).toBeNull();
    expect(`${long}-1f3a9c0d`).toHaveLength(SLUG_MAX);
  });
});
