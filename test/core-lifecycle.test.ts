/**
 * The real server process: `node bin/platform.mjs serve` with an embedded PostgreSQL under a fresh DATA_DIR.
 * SIGTERM drains and exits 0 with PostgreSQL stopped; after a SIGKILL (PostgreSQL left running) the next start recovers.
 * The first start may compile dist/ with tsc, hence the long timeouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ROOT = path.resolve(import.meta.dirname, '..');
const START_TIMEOUT_MS = 240_000;

interface Server { child: ChildProcess; port: number; output(): string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }

let dataDir: string;
const started: ChildProcess[] = [];
const postgresPids = new Set<number>();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address() as net.AddressInfo; srv.close(() => resolve(port)); });
  });
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; } };
const postmasterPid = () => {
  const f = path.join(dataDir, 'pg', 'postmaster.pid');
  return existsSync(f) ? Number(readFileSync(f, 'utf8').split('\n')[0]) : null;
};

async function start(): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env, NODE_ENV: 'development', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info',
    EMBEDDED_PG_PORT: '0', JOB_POLL_MS: '1000',
  };
  for (const k of ['DATABASE_URL', 'ROOT_API_KEY', 'REDIS_URL', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID']) delete env[k];
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'platform.mjs'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const server: Server = { child, port, output: () => out, exited };
  const deadline = Date.now() + START_TIMEOUT_MS;
  let done = false;
  void exited.then(() => { done = true; });
  while (Date.now() < deadline) {
    if (done) throw new Error(`server exited during start:\n${out.slice(-4000)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) {
        const pid = postmasterPid();
        if (pid) postgresPids.add(pid);
        return server;
      }
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`server not healthy after ${START_TIMEOUT_MS} ms:\n${out.slice(-4000)}`);
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) { if (!alive(pid)) return true; await new Promise((r) => setTimeout(r, 100)); }
  return !alive(pid);
}

async function api(s: Server, method: string, url: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${s.port}${url}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() as { success: boolean; data?: Record<string, unknown>; error?: { code: string } } };
}

beforeAll(() => { dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-lifecycle-')); });
afterAll(async () => {
  // Only what this file started, by pid.
  for (const c of started) if (c.exitCode === null && c.signalCode === null && c.pid) { try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ } }
  for (const pid of postgresPids) if (alive(pid)) { try { process.kill(pid, 'SIGINT'); } catch { /* gone */ } await waitGone(pid, 10_000); }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('server process', () => {
  const email = `life-${randomBytes(4).toString('hex')}@example.test`;
  const password = 'Correct-Horse-Battery-9';

  it('SIGTERM: drains, stops the embedded PostgreSQL and exits 0', async () => {
    const s = await start();
    const pgPid = postmasterPid();
    expect(pgPid).toBeGreaterThan(0);
    expect(alive(pgPid!)).toBe(true);
    const health = await api(s, 'GET', '/v1/health');
    expect(health.body).toMatchObject({ success: true, data: { status: 'ok', database: 'ok' } });
    const reg = await api(s, 'POST', '/v1/auth/register', { email, password, name: 'Life', organization_name: 'Lifecycle Org' });
    expect(reg.status).toBe(201);
    // Request connections log in as the application role itself, not as the owner switching roles.
    const token = (reg.body.data as { access_token: string }).access_token;
    const current = await fetch(`http://127.0.0.1:${s.port}/v1/organizations/current`, { headers: { authorization: `Bearer ${token}` } });
    expect(current.status).toBe(200);
    const owner = new pg.Client({ connectionString: `postgres://postgres:${readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim()}@127.0.0.1:${readFileSync(path.join(dataDir, 'pg-port'), 'utf8').trim()}/postgres` });
    await owner.connect();
    const logins = (await owner.query(`SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = 'postgres' AND application_name = 'platform-api'`)).rows.map((r) => r.usename);
    const super_ = (await owner.query(`SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = 'platform_app'`)).rows[0];
    await owner.end();
    expect(logins).toContain('platform_app');
    expect(super_).toEqual({ rolsuper: false, rolbypassrls: false, rolcanlogin: true });

    s.child.kill('SIGTERM');
    const exit = await s.exited;
    expect(exit, s.output().slice(-3000)).toEqual({ code: 0, signal: null });
    expect(await waitGone(pgPid!, 10_000)).toBe(true);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, START_TIMEOUT_MS + 60_000);

  it('a second server on the same DATA_DIR refuses to start and leaves the running one alone', async () => {
    const first = await start();
    const pgPid = postmasterPid()!;
    const refused = await start().then(() => 'started', (err: Error) => err.message);
    expect(refused).toContain('could not start: DATA_DIR');
    expect(refused).toContain('is in use');
    expect(alive(pgPid)).toBe(true);
    expect((await api(first, 'GET', '/v1/health')).body).toMatchObject({ success: true, data: { database: 'ok' } });
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(await waitGone(pgPid, 10_000)).toBe(true);
  }, 2 * START_TIMEOUT_MS + 60_000);

  it('SIGKILL: the next start on the same DATA_DIR recovers the left-over PostgreSQL and keeps the data', async () => {
    const first = await start();
    const pgPid = postmasterPid()!;
    expect(pgPid).toBeGreaterThan(0);
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // PostgreSQL was our child, not killed with us; its pid file is still there.
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(true);

    const second = await start();
    expect(await waitGone(pgPid, 1000)).toBe(true);
    const newPid = postmasterPid();
    expect(newPid).not.toBe(pgPid);
    const login = await api(second, 'POST', '/v1/auth/login', { email, password });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.data?.access_token).toBeTruthy();

    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(await waitGone(newPid!, 10_000)).toBe(true);
  }, 2 * START_TIMEOUT_MS + 60_000);
});
