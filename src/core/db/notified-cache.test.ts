import { describe, expect, it } from 'vitest';
import type { Database } from './database.js';
import type { ChannelSubscriber } from './listener.js';
import { NotifiedOrgCache } from './notified-cache.js';

/** A Database stand-in whose listener the test drives. */
function stubDb() {
  let subscriber!: ChannelSubscriber;
  const s = {
    live: true,
    notify: (payload: string) => subscriber.notify(payload),
    reset: () => subscriber.reset(),
    db: { listener: { isLive: () => s.live, subscribe: (_c: string, sub: ChannelSubscriber) => { subscriber = sub; return () => {}; } } } as unknown as Database,
  };
  return s;
}

describe('NotifiedOrgCache', () => {
  it('keeps values per organization and key; an announcement drops only its organization', async () => {
    const s = stubDb();
    const c = new NotifiedOrgCache<number>(s.db, 'ch');
    let loads = 0;
    const load = (v: number) => async () => { loads++; return v; };
    expect(await c.get('a', 'k1', load(1))).toBe(1);
    expect(await c.get('a', 'k2', load(2))).toBe(2);
    expect(await c.get('b', 'k1', load(3))).toBe(3);
    expect(await c.get('a', 'k1', load(9))).toBe(1);
    expect(loads).toBe(3);
    s.notify('a');
    expect(await c.get('a', 'k1', load(4))).toBe(4);
    expect(await c.get('b', 'k1', load(9))).toBe(3);
    s.reset(); // the connection was lost: nothing known survives
    expect(await c.get('b', 'k1', load(5))).toBe(5);
    expect(loads).toBe(5);
  });

  it('does not keep an undefined answer, a load that raced with an announcement, or anything while not live', async () => {
    const s = stubDb();
    const c = new NotifiedOrgCache<string>(s.db, 'ch');
    expect(await c.get('a', 'k', async () => undefined)).toBeUndefined();
    expect(await c.get('a', 'k', async () => 'x')).toBe('x');
    s.notify('a');
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const racing = c.get('a', 'k', async () => { await held; return 'old'; });
    s.notify('a');
    release();
    expect(await racing).toBe('old');
    expect(await c.get('a', 'k', async () => 'new')).toBe('new');
    s.live = false; // memory is neither used nor filled while a change could go unnoticed
    expect(await c.get('a', 'k', async () => 'down')).toBe('down');
    expect(await c.get('b', 'k', async () => 'down')).toBe('down');
    s.live = true;
    s.reset(); // what the listener does once it listens again
    expect(await c.get('a', 'k', async () => 'fresh')).toBe('fresh');
    expect(await c.get('b', 'k', async () => 'b')).toBe('b');
  });

  it('holds at most maxOrgs organizations, dropping the least recently used', async () => {
    const s = stubDb();
    const c = new NotifiedOrgCache<string>(s.db, 'ch', 2);
    await c.get('a', 'k', async () => 'a1');
    await c.get('b', 'k', async () => 'b1');
    await c.get('a', 'k', async () => 'unused'); // a is now the most recent
    await c.get('c', 'k', async () => 'c1'); // drops b
    expect(await c.get('a', 'k', async () => 'a2')).toBe('a1');
    expect(await c.get('b', 'k', async () => 'b2')).toBe('b2');
  });

  it('holds at most maxKeysPerOrg keys of one organization, dropping the first kept', async () => {
    const s = stubDb();
    const c = new NotifiedOrgCache<string>(s.db, 'ch', 10, 2);
    await c.get('a', 'k1', async () => 'v1');
    await c.get('a', 'k2', async () => 'v2');
    await c.get('a', 'k2', async () => 'again'); // kept already: nothing goes
    await c.get('a', 'k3', async () => 'v3');
    expect(['k1', 'k2', 'k3'].map((k) => c.peek('a', k))).toEqual([undefined, 'v2', 'v3']);
  });

  it('peek answers what is in memory without loading, only while live, and counts as a use', async () => {
    const s = stubDb();
    const c = new NotifiedOrgCache<string>(s.db, 'ch', 2);
    expect(c.peek('a', 'k')).toBeUndefined();
    await c.get('a', 'k', async () => 'a1');
    await c.get('b', 'k', async () => 'b1');
    expect(c.peek('a', 'k')).toBe('a1'); // a is now the most recent
    expect(c.peek('a', 'other')).toBeUndefined();
    await c.get('c', 'k', async () => 'c1'); // drops b
    expect(c.peek('a', 'k')).toBe('a1');
    expect(c.peek('b', 'k')).toBeUndefined();
    s.live = false;
    expect(c.peek('a', 'k')).toBeUndefined();
  });
});
