import net from 'node:net';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Database, type Sql } from './database.js';

/** A "database" that accepts connections and never answers (a hung server): the health check must not wait for it. */
let silent: net.Server;
const sockets = new Set<net.Socket>();
beforeAll(async () => {
  silent = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => silent.close(() => r()));
});

describe('Database.ping', () => {
  it('answers false within its timeout when the server never answers', async () => {
    const { port } = silent.address() as net.AddressInfo;
    const db = new Database({ url: `postgres://x:y@127.0.0.1:${port}/db`, poolSize: 2 });
    const started = Date.now();
    expect(await db.ping(150)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const s of sockets) s.destroy(); // lets the pending connection attempt fail, so the pools can end
    await db.close();
  });
});

describe('a connection whose server session ends while it is checked out', () => {
  it('does not end the process: the work in progress fails, the pool drops that connection, the next request works', async () => {
    const url = inject('databaseUrl');
    const db = new Database({ url, poolSize: 1 });
    const killer = new pg.Client({ connectionString: url });
    await killer.connect();
    const uncaught: unknown[] = [];
    const record = (err: unknown) => { uncaught.push(err); };
    process.on('uncaughtException', record);
    try {
      const org = randomUUID();
      // Between two statements (no query in flight): what a PostgreSQL restart or a failover does to a busy server.
      const endSessionMidway = async (sql: Sql) => {
        const { pid } = (await sql.one<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!;
        await killer.query('SELECT pg_terminate_backend($1)', [pid]);
        await new Promise((r) => setTimeout(r, 300)); // the session's end reaches the client while it is idle in our hands
        return sql.one('SELECT 1 AS one');
      };
      await expect(db.tenant(org, endSessionMidway)).rejects.toThrow();
      await expect(db.tenantTx(org, endSessionMidway)).rejects.toThrow();
      await expect(db.systemTx(endSessionMidway)).rejects.toThrow();
      expect(uncaught).toEqual([]);
      // One connection in each pool: had the dead one gone back to the pool, these would fail.
      expect(await db.tenant(org, (sql) => sql.one('SELECT 1 AS one'))).toEqual({ one: 1 });
      expect(await db.systemTx((sql) => sql.one('SELECT 1 AS one'))).toEqual({ one: 1 });
    } finally {
      process.off('uncaughtException', record);
      await killer.end();
      await db.close();
    }
  });
});
