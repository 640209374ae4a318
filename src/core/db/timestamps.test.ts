import { describe, expect, it } from 'vitest';
import { timestamptzToIso } from './database.js';

describe('timestamptzToIso', () => {
  it('gives exactly what new Date(v).toISOString() gives, for every form PostgreSQL writes', () => {
    const samples = [
      '2026-11-21 13:12:58+00', '2026-11-21 13:12:58.1+00', '2026-11-21 13:12:58.12+00', '2026-11-21 13:12:58.123+00',
      '2026-11-21 13:12:58.1239+00', '2026-11-21 13:12:58.12395+00', '2026-11-21 13:12:58.123956+00', '2026-11-21 13:12:58.999999+00',
      '1970-01-01 00:00:00+00', '2026-11-21 14:12:58.5+01', '2026-11-21 08:12:58.123456-05',
      '2026-11-21 18:42:58.25+05:30', '9999-12-31 23:59:59.999999+00', '2026-02-28 23:59:59.000001+00',
    ];
    for (const v of samples) expect(timestamptzToIso(v), v).toBe(new Date(v).toISOString());
    for (let i = 0; i < 2000; i++) {
      const d = new Date(Math.floor(Math.random() * 4e12));
      const us = String(Math.floor(Math.random() * 1e6)).padStart(6, '0').replace(/0+$/, '');
      const v = `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)}${us ? `.${us}` : ''}+00`;
      expect(timestamptzToIso(v), v).toBe(new Date(v).toISOString());
    }
  });

  it('reads years 0001-0999 as written (Date\'s parser would read "0001" as 2001)', () => {
    expect(timestamptzToIso('0001-01-01 00:00:00+00')).toBe('0001-01-01T00:00:00.000Z');
    expect(timestamptzToIso('0099-03-04 05:06:07.5+00')).toBe('0099-03-04T05:06:07.500Z');
    expect(timestamptzToIso('0999-12-31 23:59:59.999999+00')).toBe('0999-12-31T23:59:59.999Z');
  });

  it('leaves other values to Date (infinity still throws as before)', () => {
    expect(() => timestamptzToIso('infinity')).toThrow(RangeError);
  });
});
