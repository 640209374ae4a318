import pg from 'pg';

/** What a cache of database state registers to hear about changes made anywhere (this process, another instance, psql). */
export interface ChannelSubscriber {
  /** A NOTIFY on the channel, with its payload. */
  notify(payload: string): void;
  /** Notifications may have been missed (the connection dropped or was just re-established): forget everything. */
  reset(): void;
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 30_000;

/**
 * One dedicated connection per process that LISTENs on the channels subscribers name, so in-process caches learn of
 * changes committed by any process within milliseconds. A cache may trust (and fill) itself only while
 * `isLive(channel)`: while the connection is down, or before its LISTEN is acknowledged, a change would go unnoticed.
 * The connection opens on the first subscription and reconnects by itself with a growing delay.
 */
export class DbListener {
  private client: pg.Client | null = null;
  private readonly subscribers = new Map<string, Set<ChannelSubscriber>>();
  private readonly listening = new Set<string>();
  private connecting = false;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private listenQueue: Promise<void> = Promise.resolve();
  /** The connection attempt under way (ends with the client ended when close() came meanwhile). */
  private opening: Promise<void> | null = null;

  constructor(private readonly url: string, private readonly onError: (err: Error) => void = () => {}) {}

  /** The listening connection's server process id (diagnostics, tests), null while down. */
  get backendPid(): number | null {
    return (this.client as (pg.Client & { processID?: number }) | null)?.processID ?? null;
  }

  isLive(channel: string): boolean {
    return this.client !== null && this.listening.has(channel);
  }

  subscribe(channel: string, sub: ChannelSubscriber): () => void {
    let subs = this.subscribers.get(channel);
    if (!subs) {
      subs = new Set();
      this.subscribers.set(channel, subs);
      if (this.client) void this.listen(this.client, channel);
    }
    subs.add(sub);
    if (!this.client) this.connect();
    return () => { subs.delete(sub); };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.drop();
    // A connection still opening is awaited too: left to finish after close(), it was still logging in when the caller
    // stopped PostgreSQL, which then logged its end as a FATAL (terminating connection, canceling authentication).
    await Promise.all([client?.end().catch(() => {}), this.opening]);
  }

  private connect(): void {
    if (this.connecting || this.closed) return;
    this.connecting = true;
    // Bounded like the pools' connections: close() waits for an attempt under way.
    const client = new pg.Client({ connectionString: this.url, application_name: 'platform-api listener', connectionTimeoutMillis: 10_000 });
    client.on('notification', (m) => {
      for (const sub of this.subscribers.get(m.channel) ?? []) sub.notify(m.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    const opening = this.opening = client.connect().then(async () => {
      this.connecting = false;
      if (this.closed) { await client.end().catch(() => {}); return; }
      this.client = client;
      this.retryMs = RETRY_MIN_MS;
      for (const channel of this.subscribers.keys()) await this.listen(client, channel);
    }, (err: Error) => {
      this.connecting = false;
      this.lost(client, err);
    }).finally(() => { if (this.opening === opening) this.opening = null; });
  }

  /**
   * LISTENs go one at a time: a pg client runs one query at a time, and handing it a second while the first runs is
   * deprecated (pg 9 drops it). Subscriptions made while the connection opens would otherwise overlap.
   */
  private listen(client: pg.Client, channel: string): Promise<void> {
    const run = this.listenQueue.then(() => this.listenNow(client, channel));
    this.listenQueue = run.catch(() => {});
    return run;
  }

  private async listenNow(client: pg.Client, channel: string): Promise<void> {
    if (this.client !== client || this.listening.has(channel)) return;
    try {
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (err) {
      this.lost(client, err as Error);
      return;
    }
    if (this.client !== client) return;
    this.listening.add(channel);
    // Anything committed before the LISTEN took effect was not heard: caches start over from here.
    for (const sub of this.subscribers.get(channel) ?? []) sub.reset();
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== null && this.client !== client) return; // an old connection's late event
    if (err && !this.closed) this.onError(err);
    this.drop();
    client.end().catch(() => {});
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => { this.retryTimer = null; this.connect(); }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private drop(): void {
    const wasLive = this.listening.size > 0;
    this.client = null;
    this.listening.clear();
    if (wasLive) for (const subs of this.subscribers.values()) for (const sub of subs) sub.reset();
  }
}
