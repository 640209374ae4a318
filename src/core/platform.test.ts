import { describe, expect, it } from 'vitest';
import type { Platform } from './context.js';
import { logEmbedded } from './platform.js';

describe('logEmbedded', () => {
  it('logs PostgreSQL problems and crash recovery at warn, readiness at info, routine output not at all', () => {
    const lines: Array<[string, string]> = [];
    const log = { warn: (_o: unknown, m: string) => lines.push(['warn', m]), info: (_o: unknown, m: string) => lines.push(['info', m]) } as unknown as Platform['log'];
    logEmbedded(log, 'embedded PostgreSQL: stopping a server left running by an earlier process (pid 42)');
    logEmbedded(log, '2026-11-22 00:00:00 UTC [7] FATAL:  terminating connection');
    logEmbedded(log, 'embedded PostgreSQL ready on 127.0.0.1:5555');
    logEmbedded(log, '2026-11-22 00:00:00 UTC [7] LOG:  checkpoint starting: time');
    expect(lines).toEqual([
      ['warn', 'embedded PostgreSQL: stopping a server left running by an earlier process (pid 42)'],
      ['warn', '2026-11-22 00:00:00 UTC [7] FATAL:  terminating connection'],
      ['info', 'embedded PostgreSQL ready on 127.0.0.1:5555'],
    ]);
  });
});
