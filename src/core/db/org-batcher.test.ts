import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Database, Sql } from './database.js';
import { OrgBatcher } from './org-batcher.js';

/** A Database stand-in whose tenant() records the organization each write ran for; statements finish when released. */
function stubDb() {
  const gates: Array<() => void> = [];
  const s = {
    orgs: [] as string[],
    /** Lets every write started so far finish. */
    release: () => { for (const open of gates.splice(0)) open(); },
    db: {
      tenant: async <T>(orgId: string, fn: (sql: Sql) => Promise<T>) => {
        s.orgs.push(orgId);
        await new Promise<void>((r) => gates.push(r));
        return fn({} as Sql);
      },
    } as unknown as Database,
  };
  return s;
}

const tick = () => new Promise((r) => setImmediate(r));
/** An error the database answered (a statement it refused), as pg reports it. */
const refused = (message: string) => new pg.DatabaseError(message, 0, 'error');

describe('OrgBatcher', () => {
  it('sends an item alone when fewer than maxInFlight batches run, and the items that arrive meanwhile together in the next', async () => {
    const s = stubDb();
    const batches: number[][] = [];
    const b = new OrgBatcher<number, string>(s.db, async (_sql, _org, items) => { batches.push(items); return items.map((i) => `r${i}`); }, { maxInFlight: 2, maxBatch: 10 });
    const answers = [1, 2, 3, 4, 5].map((i) => b.submit('org-a', i));
    await tick();
    expect(s.orgs).toEqual(['org-a', 'org-a']); // two in flight; 3, 4 and 5 wait
    s.release();
    await tick();
    s.release();
    expect(await Promise.all(answers)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(batches).toEqual([[1], [2], [3, 4, 5]]);
  });

  it('never puts two organizations in one batch, and runs each on a connection of its own organization', async () => {
    const s = stubDb();
    const seen: Array<[string, string[]]> = [];
    const b = new OrgBatcher<string, string>(s.db, async (_sql, org, items) => { seen.push([org, items]); return items; }, { maxInFlight: 1, maxBatch: 10 });
    const answers = ['a1', 'b1', 'a2', 'b2', 'a3'].map((i) => b.submit(i.startsWith('a') ? 'org-a' : 'org-b', i));
    await tick();
    s.release();
    await tick();
    s.release();
    expect(await Promise.all(answers)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
    expect(seen).toEqual([['org-a', ['a1']], ['org-b', ['b1']], ['org-a', ['a2', 'a3']], ['org-b', ['b2']]]);
  });

  it('sends at most maxBatch items in one batch', async () => {
    const s = stubDb();
    const sizes: number[] = [];
    const b = new OrgBatcher<number, number>(s.db, async (_sql, _org, items) => { sizes.push(items.length); return items; }, { maxInFlight: 1, maxBatch: 3 });
    const answers = Array.from({ length: 8 }, (_, i) => b.submit('org-a', i));
    for (let i = 0; i < 4; i++) { await tick(); s.release(); }
    expect(await Promise.all(answers)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(sizes).toEqual([1, 3, 3, 1]);
  });

  it('writes each item of a batch the database refused again alone, one after another on one connection, so only the item at fault gets the error', async () => {
    const s = stubDb();
    const batches: string[][] = [];
    const b = new OrgBatcher<string, string>(s.db, async (_sql, _org, items) => {
      batches.push(items);
      if (items.includes('bad')) throw refused('violates a constraint');
      return items.map((i) => i.toUpperCase());
    }, { maxInFlight: 1, maxBatch: 10 });
    const answers = ['first', 'ok', 'bad', 'fine'].map((i) => b.submit('org-a', i).then((r) => ({ r }), (err: Error) => ({ err: err.message })));
    for (let i = 0; i < 3; i++) { await tick(); s.release(); }
    expect(await Promise.all(answers)).toEqual([{ r: 'FIRST' }, { r: 'OK' }, { err: 'violates a constraint' }, { r: 'FINE' }]);
    expect(batches).toEqual([['first'], ['ok', 'bad', 'fine'], ['ok'], ['bad'], ['fine']]);
    expect(s.orgs).toHaveLength(3); // the first batch, the refused one, and one connection for its items one by one
  });

  it('without a connection (or when it breaks), fails the batch and the items waiting behind it at once, writing nothing again', async () => {
    const s = stubDb();
    let writes = 0;
    const unreachable = new Error('timeout exceeded when trying to connect');
    const b = new OrgBatcher<number, number>(s.db, async () => { writes++; throw unreachable; }, { maxInFlight: 1, maxBatch: 2 });
    const answers = [1, 2, 3, 4, 5].map((i) => b.submit('org-a', i).catch((err: Error) => err.message));
    await tick();
    s.release();
    expect(await Promise.all(answers)).toEqual(Array(5).fill('timeout exceeded when trying to connect'));
    expect(writes).toBe(1);
    expect(s.orgs).toHaveLength(1);
  });

  it('rejects an item written alone with its own error, and a write that answers the wrong number of results', async () => {
    const s = stubDb();
    const failing = new OrgBatcher<number, number>(s.db, async () => { throw new Error('database unreachable'); }, { maxInFlight: 2, maxBatch: 10 });
    const short = new OrgBatcher<number, number>(s.db, async () => [], { maxInFlight: 2, maxBatch: 10 });
    const answers = [failing.submit('org-a', 1), short.submit('org-a', 2)].map((p) => p.catch((err: Error) => err.message));
    await tick();
    s.release();
    expect(await Promise.all(answers)).toEqual(['database unreachable', 'OrgBatcher: 0 results for 1 items']);
  });

  it('rejects every item of a batch whose write answered another count of results, without writing them again', async () => {
    const s = stubDb();
    const batches: number[][] = [];
    const b = new OrgBatcher<number, number>(s.db, async (_sql, _org, items) => { batches.push(items); return items.slice(1); }, { maxInFlight: 1, maxBatch: 10 });
    const answers = [1, 2, 3].map((i) => b.submit('org-a', i).catch((err: Error) => err.message));
    for (let i = 0; i < 2; i++) { await tick(); s.release(); }
    expect(await Promise.all(answers)).toEqual(['OrgBatcher: 0 results for 1 items', 'OrgBatcher: 1 results for 2 items', 'OrgBatcher: 1 results for 2 items']);
    expect(batches).toEqual([[1], [2, 3]]);
  });
});
