import pg from 'pg';
import type { Database, Sql } from './database.js';

/**
 * Writes the items of one organization in `write`, which answers one result per item, in order; one statement (one
 * round trip, one commit) for the whole batch.
 */
export type BatchWrite<I, R> = (sql: Sql, orgId: string, items: I[]) => Promise<R[]>;

export type OrgBatcherOptions = {
  /** Batches of one organization running at once; more arrivals wait and leave together in the next one. */
  maxInFlight: number;
  /** Items per batch at most. */
  maxBatch: number;
};

type Waiter<I, R> = { item: I; resolve: (r: R) => void; reject: (err: unknown) => void };
type OrgQueue<I, R> = { waiting: Waiter<I, R>[]; inFlight: number };

/**
 * Coalesces writes of one organization that arrive while earlier ones are still in the database into one statement
 * (natural batching, as PostgreSQL's group commit does for WAL flushes): an item that finds fewer than `maxInFlight`
 * batches of its organization running leaves at once, alone, so a quiet server adds no wait; under load the items
 * that arrived meanwhile leave together as soon as a batch finishes. A batch costs the database one round trip, one
 * statement start and one commit instead of one per item, which is most of what a small write costs.
 *
 * Each batch runs on one tenant connection of its organization (row-level security as for any request); items of
 * different organizations never share one. When the database refuses a batch of several, each of its items is written
 * again alone, so an item's outcome (its result or its error) is the one it would have had without batching; when no
 * connection can be had, the batch and the items waiting behind it fail at once.
 */
export class OrgBatcher<I, R> {
  private readonly queues = new Map<string, OrgQueue<I, R>>();

  constructor(private readonly db: Database, private readonly write: BatchWrite<I, R>, private readonly opts: OrgBatcherOptions) {}

  submit(orgId: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let q = this.queues.get(orgId);
      if (!q) this.queues.set(orgId, q = { waiting: [], inFlight: 0 });
      q.waiting.push({ item, resolve, reject });
      if (q.inFlight < this.opts.maxInFlight) this.flush(orgId, q);
    });
  }

  private flush(orgId: string, q: OrgQueue<I, R>): void {
    const batch = q.waiting.splice(0, this.opts.maxBatch);
    q.inFlight++;
    void this.run(orgId, q, batch).finally(() => {
      q.inFlight--;
      if (q.waiting.length) this.flush(orgId, q);
      else if (!q.inFlight) this.queues.delete(orgId);
    });
  }

  private async run(orgId: string, q: OrgQueue<I, R>, batch: Waiter<I, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.db.tenant(orgId, (sql) => this.write(sql, orgId, batch.map((w) => w.item)));
    } catch (err) {
      if (!(err instanceof pg.DatabaseError)) {
        // No connection within the pool's timeout, or it broke: the items waiting behind this batch would meet the
        // same after waiting their turn, so they fail now, as a request waiting for a connection of its own would.
        for (const w of [...batch, ...q.waiting.splice(0)]) w.reject(err);
        return;
      }
      if (batch.length === 1) batch[0]!.reject(err);
      else await this.oneByOne(orgId, batch);
      return;
    }
    this.settle(batch, results);
  }

  /**
   * The items of a batch the database refused, each in a statement of its own (one item's row, made invalid by a
   * concurrent change, fails the whole statement), one after another on one connection: a failed batch must not take
   * a connection per item from the pool.
   */
  private async oneByOne(orgId: string, batch: Waiter<I, R>[]): Promise<void> {
    let next = 0;
    try {
      await this.db.tenant(orgId, async (sql) => {
        for (; next < batch.length; next++) {
          const w = batch[next]!;
          let results: R[];
          try {
            results = await this.write(sql, orgId, [w.item]);
          } catch (err) {
            if (!(err instanceof pg.DatabaseError)) throw err; // the connection is gone: the rest fail with it
            w.reject(err);
            continue;
          }
          this.settle([w], results);
        }
      });
    } catch (err) {
      for (const w of batch.slice(next)) w.reject(err);
    }
  }

  /** Answers each waiter its result; a write that answered another count of results is a defect, not retried. */
  private settle(batch: Waiter<I, R>[], results: R[]): void {
    if (results.length === batch.length) { batch.forEach((w, i) => w.resolve(results[i]!)); return; }
    const err = new Error(`OrgBatcher: ${results.length} results for ${batch.length} items`);
    for (const w of batch) w.reject(err);
  }
}
