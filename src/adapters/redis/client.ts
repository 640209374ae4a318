import { createClient } from '@redis/client';

/** The commands the platform sends (RESP2 replies), behind one small interface so the stores stay testable. */
export interface RedisConnection {
  /** INCR the key and set its expiry (PEXPIREAT) in one transaction; the count after the increment. */
  incrExpireAt(key: string, atMs: number): Promise<number>;
  /** DECR the key and set its expiry in one transaction (a key gone meanwhile comes back negative, and expires). */
  decrExpireAt(key: string, atMs: number): Promise<void>;
  /** SET with a time to live. */
  setPx(key: string, value: string, ttlMs: number): Promise<void>;
  /** GETDEL (Redis 6.2+): the value, removed in the same step; null when there was none. */
  getDel(key: string): Promise<string | null>;
  /** PUBLISH a message (bytes) on a channel. */
  publish(channel: string, message: Buffer): Promise<void>;
  close(): Promise<void>;
}

/**
 * A node-redis client for REDIS_URL (RESP2): reconnects by itself (backoff up to 2 s) and, while disconnected, fails
 * commands at once instead of queueing them.
 */
export function redisClient(url: string, onError: (err: Error) => void) {
  const c = createClient({
    url, RESP: 2, disableOfflineQueue: true,
    socket: { connectTimeout: 5_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000) },
  });
  // Without a listener an error event would end the process; the client reconnects by itself.
  c.on('error', onError);
  return c;
}

/** How long the start waits for Redis. */
export const REDIS_START_TIMEOUT_MS = 10_000;

/**
 * The first connection of a client, at start: the client retries a refused connection for ever, so a Redis that is
 * not there held the start (and a SIGTERM, which waits for the start) for ever; past REDIS_START_TIMEOUT_MS the start
 * fails naming REDIS_URL's host (never its password), like a DATABASE_URL that does not answer.
 */
export async function firstConnect(client: ReturnType<typeof redisClient>, url: string, timeoutMs = REDIS_START_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const connecting = client.connect();
  connecting.catch(() => {}); // a failure after the timeout has nobody waiting for it
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const u = new URL(url);
      reject(new Error(`REDIS_URL: no Redis answered at ${u.hostname}:${u.port || 6379} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
  });
  try {
    await Promise.race([connecting, timeout]);
  } catch (err) {
    client.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** How long a command may take before it counts as failed: a Redis that is down must not hold requests. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * A connection to REDIS_URL (`redis://` or `rediss://`, user and password in the URL) with the node-redis client:
 * reconnects on its own (backoff up to 2 s); while it is disconnected, commands fail at once instead of queueing, so
 * the callers' fallbacks (a rate limit let through, a ticket refused with 503) apply without waiting. A command that
 * gets no answer within a second fails, and the connection is replaced: replies on a connection come in order, so
 * one whose reply is lost would hand every later command an earlier one's reply.
 */
export async function connectRedis(url: string, onError: (err: Error) => void): Promise<RedisConnection> {
  const open = () => redisClient(url, onError);
  let client = open();
  await firstConnect(client, url);
  let closed = false;
  const replace = () => {
    const old = client;
    client = open();
    old.destroy();
    if (!closed) client.connect().catch(onError);
  };
  const timed = <T>(run: () => Promise<T>, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => { replace(); reject(new Error(`Redis ${what} timed out`)); }, COMMAND_TIMEOUT_MS);
    });
    const p = run();
    p.catch(() => {}); // answered after the timeout (or failed): nobody waits for it any more
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  };
  return {
    async incrExpireAt(key, atMs) {
      const [count] = await timed(() => client.multi().incr(key).pExpireAt(key, atMs).exec(), 'INCR');
      return Number(count);
    },
    async decrExpireAt(key, atMs) {
      await timed(() => client.multi().decr(key).pExpireAt(key, atMs).exec(), 'DECR');
    },
    async setPx(key, value, ttlMs) {
      await timed(() => client.set(key, value, { PX: ttlMs }), 'SET');
    },
    async getDel(key) {
      const v = await timed(() => client.getDel(key), 'GETDEL');
      return v === null ? null : String(v);
    },
    async publish(channel, message) {
      await timed(() => client.publish(channel, message), 'PUBLISH');
    },
    async close() {
      closed = true;
      if (client.isOpen) await client.close().catch(() => client.destroy());
      else client.destroy();
    },
  };
}
