import { describe, expect, it } from 'vitest';
import { AppError } from './errors.js';
import { nonBlankText } from './text.js';

describe('nonBlankText', () => {
  it('trims, and refuses a value with nothing visible: blank, or only zero-width, joiner or bidi characters', () => {
    expect(nonBlankText('  Roadmap \t', 'name')).toBe('Roadmap');
    expect(nonBlankText('\u200Bx', 'name')).toBe('\u200Bx');
    for (const blank of ['', '   \t ', '\u200B', '\u200B\u200B', '\u200D\u2060', ' \u200E\uFEFF ']) {
      let err: unknown;
      try { nonBlankText(blank, 'name'); } catch (e) { err = e; }
      expect(err, JSON.stringify(blank)).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'VALIDATION_ERROR', message: 'name must not be blank', details: { field: 'name', reason: 'BLANK' } });
    }
  });
});
