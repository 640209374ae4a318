import { describe, expect, it } from 'vitest';
import type { Platform } from './context.js';
import { logEmbedded, startPlatform } from './platform.js';
import { loadConfig } from './config.js';

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

describe('startPlatform with a DATABASE_URL it cannot use', () => {
  it('fails naming DATABASE_URL, the host, port, database and user, never the password', async () => {
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: 'postgres://app:start-secret@127.0.0.1:1/platform' });
    const silent = { info() {}, warn() {}, error() {} } as unknown as Platform['log'];
    const err = await startPlatform(config, silent).then(() => undefined, (e: Error) => e);
    expect(err?.message).toMatch(/^DATABASE_URL: could not use the database platform at 127\.0\.0\.1:1 as app: .*ECONNREFUSED/);
    expect(err?.message).not.toContain('start-secret');
  });
});
