import pg from 'pg';
import { DbListener } from './listener.js';

/** The role every request runs as. Not a superuser, not the table owner: row-level security applies to it. */
export const APP_ROLE = 'platform_app';

/**
 * timestamptz text as Date#toISOString() gives it (RFC 3339 UTC, milliseconds, fractions truncated). PostgreSQL
 * writes `YYYY-MM-DD HH:MM:SS[.ffffff]+00` when the session time zone is UTC: that common form is rearranged as a
 * string (list pages parse hundreds per request; `new Date` was ~7% of a list route's CPU profile). Years 0001-0999
 * too: Date's parser reads "0001-01-01 00:00:00+00" as 2001. Any other form (another zone, BC, infinity) goes through
 * Date as before; the API accepts date-times of years 1-9999 only (core/http/validation.ts), so BC never comes back.
 */
export function timestamptzToIso(v: string): string {
  const n = v.length;
  if (n >= 22 && n <= 29 && n !== 23 && v.charCodeAt(10) === 32 && v.charCodeAt(n - 3) === 43 && v.charCodeAt(n - 2) === 48
    && v.charCodeAt(n - 1) === 48 && (n === 22 || v.charCodeAt(19) === 46) && v.charCodeAt(4) === 45) {
    const ms = n === 22 ? '000' : n === 24 ? `${v[20]}00` : n === 25 ? `${v.slice(20, 22)}0` : v.slice(20, 23);
    return `${v.slice(0, 10)}T${v.slice(11, 19)}.${ms}Z`;
  }
  return new Date(v).toISOString();
}

// RFC 3339 UTC strings for timestamps; bigint counts as numbers.
pg.types.setTypeParser(1184, timestamptzToIso);
pg.types.setTypeParser(1114, (v: string) => new Date(v + 'Z').toISOString());
pg.types.setTypeParser(20, (v: string) => Number(v));
pg.types.setTypeParser(1700, (v: string) => Number(v));

/** What repositories receive: a query function bound to one connection (and, where given, one transaction). */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  one<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T | undefined>;
  /** Rows affected by a write. */
  exec(text: string, params?: unknown[]): Promise<number>;
}

type TenantClient = pg.PoolClient & { orgId?: string };

/**
 * A pooled client and its release. pg-pool listens for a client's 'error' only while the client is idle in the pool:
 * a checked-out client whose server session ends (a PostgreSQL restart, `pg_terminate_backend`, a failover, the
 * embedded server killed) emits 'error' with no listener, which Node turns into an uncaught exception that ends the
 * process. While checked out, the error is kept instead (the statement in flight, or the next one, fails with it
 * anyway), and the client is released as broken, so the pool discards it.
 */
export async function checkout<C extends pg.PoolClient = pg.PoolClient>(pool: pg.Pool): Promise<{ client: C; release(err?: Error): void }> {
  const client = (await pool.connect()) as C;
  let lost: Error | undefined;
  const onError = (err: Error) => { lost ??= err; };
  client.on('error', onError);
  return {
    client,
    release(err?: Error) {
      client.off('error', onError);
      client.release(err ?? lost);
    },
  };
}

const statementNames = new Map<string, string>();
/** Every query is a named prepared statement: parsed and planned once per connection. */
function named(text: string, values?: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (!name) { name = `s${statementNames.size + 1}`; statementNames.set(text, name); }
  return { name, text, values: values as unknown[] };
}

function wrap(client: pg.PoolClient | pg.Pool): Sql {
  return {
    async query<T>(text: string, params?: unknown[]) { return (await client.query(named(text, params))).rows as T[]; },
    async one<T>(text: string, params?: unknown[]) { return (await client.query(named(text, params))).rows[0] as T | undefined; },
    async exec(text: string, params?: unknown[]) { return (await client.query(named(text, params))).rowCount ?? 0; },
  };
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /** statement_timeout of the request pool (ms; 0: none): a statement that runs longer is cancelled (SQLSTATE 57014). */
  statementTimeoutMs?: number;
  appName?: string;
  /** A login of APP_ROLE itself: requests then cannot leave the role at all (no RESET ROLE to the owner). */
  appUrl?: string | null;
  /** Where the change listener reports a lost connection (it reconnects by itself). */
  onListenerError?: (err: Error) => void;
}

/**
 * Two pools over one database: `system` connects as the schema owner (migrations, sign-in lookups, jobs);
 * `app` switches to the non-superuser APP_ROLE, where every tenant table's policy shows one organization only.
 */
/** How long opening a connection, or waiting for a free one, may take before the request fails. */
const CONNECT_TIMEOUT_MS = 10_000;
/** How long the health check waits for the database's answer. */
const PING_TIMEOUT_MS = 2_000;

export class Database {
  readonly system: pg.Pool;
  readonly app: pg.Pool;
  readonly sys: Sql;
  /** LISTEN/NOTIFY for in-process caches of database state (opens on first subscription). */
  readonly listener: DbListener;

  constructor(opts: DatabaseOptions) {
    // A database that stops answering (a hung server, a dead network path) must give errors, not requests that wait
    // forever: opening a connection, or waiting for a free one, gives up after this long.
    const base = { connectionString: opts.url, application_name: opts.appName ?? 'platform-api', connectionTimeoutMillis: CONNECT_TIMEOUT_MS };
    this.system = new pg.Pool({ ...base, max: Math.max(4, Math.ceil(opts.poolSize / 3)) });
    // The role is a startup parameter: a connection that cannot take it fails to open, instead of silently
    // running as the owner (which bypasses row-level security), and no extra round trip is spent on SET ROLE.
    // Request statements are named (prepared once per connection) and always organization-scoped index reads or
    // writes, so they keep one generic plan: with the default plan_cache_mode PostgreSQL re-planned most of them on
    // every execution (a custom plan per call, ~0.2 ms of planning for a 0.2 ms page of tasks). docs/decisions.md.
    // A statement past statementTimeoutMs is cancelled: one request cannot hold a connection and a core for longer,
    // whatever it asks for (the error handler answers 503 STATEMENT_TIMEOUT).
    const requestOptions = `-c plan_cache_mode=force_generic_plan${opts.statementTimeoutMs ? ` -c statement_timeout=${opts.statementTimeoutMs}` : ''}`;
    this.app = opts.appUrl
      ? new pg.Pool({ connectionString: opts.appUrl, application_name: base.application_name, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, max: opts.poolSize, options: requestOptions })
      : new pg.Pool({ ...base, max: opts.poolSize, options: `-c role=${APP_ROLE} ${requestOptions}` });
    const swallow = () => {}; // idle-client errors (server restart) are reported on the next use
    this.system.on('error', swallow);
    this.app.on('error', swallow);
    this.sys = wrap(this.system);
    this.listener = new DbListener(opts.url, opts.onListenerError);
  }

  /** Runs fn on one app-role connection whose `app.org_id` is orgId; no transaction (one statement is atomic). */
  async tenant<T>(orgId: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
    const { client, release } = await checkout<TenantClient>(this.app);
    let broken: Error | undefined;
    try {
      await this.bind(client, orgId);
      return await fn(wrap(client));
    } catch (err) {
      if (!(err instanceof pg.DatabaseError)) broken = err as Error;
      throw err;
    } finally {
      release(broken);
    }
  }

  /** Like tenant(), inside BEGIN ... COMMIT; any throw rolls back. */
  async tenantTx<T>(orgId: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
    const { client, release } = await checkout<TenantClient>(this.app);
    let broken: Error | undefined;
    try {
      await this.bind(client, orgId);
      await client.query('BEGIN');
      try {
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e) => { broken = e; });
        throw err;
      }
    } finally {
      release(broken);
    }
  }

  /** A transaction as the owner role (no tenant filter): registration, key lookups, cross-tenant jobs. */
  async systemTx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    const { client, release } = await checkout(this.system);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      try {
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e) => { broken = e; });
        throw err;
      }
    } finally {
      release(broken);
    }
  }

  /** The session-level setting survives on the pooled connection, so switching tenants costs a round trip only when it changes. */
  private async bind(client: TenantClient, orgId: string): Promise<void> {
    if (client.orgId === orgId) return;
    client.orgId = undefined;
    await client.query(named(`SELECT set_config('app.org_id', $1, false)`, [orgId]));
    client.orgId = orgId;
  }

  /**
   * Whether the database answers `SELECT 1` within `timeoutMs`: a server that accepts connections but never answers
   * (stopped, overloaded) is unreachable for a health check, which must answer quickly either way.
   */
  async ping(timeoutMs = PING_TIMEOUT_MS): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
    const answered = this.system.query('SELECT 1').then(() => true, () => false);
    try { return await Promise.race([answered, late]); } finally { clearTimeout(timer); }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.listener.close(), this.app.end(), this.system.end()]);
  }
}

export const isUniqueViolation = (err: unknown, constraint?: string): boolean =>
  err instanceof pg.DatabaseError && err.code === '23505' && (!constraint || err.constraint === constraint);
export const isForeignKeyViolation = (err: unknown): boolean =>
  err instanceof pg.DatabaseError && err.code === '23503';
