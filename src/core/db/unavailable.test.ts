/**
 * Which errors mean "the database cannot be reached" (503) and which stay faults (500), on the errors pg really
 * gives: a refused connection, a server that never answers, a pool with no free connection, a session ended by an
 * administrator, and ordinary statement errors.
 */
import { afterAll, describe, expect, it, inject } from 'vitest';
import net from 'node:net';
import pg from 'pg';
import { databaseUnavailableCause } from './unavailable.js';

const servers: net.Server[] = [];
const sockets: net.Socket[] = [];
afterAll(() => {
  for (const s of sockets) s.destroy();
  for (const s of servers) s.close();
});

/** A port something listened on a moment ago and nothing does now. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** A server that accepts connections and never says a word (a hung PostgreSQL, a half-dead proxy). */
async function silentPort(): Promise<number> {
  const srv = net.createServer((s) => { sockets.push(s); });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return (srv.address() as net.AddressInfo).port;
}

async function failureOf(p: Promise<unknown>): Promise<unknown> {
  try { await p; } catch (err) { return err; }
  throw new Error('expected a failure');
}

describe('databaseUnavailableCause', () => {
  it('a refused connection, by address or by host name', async () => {
    const port = await closedPort();
    for (const host of ['127.0.0.1', 'localhost']) {
      const pool = new pg.Pool({ host, port, connectionTimeoutMillis: 5000 });
      const err = await failureOf(pool.query('SELECT 1'));
      await pool.end();
      expect(databaseUnavailableCause(err)).toMatch(/^ECONNREFUSED: /);
    }
  });

  it('a server that never answers: the pool\'s connection timeout', async () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port: await silentPort(), connectionTimeoutMillis: 200 });
    const err = await failureOf(pool.query('SELECT 1'));
    await pool.end();
    expect(databaseUnavailableCause(err)).toMatch(/connection timeout/);
  });

  it('no connection free in time (the pool\'s wait for a busy pool) is one too', async () => {
    const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 1, connectionTimeoutMillis: 200 });
    const held = await pool.connect();
    try {
      const err = await failureOf(pool.connect());
      expect(databaseUnavailableCause(err)).toBe('timeout exceeded when trying to connect');
    } finally { held.release(); await pool.end(); }
  });

  it('a session ended by an administrator (57P01), and the connection-exception class 08', async () => {
    const victim = new pg.Client({ connectionString: inject('databaseUrl') });
    const admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await victim.connect();
    await admin.connect();
    victim.on('error', () => {}); // the ended session's error event, after the query's rejection
    try {
      const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const sleeping = failureOf(victim.query('SELECT pg_sleep(30)'));
      await new Promise((r) => setTimeout(r, 200));
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(databaseUnavailableCause(await sleeping)).toMatch(/^57P01: /);
    } finally { await admin.end(); await victim.end().catch(() => {}); }
    const lost = Object.assign(new pg.DatabaseError('connection failure', 0, 'error'), { code: '08006' });
    expect(databaseUnavailableCause(lost)).toBe('08006: connection failure');
  });

  it('ordinary errors stay faults', async () => {
    const c = new pg.Client({ connectionString: inject('databaseUrl') });
    await c.connect();
    try {
      expect(databaseUnavailableCause(await failureOf(c.query('SELEC 1')))).toBeNull();
      expect(databaseUnavailableCause(await failureOf(c.query('SELECT 1/0')))).toBeNull();
    } finally { await c.end(); }
    expect(databaseUnavailableCause(new Error('boom'))).toBeNull();
    expect(databaseUnavailableCause('ECONNREFUSED')).toBeNull();
  });
});
