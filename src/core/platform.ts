import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from './config.js';
import type { Platform } from './context.js';
import pg from 'pg';
import { APP_ROLE, Database } from './db/database.js';
import { assertAppRole } from './db/app-role.js';
import { startEmbeddedPostgres, type EmbeddedPg } from './db/embedded.js';
import { migrate } from './db/migrate.js';
import { SecretBox } from './crypto.js';
import { TokenSigner } from './auth/jwt.js';
import { CredentialResolver } from './auth/credentials.js';
import { MemoryRateLimitStore, type RateLimitStore } from './rate-limit.js';
import { connectRedis, type RedisConnection } from '../adapters/redis/client.js';
import { RedisRateLimitStore } from '../adapters/redis/rate-limit-store.js';
import { connectRedisFanout } from '../adapters/redis/fanout.js';
import { LocalFanout, type Fanout } from './fanout.js';
import { EventBus } from './events.js';
import { JobRunner } from './jobs.js';
import { purgeFinishedJobs } from './jobs-retention.js';
import { RETENTION_EVERY_MS } from './retention.js';

export interface RunningPlatform {
  platform: Platform;
  /**
   * Stops jobs, closes the pools and stops an embedded PostgreSQL. With `force` (a shutdown whose drain timed out)
   * nothing is awaited but PostgreSQL's own fast shutdown, which ends the sessions of requests still running.
   */
  close(opts?: { force?: boolean }): Promise<void>;
}

/** ENCRYPTION_KEY (32 bytes, hex or base64) or, on a single node, a key file created under DATA_DIR. */
function encryptionKey(config: Config): Buffer {
  if (config.encryptionKey) {
    const k = /^[0-9a-f]{64}$/i.test(config.encryptionKey) ? Buffer.from(config.encryptionKey, 'hex') : Buffer.from(config.encryptionKey, 'base64');
    if (k.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)');
    return k;
  }
  const file = path.join(config.dataDir, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/**
 * On the embedded server the request pool logs in as the application role itself (password kept in DATA_DIR),
 * so a request's connection never holds the owner's rights, not even after a RESET ROLE.
 */
async function enableAppLogin(ownerUrl: string, dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'pg-app-password');
  if (!existsSync(file)) writeFileSync(file, randomBytes(24).toString('hex'), { mode: 0o600 });
  const password = readFileSync(file, 'utf8').trim();
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    await client.query(`ALTER ROLE ${APP_ROLE} WITH LOGIN PASSWORD ${client.escapeLiteral(password)}`);
  } finally { await client.end(); }
  const u = new URL(ownerUrl);
  u.username = APP_ROLE;
  u.password = password;
  return u.toString();
}

/** Starts the database (embedded unless DATABASE_URL), applies migrations and builds the shared runtime. */
/**
 * Lines of the embedded PostgreSQL: its warnings and errors, and what the start did to recover from a crash (ours,
 * prefixed "embedded PostgreSQL:", e.g. a server left running stopped) at warn; its readiness at info; its routine
 * output not at all.
 */
export function logEmbedded(log: Platform['log'], m: string): void {
  if (/ERROR|FATAL|PANIC|WARNING/.test(m) || m.startsWith('embedded PostgreSQL:')) log.warn({ component: 'postgres' }, m);
  else if (m.startsWith('embedded PostgreSQL ready')) log.info({ component: 'postgres' }, m);
}

/**
 * `embeddedOwnProcessGroup`: the embedded PostgreSQL gets a process group of its own (a terminal's Ctrl-C then reaches
 * only this process), for a caller that handles SIGINT and SIGTERM by stopping the platform: the server. Others (the
 * CLI, tests) keep it in their group, so a Ctrl-C that ends them ends it too.
 */
export async function startPlatform(config: Config, log: Platform['log'], opts: { embeddedOwnProcessGroup?: boolean } = {}): Promise<RunningPlatform> {
  let embedded: EmbeddedPg | null = null;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort, ownProcessGroup: opts.embeddedOwnProcessGroup,
      log: (m) => logEmbedded(log, m),
      onUnexpectedExit: (m) => log.error({ component: 'postgres' }, m) });
    url = embedded.url;
  }
  let opened: Database | undefined;
  let openedRedis: RedisConnection | null = null;
  try {
    await migrate(url, (m) => log.info({}, m)).catch((err: Error & { code?: string }) => {
      // A server that cannot be reached or refuses the login: say which setting points there (never its password).
      if (!config.databaseUrl || /^Migration /.test(err.message)) throw err;
      const u = new URL(config.databaseUrl);
      throw new Error(`DATABASE_URL: could not use the database ${u.pathname.slice(1) || '(default)'} at ${u.hostname}:${u.port || 5432} as ${decodeURIComponent(u.username) || '(default user)'}: ${err.message}`);
    });
    await assertAppRole(url);
    const appUrl = config.databaseAppUrl ?? (embedded ? await enableAppLogin(url, config.dataDir) : null);
    const db = opened = new Database({ url, poolSize: config.dbPoolSize, statementTimeoutMs: config.dbStatementTimeoutMs, appUrl, onListenerError: (err) => log.warn({ err }, 'database change listener lost its connection; reconnecting') });
    const box = new SecretBox(encryptionKey(config));
    const signer = await TokenSigner.load(db, box);
    const redis = openedRedis = config.redisUrl
      ? await connectRedis(config.redisUrl, (err) => log.warn({ err: err.message, component: 'redis' }, 'Redis connection error; reconnecting'))
      : null;
    const rateLimitStore: RateLimitStore = redis ? new RedisRateLimitStore(redis) : new MemoryRateLimitStore();
    const fanout: Fanout = redis
      ? await connectRedisFanout(config.redisUrl!, (err, what) => log.warn({ err: err.message, component: 'redis' }, what))
      : new LocalFanout();
    const platform: Platform = {
      config, db, box, signer, rateLimitStore, redis, fanout, log,
      credentials: new CredentialResolver(db, signer, config.credentialCacheTtlMs),
      events: new EventBus(),
      lifecycle: { draining: false },
      jobs: new JobRunner(db, { pollMs: config.jobPollMs, batch: 20, log: (o, m) => log.warn(o, m) }),
    };
    platform.jobs.every('core.jobs-retention', RETENTION_EVERY_MS, async () => { await purgeFinishedJobs(db.sys); });
    return {
      platform,
      async close(opts = {}) {
        if (opts.force) {
          void fanout.close().catch(() => {});
          void Promise.resolve(rateLimitStore.close()).catch(() => {});
          void Promise.allSettled([platform.jobs.stop(), db.close()]);
          if (embedded) await embedded.stop();
          return;
        }
        await platform.events.settled(); // their writes (notifications, deliveries, jobs) land before the pools close
        await platform.jobs.stop();
        await platform.credentials.settled();
        await fanout.close().catch(() => {});
        await Promise.resolve(rateLimitStore.close()).catch(() => {});
        await db.close();
        if (embedded) await embedded.stop();
      },
    };
  } catch (err) {
    await opened?.close().catch(() => {});
    await openedRedis?.close().catch(() => {});
    if (embedded) await embedded.stop();
    throw err;
  }
}
