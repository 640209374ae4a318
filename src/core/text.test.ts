import { describe, expect, it } from 'vitest';
import { AppError } from './errors.js';
import { nonBlankText, safeFilename } from './text.js';

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

  it('refuses bidirectional embeddings, overrides and isolates (a name shown as another); keeps right-to-left text and its marks', () => {
    for (const spoof of ['invoice\u202Efdp.exe', 'a\u202Ab', 'a\u202Db', 'x\u2066y\u2069', 'x\u2067y', 'x\u2068y']) {
      let err: unknown;
      try { nonBlankText(spoof, 'title'); } catch (e) { err = e; }
      expect(err, JSON.stringify(spoof)).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'title', reason: 'BIDI_CONTROL' } });
    }
    expect(nonBlankText('\u05E9\u05DC\u05D5\u05DD 2027', 'name')).toBe('\u05E9\u05DC\u05D5\u05DD 2027');
    expect(nonBlankText('\u0645\u0634\u0631\u0648\u0639\u200F A', 'name')).toBe('\u0645\u0634\u0631\u0648\u0639\u200F A');
  });
});

describe('safeFilename', () => {
  it('replaces unsafe runs with _, keeps joiners inside words, falls back when nothing visible is left', () => {
    expect(safeFilename('a/b:c\u202Ed', 'x')).toBe('a_b_c_d');
    expect(safeFilename('می\u200Cخواهم', 'x')).toBe('می\u200Cخواهم');
    expect(safeFilename('\u200C', 'sheet')).toBe('sheet');
    expect(safeFilename(' \u200D\u200C ', 'sheet')).toBe('sheet');
    expect(safeFilename('   ', 'document')).toBe('document');
  });
});
