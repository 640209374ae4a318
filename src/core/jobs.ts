import { createHash } from 'node:crypto';
import { checkout, type Database, type Sql } from './db/database.js';
import { uuidv7 } from './ids.js';

export interface Job { org_id: string; id: string; kind: string; payload: Record<string, unknown>; attempts: number; max_attempts: number }
export type JobHandler = (job: Job) => Promise<void>;

export interface EnqueueInput {
  orgId: string;
  kind: string;
  payload?: Record<string, unknown>;
  runAt?: Date;
  /** While a pending job with this key exists, enqueueing another is a no-op. */
  dedupeKey?: string;
  maxAttempts?: number;
}

/** Enqueues a job with the caller's transaction, so the job exists exactly when the change it follows commits. */
export async function enqueue(sql: Sql, j: EnqueueInput): Promise<void> {
  await sql.exec(`INSERT INTO jobs (org_id, id, kind, payload, run_at, dedupe_key, max_attempts)
    VALUES ($1, $2, $3, $4, COALESCE($5, now()), $6, $7) ON CONFLICT (org_id, kind, dedupe_key) WHERE dedupe_key IS NOT NULL AND status = 'pending' DO NOTHING`,
    [j.orgId, uuidv7(), j.kind, j.payload ?? {}, j.runAt?.toISOString() ?? null, j.dedupeKey ?? null, j.maxAttempts ?? 8]);
}

/**
 * A running job's claim is renewed every HEARTBEAT_MS while its handler runs; one not renewed for STALE_AFTER_MS
 * belonged to a node that died (crash, kill -9) and is claimed again. So a crash delays a job by about a minute,
 * not by the longest time a job may take.
 */
const HEARTBEAT_MS = 15_000;
const STALE_AFTER_MS = 60_000;
const backoffSeconds = (attempts: number) => Math.min(3600, 2 ** attempts);
/** How long a stop waits for running jobs (the shutdown's own budget is SHUTDOWN_TIMEOUT_MS for everything). */
const STOP_GRACE_MS = 5_000;
/** After a slot frees, how long to wait for others before claiming: one claim statement for several finished jobs. */
const CLAIM_PAUSE_MS = 5;
/** Most jobs of one delivery kind (e-mail; Slack and in-app) running at once on a node of 20 slots: 12 at most in all. */
export const DELIVERY_CONCURRENCY = 6;

/** A periodic task first runs this long after the runner starts, or after its interval when that is shorter. */
export const FIRST_PERIODIC_RUN_MS = 5 * 60_000;

/**
 * Runs queued jobs on this node. Any number of nodes may run one: claims use SKIP LOCKED, periodic tasks
 * take an advisory lock so one node runs each tick, and jobs left `running` by a crashed node are reclaimed.
 */
export class JobRunner {
  private handlers = new Map<string, JobHandler>();
  private periodic: Array<{ name: string; everyMs: number; fn: () => Promise<void>; timer?: NodeJS.Timeout }> = [];
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private stopped = true;
  private inFlight: Promise<void> = Promise.resolve();
  /** Wakes a round that waits for a free slot, to claim what was enqueued meanwhile (poke, poll). */
  private wake: (() => void) | null = null;
  /** Kinds with a concurrency of their own (most running at once on this node), and how many run now. */
  private limits = new Map<string, number>();
  private busy = new Map<string, number>();
  private stopping: Promise<void> | null = null;

  constructor(private readonly db: Database, private readonly opts: {
    pollMs: number; batch: number; log?: (o: unknown, m: string) => void; heartbeatMs?: number; staleAfterMs?: number;
    /** First run of a periodic task after start: at most this long (default FIRST_PERIODIC_RUN_MS). */
    firstPeriodicRunMs?: number;
  }) {}

  /**
   * `concurrency`: at most that many jobs of this kind at once on this node. For kinds that wait on outside peers
   * (deliveries): however many of them hang, the other kinds (indexing, every tenant's) keep the remaining slots.
   */
  register(kind: string, handler: JobHandler, opts: { concurrency?: number } = {}): void {
    this.handlers.set(kind, handler);
    if (opts.concurrency) this.limits.set(kind, opts.concurrency);
  }

  /** fn runs every `everyMs` on exactly one node at a time (pg advisory lock named by `name`). */
  every(name: string, everyMs: number, fn: () => Promise<void>): void {
    const task: { name: string; everyMs: number; fn: () => Promise<void>; timer?: NodeJS.Timeout } = { name, everyMs, fn };
    this.periodic.push(task);
    if (!this.stopped) this.schedulePeriodic(task);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopping = null;
    this.timer = setInterval(() => this.poke(), this.opts.pollMs);
    this.timer.unref();
    for (const t of this.periodic) this.schedulePeriodic(t);
    this.poke();
  }

  /** Ask for a claim round now (after enqueueing on this node). */
  poke(): void {
    if (this.running) { this.wake?.(); return; }
    if (this.stopped || this.handlers.size === 0) return;
    this.running = true;
    this.inFlight = this.drain().then(() => undefined, (err) => this.opts.log?.({ err }, "job runner round failed")).finally(() => { this.running = false; });
  }

  /**
   * Stops claiming and waits up to `graceMs` for the jobs running. One still running after that (a peer that does not
   * answer) is left to its timeout; its claim lapses and it runs again later (at least once), here or on another node.
   */
  stop(graceMs = STOP_GRACE_MS): Promise<void> {
    // Called by the app's close hook and by the platform's close: one grace in all, not one per caller.
    this.stopping ??= (async () => {
      this.stopped = true;
      if (this.timer) clearInterval(this.timer);
      for (const t of this.periodic) if (t.timer) clearInterval(t.timer);
      this.wake?.();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); });
      try { await Promise.race([this.inFlight, grace]); } finally { clearTimeout(timer); }
    })();
    return this.stopping;
  }

  /**
   * Claims and runs due jobs until none are left, up to `batch` at a time. A slot is refilled as soon as its job ends:
   * one slow job (a mail server that does not answer) holds its own slot, not the whole round, so the other tenants'
   * jobs keep running beside it.
   */
  async drain(): Promise<number> {
    let total = 0;
    const draining = this.stopped ? 'once' : 'until-stopped';
    await this.resetStale();
    const running = new Set<Promise<void>>();
    try {
      for (;;) {
        if (draining === 'until-stopped' && this.stopped) return total; // never claim what we will not run
        const free = this.opts.batch - running.size;
        const jobs = free > 0 ? await this.claimUpTo(free) : [];
        for (const job of jobs) {
          this.busy.set(job.kind, (this.busy.get(job.kind) ?? 0) + 1);
          const run: Promise<void> = this.runOne(job).finally(() => {
            running.delete(run);
            this.busy.set(job.kind, (this.busy.get(job.kind) ?? 1) - 1);
          });
          running.add(run);
        }
        total += jobs.length;
        if (running.size === 0) return total; // nothing due and nothing running
        if (jobs.length < free || free === 0) {
          await this.slotOrWake(running); // a free slot, or new work to claim
          await new Promise((r) => setTimeout(r, CLAIM_PAUSE_MS)); // let other slots free up: one claim for several
        }
      }
    } finally {
      await Promise.allSettled([...running]);
    }
  }

  /**
   * Jobs whose node died (no heartbeat for STALE_AFTER_MS) go back to `pending`, at most one per dedupe key: one
   * whose key already has a pending job (enqueued while it ran), or a second of the same key, is `superseded`, since
   * the one kept does the same work (jobs_dedupe allows one pending job per key; breaking it made this statement fail
   * at the start of every round, and no job ran again).
   */
  private async resetStale(): Promise<void> {
    await this.db.sys.exec(`WITH stale AS (
        SELECT org_id, id, kind, dedupe_key FROM jobs WHERE status = 'running' AND locked_at < now() - make_interval(secs => $1)
        FOR UPDATE SKIP LOCKED
      ), kept AS (
        SELECT DISTINCT ON (s.org_id, s.kind, COALESCE(s.dedupe_key, s.id::text)) s.org_id, s.id FROM stale s
        WHERE s.dedupe_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs p WHERE p.org_id = s.org_id AND p.kind = s.kind
          AND p.dedupe_key = s.dedupe_key AND p.status = 'pending')
        ORDER BY s.org_id, s.kind, COALESCE(s.dedupe_key, s.id::text), s.id DESC
      )
      UPDATE jobs j SET locked_at = NULL, updated_at = now(),
        status = CASE WHEN EXISTS (SELECT 1 FROM kept k WHERE k.org_id = j.org_id AND k.id = j.id) THEN 'pending' ELSE 'superseded' END
      FROM stale s WHERE j.org_id = s.org_id AND j.id = s.id`, [(this.opts.staleAfterMs ?? STALE_AFTER_MS) / 1000]);
  }

  private slotOrWake(running: Set<Promise<void>>): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      void Promise.race(running).then(resolve);
    }).finally(() => { this.wake = null; });
  }

  /** Due jobs for `free` slots: kinds with a concurrency up to their remaining share first, then any other kind. */
  private async claimUpTo(free: number): Promise<Job[]> {
    const out: Job[] = [];
    for (const [kind, cap] of this.limits) {
      const n = Math.min(free - out.length, cap - (this.busy.get(kind) ?? 0));
      if (n > 0) out.push(...await this.claim([kind], n));
    }
    const open = [...this.handlers.keys()].filter((k) => !this.limits.has(k));
    if (free > out.length && open.length) out.push(...await this.claim(open, free - out.length));
    return out;
  }

  /**
   * Claims up to `limit` due jobs of `kinds`, fairly between organizations: each organization with due jobs gets one
   * job per turn (its oldest), and turns go first to the organizations with the fewest jobs of these kinds running,
   * then to the one a claim served longest ago (job_turns; never served first), then the oldest job. So one
   * organization's backlog, however large, takes one slot per turn, and another organization's job waits at most one
   * turn of every busy organization, not behind the whole backlog (oldest first across all organizations did that).
   * Within an organization jobs still run oldest first. The organizations with due jobs are found by walking the
   * jobs_due_by_org index (one probe per organization, not one row per job); at most `limit` of them are served per
   * claim, and at most `limit` jobs of each are locked (SKIP LOCKED, as before: concurrent claims never take the same
   * job).
   */
  private claim(kinds: string[], limit: number): Promise<Job[]> {
    return this.db.sys.query<Job>(`WITH RECURSIVE due_orgs AS (
        (SELECT org_id FROM jobs WHERE status = 'pending' AND run_at <= now() AND kind = ANY($1) ORDER BY org_id LIMIT 1)
        UNION ALL
        SELECT (SELECT j.org_id FROM jobs j WHERE j.status = 'pending' AND j.run_at <= now() AND j.kind = ANY($1) AND j.org_id > d.org_id
                ORDER BY j.org_id LIMIT 1)
        FROM due_orgs d WHERE d.org_id IS NOT NULL
      ), running AS (
        SELECT org_id, count(*) AS n FROM jobs WHERE status = 'running' AND kind = ANY($1) GROUP BY org_id
      ), turns AS (
        SELECT d.org_id, row_number() OVER (ORDER BY COALESCE(r.n, 0), t.claimed_at NULLS FIRST, d.org_id) AS rank
        FROM due_orgs d LEFT JOIN running r ON r.org_id = d.org_id LEFT JOIN job_turns t ON t.org_id = d.org_id
        WHERE d.org_id IS NOT NULL
        ORDER BY rank LIMIT $2
      ), candidates AS (
        SELECT c.org_id, c.id, o.rank, row_number() OVER (PARTITION BY c.org_id ORDER BY c.run_at, c.id) AS turn
        FROM turns o CROSS JOIN LATERAL (
          SELECT j.org_id, j.id, j.run_at FROM jobs j WHERE j.org_id = o.org_id AND j.status = 'pending' AND j.run_at <= now() AND j.kind = ANY($1)
          ORDER BY j.run_at, j.id LIMIT $2 FOR UPDATE SKIP LOCKED) c
      ), picked AS (
        SELECT org_id, id FROM candidates ORDER BY turn, rank LIMIT $2
      ), claimed AS (
        UPDATE jobs j SET status = 'running', locked_at = now(), attempts = attempts + 1, updated_at = now()
        FROM picked p WHERE j.org_id = p.org_id AND j.id = p.id
        RETURNING j.org_id, j.id, j.kind, j.payload, j.attempts, j.max_attempts
      ), served AS (
        -- In organization order, so two nodes claiming at once update these rows in the same order (no deadlock).
        INSERT INTO job_turns (org_id, claimed_at) SELECT DISTINCT org_id, now() FROM claimed ORDER BY org_id
        ON CONFLICT (org_id) DO UPDATE SET claimed_at = excluded.claimed_at
      )
      SELECT org_id, id, kind, payload, attempts, max_attempts FROM claimed`, [kinds, limit]);
  }

  private async runOne(job: Job): Promise<void> {
    const heartbeat = setInterval(() => {
      void this.db.sys.exec(`UPDATE jobs SET locked_at = now() WHERE org_id = $1 AND id = $2 AND status = 'running'`, [job.org_id, job.id]).catch(() => {});
    }, this.opts.heartbeatMs ?? HEARTBEAT_MS);
    heartbeat.unref();
    try {
      await this.handlers.get(job.kind)!(job);
      await this.db.sys.exec(`UPDATE jobs SET status = 'done', locked_at = NULL, last_error = NULL, updated_at = now() WHERE org_id = $1 AND id = $2`, [job.org_id, job.id]);
    } catch (err) {
      const message = String((err as Error)?.message ?? err).slice(0, 2000);
      const final = job.attempts >= job.max_attempts;
      // The organization is named so an operator can tell whose deliveries or indexing keep failing.
      const which = { orgId: job.org_id, jobId: job.id, kind: job.kind };
      this.opts.log?.({ err, ...which, attempts: job.attempts }, final ? 'job failed for good' : 'job failed; will retry');
      // Back to pending for a retry, unless a job of the same dedupe key is pending already (enqueued while this one
      // ran): that one does the same work, so this one is superseded (a second pending job of the key is refused by
      // jobs_dedupe). Should this update fail anyway, the job is left running and resetStale settles it.
      await this.db.sys.exec(`UPDATE jobs j SET locked_at = NULL, last_error = $4, run_at = now() + make_interval(secs => $5), updated_at = now(),
          status = CASE WHEN $3 = 'pending' AND j.dedupe_key IS NOT NULL AND EXISTS (SELECT 1 FROM jobs p WHERE p.org_id = j.org_id
            AND p.kind = j.kind AND p.dedupe_key = j.dedupe_key AND p.status = 'pending') THEN 'superseded' ELSE $3 END
        WHERE org_id = $1 AND id = $2`, [job.org_id, job.id, final ? 'failed' : 'pending', message, backoffSeconds(job.attempts)])
        .catch((e) => this.opts.log?.({ err: e, ...which }, 'job state not saved; it is retried once stale'));
    } finally {
      clearInterval(heartbeat);
    }
  }

  private schedulePeriodic(task: { name: string; everyMs: number; fn: () => Promise<void>; timer?: NodeJS.Timeout }): void {
    const lockId = createHash('sha1').update(task.name).digest().readInt32BE(0);
    const tick = async () => {
      // Connecting is inside the try: with the database away (a restart, a network cut) the tick fails, is logged and
      // runs again at the next interval; a rejection here would otherwise be unhandled and end the process.
      let held: Awaited<ReturnType<typeof checkout>> | undefined;
      try {
        held = await checkout(this.db.system);
        const got = (await held.client.query('SELECT pg_try_advisory_lock($1) AS ok', [lockId])).rows[0].ok;
        if (!got) return;
        try { await task.fn(); } finally { await held.client.query('SELECT pg_advisory_unlock($1)', [lockId]); }
      } catch (err) {
        this.opts.log?.({ err, task: task.name }, 'periodic task failed');
      } finally { held?.release(); }
    };
    // The first run comes sooner than a whole interval after start: a node restarted more often than an hourly task's
    // interval (deploys) would otherwise never run it, and the rows its retention purge deletes would pile up.
    const first = Math.min(task.everyMs, this.opts.firstPeriodicRunMs ?? FIRST_PERIODIC_RUN_MS);
    task.timer = setTimeout(() => {
      if (this.stopped) return;
      void tick();
      task.timer = setInterval(() => { if (!this.stopped) void tick(); }, task.everyMs);
      task.timer.unref();
    }, first);
    task.timer.unref();
  }
}
