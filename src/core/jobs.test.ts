import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, until, type TestApp } from '../../test/helpers.js';
import { enqueue, FIRST_PERIODIC_RUN_MS, JobRunner } from './jobs.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp({ jobPollMs: 0 }); });
afterAll(async () => { await t.close(); });

const jobRow = (orgId: string, kind: string) =>
  t.platform.db.sys.one<{ status: string; attempts: number; last_error: string | null }>(`SELECT status, attempts, last_error FROM jobs WHERE org_id = $1 AND kind = $2`, [orgId, kind]);

describe('durable jobs', () => {
  it('runs a job enqueued in a committed transaction and marks it done', async () => {
    const a = await newTenant(t.app);
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 5 });
    const seen: unknown[] = [];
    runner.register('test.ok', async (job) => { seen.push(job.payload); });
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind: 'test.ok', payload: { n: 1 } }));
    expect(await runner.drain()).toBe(1);
    expect(seen).toEqual([{ n: 1 }]);
    expect((await jobRow(a.orgId, 'test.ok'))!.status).toBe('done');
  });

  it('does not run a job whose transaction rolled back', async () => {
    const a = await newTenant(t.app);
    await expect(t.platform.db.tenantTx(a.orgId, async (sql) => {
      await enqueue(sql, { orgId: a.orgId, kind: 'test.rolled', payload: {} });
      throw new Error('abort');
    })).rejects.toThrow('abort');
    expect(await jobRow(a.orgId, 'test.rolled')).toBeUndefined();
  });

  it('retries a failing job with backoff and records the error, then fails for good after max attempts; each failure is logged naming the organization', async () => {
    const a = await newTenant(t.app);
    const logged: Array<[unknown, string]> = [];
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 5, log: (o, m) => logged.push([o, m]) });
    let calls = 0;
    runner.register('test.fail', async () => { calls++; throw new Error('remote said no'); });
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind: 'test.fail', maxAttempts: 2 }));
    await runner.drain();
    let row = await jobRow(a.orgId, 'test.fail');
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'remote said no' });
    await t.platform.db.sys.exec(`UPDATE jobs SET run_at = now() WHERE org_id = $1`, [a.orgId]);
    await runner.drain();
    row = await jobRow(a.orgId, 'test.fail');
    expect(row).toMatchObject({ status: 'failed', attempts: 2 });
    expect(calls).toBe(2);
    const { id } = (await t.platform.db.sys.one<{ id: string }>(`SELECT id FROM jobs WHERE org_id = $1 AND kind = 'test.fail'`, [a.orgId]))!;
    const fields = { err: expect.objectContaining({ message: 'remote said no' }), orgId: a.orgId, jobId: id, kind: 'test.fail' };
    expect(logged).toEqual([[{ ...fields, attempts: 1 }, 'job failed; will retry'], [{ ...fields, attempts: 2 }, 'job failed for good']]);
  });

  it('reclaims a job left running by a crashed node', async () => {
    const a = await newTenant(t.app);
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind: 'test.crash' }));
    // Not renewed for over a minute: its node died (claims of live jobs are renewed every 15 s).
    await t.platform.db.sys.exec(`UPDATE jobs SET status = 'running', locked_at = now() - interval '61 seconds', attempts = 1 WHERE org_id = $1`, [a.orgId]);
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 5 });
    runner.register('test.crash', async () => {});
    // Other test files' runners share this database and reclaim stale jobs too: while one of them holds the row for
    // its reclaim, this runner's claim skips it (SKIP LOCKED) and finds it on a later pass, as a node would next tick.
    let status: string | undefined;
    for (let pass = 0; pass < 50 && status !== 'done'; pass++) {
      await runner.drain();
      status = (await jobRow(a.orgId, 'test.crash'))!.status;
      if (status !== 'done') await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe('done');
  });

  it('a job still running keeps its claim (heartbeat): another runner does not take it over, however long it takes', async () => {
    const a = await newTenant(t.app);
    const kind = `test.slow.${a.orgId}`;
    const opts = { pollMs: 50, batch: 5, heartbeatMs: 40, staleAfterMs: 250 };
    const first = new JobRunner(t.platform.db, opts);
    const second = new JobRunner(t.platform.db, opts);
    let calls = 0;
    const slow = async () => { calls++; await new Promise((r) => setTimeout(r, 900)); };
    first.register(kind, slow);
    second.register(kind, slow);
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind }));
    const running = first.drain();
    for (let i = 0; i < 12; i++) { await new Promise((r) => setTimeout(r, 60)); await second.drain(); }
    await running;
    expect(calls).toBe(1);
    expect((await jobRow(a.orgId, kind))!.status).toBe('done');
  });

  it('a slow job holds only its own slot: a job enqueued meanwhile runs beside it; stop() waits only its grace', async () => {
    const a = await newTenant(t.app);
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 5 });
    let releaseSlow!: () => void;
    const slowDone = new Promise<void>((r) => { releaseSlow = r; });
    const fastRan = new Promise<number>((r) => runner.register('test.fast', async () => r(Date.now())));
    runner.register('test.slow', () => slowDone);
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind: 'test.slow' }));
    runner.start();
    await new Promise((r) => setTimeout(r, 150)); // the slow job is running
    expect((await jobRow(a.orgId, 'test.slow'))!.status).toBe('running');
    const enqueuedAt = Date.now();
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind: 'test.fast' }));
    runner.poke();
    expect(await fastRan - enqueuedAt).toBeLessThan(1_000);
    const stopping = Date.now();
    await runner.stop(300); // the slow job is still running: stop returns after its grace
    expect(Date.now() - stopping).toBeLessThan(2_000);
    releaseSlow();
  });

  it('a kind with a concurrency of its own never takes more slots: 10 hanging jobs of it leave room for another tenant\'s job', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 5 });
    let release!: () => void;
    const hang = new Promise<void>((r) => { release = r; });
    let hanging = 0;
    runner.register('test.hang', async () => { hanging++; await hang; }, { concurrency: 2 });
    const otherRan = new Promise<void>((r) => runner.register('test.other', async () => r()));
    for (let i = 0; i < 10; i++) await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind: 'test.hang' }));
    runner.start();
    await new Promise((r) => setTimeout(r, 200));
    expect(hanging).toBe(2); // its share, not all five slots
    await t.platform.db.tenantTx(b.orgId, (sql) => enqueue(sql, { orgId: b.orgId, kind: 'test.other' }));
    runner.poke();
    await otherRan;
    // Two callers stopping (the app's close hook, then the platform's) share one grace.
    const stopping = Date.now();
    for (let i = 0; i < 3; i++) await runner.stop(400);
    expect(Date.now() - stopping).toBeLessThan(1_000);
    release();
  });

  it('a job that fails while a job of its dedupe key is pending is superseded; the pending one runs, and so do other tenants\' jobs', async () => {
    const a = await newTenant(t.app);
    const b = await newTenant(t.app);
    const kind = `test.dedupe-fail.${a.orgId}`;
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 5 });
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let calls = 0;
    runner.register(kind, async () => { calls++; if (calls === 1) { await held; throw new Error('too big to index'); } });
    const otherRan = new Promise<void>((r) => runner.register(`test.other.${b.orgId}`, async () => r()));
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind, dedupeKey: 'doc-1' }));
    const first = runner.drain();
    await until(async () => (await jobRow(a.orgId, kind))?.status === 'running');
    // A write while the first attempt runs: a second job of the key (allowed: the first is not pending).
    await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind, dedupeKey: 'doc-1' }));
    release();
    await first;
    const rows = await t.platform.db.sys.query<{ status: string }>(`SELECT status FROM jobs WHERE org_id = $1 AND kind = $2 ORDER BY id`, [a.orgId, kind]);
    expect(rows.map((r) => r.status)).toEqual(['superseded', 'done']);
    expect(calls).toBe(2);
    await t.platform.db.tenantTx(b.orgId, (sql) => enqueue(sql, { orgId: b.orgId, kind: `test.other.${b.orgId}` }));
    await runner.drain();
    await otherRan;
  });

  it('stale jobs go back to pending one per dedupe key; the others of the key are superseded, and the round goes on', async () => {
    const a = await newTenant(t.app);
    const kind = `test.stale-dedupe.${a.orgId}`;
    const ran: string[] = [];
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 5, staleAfterMs: 1_000 });
    runner.register(kind, async (job) => { ran.push(job.id); });
    // As a dead node leaves them: two running jobs of key k1 (no heartbeat), one running of k2 with a pending twin,
    // one running without a key.
    const insert = (key: string | null, status: string, lockedAgo: string) => t.platform.db.sys.exec(
      `INSERT INTO jobs (org_id, id, kind, dedupe_key, status, locked_at, attempts) VALUES ($1, gen_random_uuid(), $2, $3, $4, now() - $5::interval, 1)`,
      [a.orgId, kind, key, status, lockedAgo]);
    await insert('k1', 'running', '2 minutes');
    await insert('k1', 'running', '3 minutes');
    await insert('k2', 'running', '2 minutes');
    await insert('k2', 'pending', '0 seconds');
    await insert(null, 'running', '2 minutes');
    await runner.drain();
    const rows = await t.platform.db.sys.query<{ key: string | null; status: string }>(
      `SELECT dedupe_key AS key, status FROM jobs WHERE org_id = $1 AND kind = $2 ORDER BY dedupe_key NULLS LAST, status`, [a.orgId, kind]);
    expect(rows).toEqual([
      { key: 'k1', status: 'done' }, { key: 'k1', status: 'superseded' },
      { key: 'k2', status: 'done' }, { key: 'k2', status: 'superseded' },
      { key: null, status: 'done' },
    ]);
    expect(ran).toHaveLength(3);
  });

  it('claims are fair between organizations: one organization\'s backlog of older jobs does not hold back another\'s job', async () => {
    const flood = await newTenant(t.app);
    const other = await newTenant(t.app);
    const kind = `test.fair.${flood.orgId}`;
    const ago = (s: number) => new Date(Date.now() - s * 1000);
    // Six jobs of one organization, all older than the other organization's one job.
    for (let i = 0; i < 6; i++) await t.platform.db.tenantTx(flood.orgId, (sql) => enqueue(sql, { orgId: flood.orgId, kind, payload: { n: i }, runAt: ago(60 - i) }));
    await t.platform.db.tenantTx(other.orgId, (sql) => enqueue(sql, { orgId: other.orgId, kind, runAt: ago(10) }));
    const order: string[] = [];
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 1 });
    runner.register(kind, async (job) => { order.push(job.org_id === flood.orgId ? `flood${job.payload.n}` : 'other'); });
    expect(await runner.drain()).toBe(7);
    // One slot: the flooding organization's oldest job, then the other's (its turn), then the rest of the backlog in order.
    expect(order).toEqual(['flood0', 'other', 'flood1', 'flood2', 'flood3', 'flood4', 'flood5']);
  });

  it('one claim of several slots takes one job of every organization with due jobs before a second of any', async () => {
    const flood = await newTenant(t.app);
    const b = await newTenant(t.app);
    const c = await newTenant(t.app);
    const kind = `test.fair-batch.${flood.orgId}`;
    const ago = (s: number) => new Date(Date.now() - s * 1000);
    for (let i = 0; i < 10; i++) await t.platform.db.tenantTx(flood.orgId, (sql) => enqueue(sql, { orgId: flood.orgId, kind, runAt: ago(60 - i) }));
    await t.platform.db.tenantTx(b.orgId, (sql) => enqueue(sql, { orgId: b.orgId, kind, runAt: ago(20) }));
    await t.platform.db.tenantTx(c.orgId, (sql) => enqueue(sql, { orgId: c.orgId, kind, runAt: ago(10) }));
    const started: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 3 });
    runner.register(kind, async (job) => { started.push(job.org_id); await held; });
    const draining = runner.drain();
    await until(() => started.length >= 3);
    // The first claim (three slots): one job of each organization, not the three oldest (all the flooding one's).
    expect(new Set(started)).toEqual(new Set([flood.orgId, b.orgId, c.orgId]));
    expect(started).toHaveLength(3);
    release();
    expect(await draining).toBe(12);
  });

  it('an organization with fewer jobs running goes first, even when it was served more recently', async () => {
    const busy = await newTenant(t.app);
    const idle = await newTenant(t.app);
    const kind = `test.fair-running.${busy.orgId}`;
    const ago = (s: number) => new Date(Date.now() - s * 1000);
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const order: string[] = [];
    const handler = async (job: { org_id: string; payload: Record<string, unknown> }) => {
      order.push(`${job.org_id === busy.orgId ? 'busy' : 'idle'}${job.payload.n}`);
      if (job.payload.hold) await held;
    };
    const first = new JobRunner(t.platform.db, { pollMs: 50, batch: 1 });
    const second = new JobRunner(t.platform.db, { pollMs: 50, batch: 1 });
    first.register(kind, handler);
    second.register(kind, handler);
    // busy's first job keeps running on one node; then idle is served (more recently than busy) on another.
    await t.platform.db.tenantTx(busy.orgId, (sql) => enqueue(sql, { orgId: busy.orgId, kind, payload: { n: 1, hold: true }, runAt: ago(60) }));
    const holding = first.drain();
    await until(() => order.length === 1);
    await t.platform.db.tenantTx(idle.orgId, (sql) => enqueue(sql, { orgId: idle.orgId, kind, payload: { n: 1 }, runAt: ago(50) }));
    expect(await second.drain()).toBe(1);
    // Each has one more due job, busy's the older: idle's goes first, since busy has a job running.
    await t.platform.db.tenantTx(busy.orgId, (sql) => enqueue(sql, { orgId: busy.orgId, kind, payload: { n: 2 }, runAt: ago(40) }));
    await t.platform.db.tenantTx(idle.orgId, (sql) => enqueue(sql, { orgId: idle.orgId, kind, payload: { n: 2 }, runAt: ago(30) }));
    expect(await second.drain()).toBe(2);
    expect(order).toEqual(['busy1', 'idle1', 'idle2', 'busy2']);
    release();
    await holding;
  });

  it('deduplicates pending jobs with the same key', async () => {
    const a = await newTenant(t.app);
    for (let i = 0; i < 3; i++) await t.platform.db.tenantTx(a.orgId, (sql) => enqueue(sql, { orgId: a.orgId, kind: 'test.dedupe', dedupeKey: 'doc-1' }));
    const n = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE org_id = $1 AND kind = 'test.dedupe'`, [a.orgId]);
    expect(n!.n).toBe(1);
  });
});

describe('periodic tasks', () => {
  it('a tick that cannot connect to the database is logged and tried again at the next interval, not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => { unhandled.push(err); };
    process.on('unhandledRejection', onUnhandled);
    let connects = 0;
    let down = true;
    const db = {
      system: { connect: async () => { connects++; if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:1'); return t.platform.db.system.connect(); } },
    } as unknown as ConstructorParameters<typeof JobRunner>[0];
    const logged: string[] = [];
    const runner = new JobRunner(db, { pollMs: 60_000, batch: 1, log: (_o, m) => logged.push(m) });
    let ran = 0;
    try {
      runner.start();
      runner.every(`test-unreachable-${Date.now()}`, 20, async () => { ran++; });
      await until(() => connects >= 3);
      expect(ran).toBe(0);
      down = false;
      await until(() => ran >= 1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(logged.filter((m) => m === 'periodic task failed').length).toBeGreaterThanOrEqual(3);
      expect(unhandled).toEqual([]);
    } finally {
      await runner.stop();
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a periodic task first runs soon after start, not a whole interval later', async () => {
    const runner = new JobRunner(t.platform.db, { pollMs: 50, batch: 1, firstPeriodicRunMs: 100 });
    let runs = 0;
    runner.every(`test.first-run.${Date.now()}`, 3_600_000, async () => { runs++; });
    runner.start();
    try {
      await until(() => runs === 1, 5_000);
    } finally {
      await runner.stop();
    }
    expect(FIRST_PERIODIC_RUN_MS).toBe(300_000);
  });
});
