import { describe, expect, it } from 'vitest';
import { searchLanguage } from './search.js';

describe('searchLanguage', () => {
  it('maps a BCP-47 tag to its text-search configuration; unknown tags, Object.prototype names included, are simple', () => {
    expect(['en', 'de-CH', 'pt-BR', 'NB'].map(searchLanguage)).toEqual(['english', 'german', 'portuguese', 'norwegian']);
    expect(['xx', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf-x'].map(searchLanguage)).toEqual(Array(6).fill('simple'));
    expect([undefined, '', 42, null].map(searchLanguage)).toEqual(Array(4).fill('english'));
  });
});
