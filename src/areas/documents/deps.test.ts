import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { startPlatform } from '../../core/platform.js';
import { buildApp } from '../../app.js';
import { ticketStoreKind } from './deps.js';

describe('the documents area configuration', () => {
  it('COLLAB_TICKET_STORE: postgres (default) or memory; another is refused, not read as postgres', () => {
    expect([ticketStoreKind(undefined), ticketStoreKind(''), ticketStoreKind('postgres'), ticketStoreKind('memory')]).toEqual(['postgres', 'postgres', 'postgres', 'memory']);
    expect(() => ticketStoreKind('redis')).toThrow(new Error('COLLAB_TICKET_STORE must be postgres or memory, got "redis"'));
  });

  it('a bad COLLAB_TICKET_STORE refuses the start (the app is not built), instead of failing documents requests with 500s', async () => {
    const config = loadConfig({ NODE_ENV: 'test' }, {
      databaseUrl: inject('databaseUrl'), encryptionKey: inject('encryptionKey'), rootApiKey: inject('rootApiKey'),
      dataDir: inject('dataDir'), logLevel: 'silent', dbPoolSize: 2,
    });
    const running = await startPlatform(config, { info() {}, warn() {}, error() {} });
    const saved = process.env.COLLAB_TICKET_STORE;
    process.env.COLLAB_TICKET_STORE = 'memroy';
    try {
      await expect(buildApp(running.platform, { logger: false }).then((app) => app.ready())).rejects.toThrow('COLLAB_TICKET_STORE must be postgres or memory, got "memroy"');
    } finally {
      if (saved === undefined) delete process.env.COLLAB_TICKET_STORE; else process.env.COLLAB_TICKET_STORE = saved;
      await running.close();
    }
  });
});
