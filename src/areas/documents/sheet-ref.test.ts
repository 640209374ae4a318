import { describe, expect, it } from 'vitest';
import { parseRef } from './sheet-ref.js';

/** The reference parser as it was (a regular expression): the scan must answer exactly as it did. */
function parseRefByRegex(ref: string): { col: number; row: number } | null {
  const m = /^([A-Z]{1,3})([1-9][0-9]{0,6})$/.exec(ref);
  if (!m) return null;
  let col = 0;
  for (const ch of m[1]) col = col * 26 + (ch.charCodeAt(0) - 64);
  const row = Number(m[2]);
  return col > 16_384 || row > 1_048_576 ? null : { col: col - 1, row: row - 1 };
}

/** A reproducible stream of pseudo-random numbers in [0, 1) (a linear congruential generator). */
function random(seed: number): () => number {
  let s = seed;
  return () => { s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0; return s / 2 ** 32; };
}

describe('parseRef', () => {
  it('takes A1 references inside the grid, zero-based, and refuses everything else', () => {
    const cases: Array<[string, { col: number; row: number } | null]> = [
      ['A1', { col: 0, row: 0 }], ['Z9', { col: 25, row: 8 }], ['AA10', { col: 26, row: 9 }], ['XFD1048576', { col: 16_383, row: 1_048_575 }],
      ['XFE1', null], ['XFD1048577', null], ['A1048577', null], ['A0', null], ['A01', null], ['a1', null], ['Aa1', null], ['xfd1', null],
      ['AAAA1', null], ['A12345678', null], ['A', null], ['1', null], ['', null], [' A1', null], ['A1 ', null], ['A1\n', null],
      ['A-1', null], ['A1.5', null], ['A1:B2', null], ['$A$1', null], ['A１', null], ['ZZZ1', null], ['XFC9999999', null],
    ];
    for (const [ref, expected] of cases) expect([ref, parseRef(ref)]).toEqual([ref, expected]);
  });

  it('answers as the regular expression it replaces for every reference of letter and digit runs near the bounds', () => {
    const letters = ['A', 'Z', 'AA', 'AZ', 'ZZ', 'XFD', 'XFE', 'XEZ', 'XGA', 'YAA', 'ZZZ', 'AAAA', 'a', 'Aa', '@', '[', 'É'];
    const rows = ['', '0', '1', '01', '9', '10', '999999', '1048575', '1048576', '1048577', '9999999', '10000000', '0000001', '1/', '1:', '1e3', '٣'];
    for (const l of letters) for (const r of rows) expect([l + r, parseRef(l + r)]).toEqual([l + r, parseRefByRegex(l + r)]);
  });

  it('answers as the regular expression it replaces on 200,000 generated strings', () => {
    const next = random(42);
    const alphabet = 'AABCDEFGHXYZXFDaz0123456789001:$ -@[`/';
    let valid = 0;
    for (let n = 0; n < 200_000; n++) {
      let ref = '';
      for (let len = Math.floor(next() * 11); len > 0; len--) ref += alphabet[Math.floor(next() * alphabet.length)];
      const expected = parseRefByRegex(ref);
      if (expected) valid++;
      if (JSON.stringify(parseRef(ref)) !== JSON.stringify(expected)) expect([ref, parseRef(ref)]).toEqual([ref, expected]);
    }
    // The generated strings include valid references too, not only ones both refuse.
    expect(valid).toBeGreaterThan(1_000);
  });
});
