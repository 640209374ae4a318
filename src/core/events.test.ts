import { describe, expect, it } from 'vitest';
import { EventBus, type PlatformEvent } from './events.js';

const event = (type: string): PlatformEvent => ({ type, orgId: 'o', actorUserId: null, targetType: 't', targetId: 'i', data: {}, at: new Date(0).toISOString() });
const later = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('EventBus', () => {
  it('answers the publisher at once; settled() waits for every handler, also for events handlers publish', async () => {
    const bus = new EventBus();
    const done: string[] = [];
    bus.subscribe(async (e) => {
      await later(30);
      done.push(e.type);
      if (e.type === 'a.first') bus.publish(event('a.second'));
    });
    bus.publish(event('a.first'));
    expect(done).toEqual([]);
    await bus.settled();
    expect(done).toEqual(['a.first', 'a.second']);
  });

  it('a failing handler neither reaches the publisher nor keeps settled() waiting', async () => {
    const bus = new EventBus();
    let other = 0;
    bus.subscribe(async () => { throw new Error('handler failed'); });
    bus.subscribe(async () => { await later(10); other++; });
    expect(() => bus.publish(event('b.one'))).not.toThrow();
    await bus.settled();
    expect(other).toBe(1);
    await bus.settled(); // nothing running: resolves at once
  });
});

describe('shutdown', () => {
  it('waits for running event handlers before the pools close, so their writes land', async () => {
    const { buildTestApp } = await import('../../test/helpers.js');
    const t = await buildTestApp();
    let outcome = 'not run';
    t.platform.events.subscribe(async () => {
      await later(200); // still running when the shutdown starts
      try { await t.platform.db.sys.query('SELECT 1'); outcome = 'written'; } catch (err) { outcome = `failed: ${(err as Error).message}`; }
    });
    t.platform.events.publish(event('c.late'));
    await t.close();
    expect(outcome).toBe('written');
  });
});
