import { describe, expect, it, vi } from 'vitest';
import { inject } from 'vitest';
import pg from 'pg';
import { DbListener } from './listener.js';

const until = async (ok: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('DbListener', () => {
  it('subscriptions made while it connects LISTEN one at a time, and each channel hears its notifications', async () => {
    const overlapping = vi.fn();
    const query = pg.Client.prototype.query;
    let running = 0;
    // Counts LISTENs in flight on one client: a second one before the first answers is what pg deprecates.
    let onFirstListen: (() => void) | null = null;
    const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const isListen = typeof args[0] === 'string' && args[0].startsWith('LISTEN');
      if (isListen && ++running > 1) overlapping();
      if (isListen && onFirstListen) { const f = onFirstListen; onFirstListen = null; queueMicrotask(f); }
      const result = (query as (...a: unknown[]) => unknown).apply(this, args) as Promise<unknown>;
      return isListen ? result.finally(() => { running--; }) : result;
    } as typeof query);
    const listener = new DbListener(inject('databaseUrl'));
    try {
      const heard: string[] = [];
      const subscribe = (channel: string) => listener.subscribe(channel, { notify: (payload) => heard.push(`${channel}:${payload}`), reset: () => {} });
      // A new channel subscribed while the connection's first LISTENs are still running (as areas do at start).
      onFirstListen = () => subscribe('listener_test_d');
      for (const channel of ['listener_test_a', 'listener_test_b', 'listener_test_c']) subscribe(channel);
      await until(() => ['listener_test_a', 'listener_test_b', 'listener_test_c', 'listener_test_d'].every((c) => listener.isLive(c)));
      expect(overlapping).not.toHaveBeenCalled();
      spy.mockRestore();
      const sender = new pg.Client({ connectionString: inject('databaseUrl') });
      await sender.connect();
      try {
        await sender.query(`SELECT pg_notify('listener_test_b', 'x'), pg_notify('listener_test_d', 'y')`);
      } finally { await sender.end(); }
      await until(() => heard.length === 2);
      expect(heard.sort()).toEqual(['listener_test_b:x', 'listener_test_d:y']);
    } finally {
      spy.mockRestore();
      await listener.close();
    }
  });
});

describe('DbListener.close', () => {
  it('ends a connection still opening before it resolves (one left logging in made the stop of PostgreSQL log a FATAL)', async () => {
    const connect = pg.Client.prototype.connect;
    const opened: pg.Client[] = [];
    const ended = new Set<pg.Client>();
    const spy = vi.spyOn(pg.Client.prototype, 'connect').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      opened.push(this);
      this.once('end', () => ended.add(this));
      return (connect as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof connect);
    const listener = new DbListener(inject('databaseUrl'));
    try {
      listener.subscribe('listener_test_close', { notify: () => {}, reset: () => {} });
      expect(opened).toHaveLength(1);
      await listener.close();
      expect(ended.has(opened[0])).toBe(true);
      expect(listener.backendPid).toBeNull();
    } finally { spy.mockRestore(); }
  });
});
