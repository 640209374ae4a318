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
 * different organizations never share one. When a batch of several fails, each of its items is written again alone,
 * so an item's outcome (its result or its error) is the one it would have had without batching.
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
    void this.run(orgId, batch).finally(() => {
      q.inFlight--;
      if (q.waiting.length) this.flush(orgId, q);
      else if (!q.inFlight) this.queues.delete(orgId);
    });
  }

  private async run(orgId: string, batch: Waiter<I, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.db.tenant(orgId, (sql) => this.write(sql, orgId, batch.map((w) => w.item)));
    } catch (err) {
      if (batch.length === 1) { batch[0]!.reject(err); return; }
      // One item's failure (a row a concurrent change made invalid) fails the whole statement: each item alone.
      await Promise.all(batch.map((w) => this.db.tenant(orgId, (sql) => this.write(sql, orgId, [w.item]))
        .then((r) => this.settle([w], r), w.reject)));
      return;
    }
    this.settle(batch, results);
  }

  /** Answers each waiter its result; a write that answered another count of results is a defect, not retried. */
  private settle(batch: Waiter<I, R>[], results: R[]): void {
    if (results.length === batch.length) { batch.forEach((w, i) => w.resolve(results[i]!)); return; }
    const err = new Error(`OrgBatcher: ${results.length} results for ${batch.length} items`);
    for (const w of batch) w.reject(err);
  }
}
