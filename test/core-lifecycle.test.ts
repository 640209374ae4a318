/**
 * The real server process: `node bin/platform.mjs serve` with an embedded PostgreSQL under a fresh DATA_DIR.
 * SIGTERM drains and exits 0 with PostgreSQL stopped; after a SIGKILL (PostgreSQL left running) the next start recovers.
 * The first start may compile dist/ with tsc, hence the long timeouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ROOT = path.resolve(import.meta.dirname, '..');
const START_TIMEOUT_MS = 240_000;

interface Server { child: ChildProcess; port: number; output(): string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }

let dataDir: string;
const extraDirs: string[] = [];
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
const postmasterPid = (dir = dataDir) => {
  const f = path.join(dir, 'pg', 'postmaster.pid');
  return existsSync(f) ? Number(readFileSync(f, 'utf8').split('\n')[0]) : null;
};

function serverEnv(dir: string, port: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env, NODE_ENV: 'development', DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info',
    EMBEDDED_PG_PORT: '0', JOB_POLL_MS: '1000',
  };
  for (const k of ['DATABASE_URL', 'ROOT_API_KEY', 'REDIS_URL', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID']) delete env[k];
  return { ...env, ...extra };
}

/** `ownGroup`: the server leads a process group of its own, as a terminal's foreground job does (for Ctrl-C tests). */
async function start(dir = dataDir, extra: NodeJS.ProcessEnv = {}, ownGroup = false): Promise<Server> {
  const port = await freePort();
  const env = serverEnv(dir, port, extra);
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'platform.mjs'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: ownGroup });
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
        const pid = postmasterPid(dir);
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

async function api(s: Server, method: string, url: string, body?: unknown, bearer?: string) {
  const headers: Record<string, string> = {};
  if (body) headers['content-type'] = 'application/json';
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const res = await fetch(`http://127.0.0.1:${s.port}${url}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() as { success: boolean; data?: Record<string, unknown>; error?: { code: string } } };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (cond()) return true; await sleep(50); }
  return cond();
}

/** SIGTERM, then the process exits 0 and its embedded PostgreSQL is gone. */
async function stop(s: Server, dir = dataDir): Promise<void> {
  const pgPid = postmasterPid(dir);
  s.child.kill('SIGTERM');
  expect(await s.exited, s.output().slice(-3000)).toEqual({ code: 0, signal: null });
  if (pgPid) expect(await waitGone(pgPid, 10_000)).toBe(true);
  expect(existsSync(path.join(dir, 'pg', 'postmaster.pid'))).toBe(false);
}

/** A pid that named a process a moment ago and names none now. */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => c.once('exit', r));
  expect(alive(c.pid!)).toBe(false);
  return c.pid!;
}

/** Rewrites the cluster's postmaster.pid as a crash would leave it, but naming `pid` (the rest of a real file kept). */
function writeStalePidFile(dir: string, template: string, pid: number): void {
  const file = path.join(dir, 'pg', 'postmaster.pid');
  const lines = template.split('\n');
  lines[0] = String(pid);
  writeFileSync(file, lines.join('\n'), { mode: 0o600 });
  const owner = statSync(path.join(dir, 'pg'));
  chownSync(file, owner.uid, owner.gid); // as PostgreSQL (the postgres user when we run as root) would have left it
}

const ROOT_KEY_RE = /Root API key \(shown once; store it now\):\s+(\S+)/g;

beforeAll(() => { dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-lifecycle-')); });
afterAll(async () => {
  // Only what this file started, by pid.
  for (const c of started) if (c.exitCode === null && c.signalCode === null && c.pid) { try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ } }
  for (const pid of postgresPids) if (alive(pid)) { try { process.kill(pid, 'SIGINT'); } catch { /* gone */ } await waitGone(pid, 10_000); }
  rmSync(dataDir, { recursive: true, force: true });
  for (const d of extraDirs) rmSync(d, { recursive: true, force: true });
});

const email = `life-${randomBytes(4).toString('hex')}@example.test`;
const password = 'Correct-Horse-Battery-9';

/**
 * A sign-in under way: headers and half the body sent, the rest when `finish` is called (after a signal, say).
 * agent:false: a connection of its own.
 */
async function loginInFlight(s: Server): Promise<{ finish(): Promise<{ status: number; text: string }> }> {
  const body = JSON.stringify({ email, password });
  const split = Math.floor(body.length / 2);
  const req = http.request({
    host: '127.0.0.1', port: s.port, method: 'POST', path: '/v1/auth/login', agent: false,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode!, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  response.catch(() => { /* awaited by finish */ });
  req.flushHeaders();
  req.write(body.slice(0, split));
  await sleep(500); // the server has the headers: the request is under way, waiting for its body
  return { finish: () => { req.end(body.slice(split)); return response; } };
}

describe('server process', () => {

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
  it('stale postmaster.pid naming a process that no longer exists: the next start removes it and serves', async () => {
    const first = await start();
    const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
    const real = readFileSync(pidFile, 'utf8');
    await stop(first);

    const dead = await deadPid();
    writeStalePidFile(dataDir, real, dead);
    expect(postmasterPid()).toBe(dead);

    const second = await start();
    const health = await api(second, 'GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ success: true, data: { database: 'ok' } });
    const pgPid = postmasterPid()!;
    expect(pgPid).not.toBe(dead);
    expect(alive(pgPid)).toBe(true);
    expect((await api(second, 'POST', '/v1/auth/login', { email, password })).status).toBe(200);
    await stop(second);
  }, START_TIMEOUT_MS + 60_000);

  it('stale postmaster.pid whose pid now names an unrelated live process: the next start serves and leaves that process alone', async () => {
    const first = await start();
    const real = readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8');
    await stop(first);

    // After a reboot the old postmaster pid may belong to anything: here a process that is not PostgreSQL, run as the
    // cluster's owner so that PostgreSQL's own lock-file check (kill(pid, 0)) would see it alive and refuse to start.
    const owner = statSync(path.join(dataDir, 'pg'));
    const asOwner = process.getuid?.() === 0 ? { uid: owner.uid, gid: owner.gid } : {};
    const decoy = spawn('sleep', ['120'], { stdio: 'ignore', ...asOwner });
    started.push(decoy);
    const decoyExit = new Promise((r) => decoy.once('exit', r));
    try {
      expect(alive(decoy.pid!)).toBe(true);
      writeStalePidFile(dataDir, real, decoy.pid!);

      const second = await start();
      expect((await api(second, 'GET', '/v1/health')).status).toBe(200);
      expect(postmasterPid()).not.toBe(decoy.pid);
      expect(alive(decoy.pid!)).toBe(true);
      expect(decoy.exitCode).toBeNull();
      await stop(second);
    } finally {
      decoy.kill('SIGKILL');
      await decoyExit;
    }
  }, START_TIMEOUT_MS + 60_000);

  it('an access token issued before a restart is still accepted after it (the signing key is kept in the database)', async () => {
    const s = await start();
    const reg = await api(s, 'POST', '/v1/auth/register', { email: `restart-${randomBytes(4).toString('hex')}@example.test`, password, name: 'Restart', organization_name: 'Restart Org' });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const token = (reg.body.data as { access_token: string }).access_token;
    expect(token).toBeTruthy();
    const before = await api(s, 'GET', '/v1/me', undefined, token);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    await stop(s);

    const again = await start();
    const after = await api(again, 'GET', '/v1/me', undefined, token);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect((after.body.data as { user: { id: string } }).user.id).toBe((before.body.data as { user: { id: string } }).user.id);
    // A token the server never issued is still refused after the restart (the check is not simply off).
    const [h, p] = token.split('.');
    const forged = await api(again, 'GET', '/v1/me', undefined, `${h}.${p}.${Buffer.alloc(64).toString('base64url')}`);
    expect(forged.status).toBe(401);
    await stop(again);
  }, 2 * START_TIMEOUT_MS + 60_000);

  it('drain: a request in progress when SIGTERM arrives completes normally, new connections are refused, then exit 0', async () => {
    const s = await start();
    const pgPid = postmasterPid()!;
    const login = await loginInFlight(s);

    s.child.kill('SIGTERM');
    expect(await until(() => s.output().includes('shutting down'), 10_000), s.output().slice(-3000)).toBe(true);
    await sleep(300);
    // Draining: still running, no longer accepting connections.
    expect(s.child.exitCode).toBeNull();
    const refused = await new Promise<string>((resolve) => {
      const sock = net.connect(s.port, '127.0.0.1');
      sock.once('connect', () => { sock.destroy(); resolve('connected'); });
      sock.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    expect(refused).toBe('ECONNREFUSED');

    const res = await login.finish();
    expect(res.status, res.text).toBe(200);
    expect((JSON.parse(res.text) as { data: { access_token?: string } }).data.access_token).toBeTruthy();

    expect(await s.exited, s.output().slice(-3000)).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain('stopped cleanly');
    expect(await waitGone(pgPid, 10_000)).toBe(true);
  }, START_TIMEOUT_MS + 60_000);

  it('SHUTDOWN_DRAIN_MS: after SIGTERM /v1/health answers 503 draining while other requests are served, then exit 0', async () => {
    // Long enough for the requests below on two busy cores; the test waits for the log line, not for a time.
    const s = await start(dataDir, { SHUTDOWN_DRAIN_MS: '8000' });
    const reg = await api(s, 'POST', '/v1/auth/register', { email: `drain-${randomBytes(4).toString('hex')}@example.test`, password, name: 'Drain', organization_name: 'Drain Org' });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const token = (reg.body.data as { access_token: string }).access_token;

    s.child.kill('SIGTERM');
    expect(await until(() => s.output().includes('draining: /v1/health answers 503'), 10_000), s.output().slice(-3000)).toBe(true);
    const health = await fetch(`http://127.0.0.1:${s.port}/v1/health`);
    expect(health.status).toBe(503);
    expect(health.headers.get('retry-after')).toBe('1');
    expect(await health.json()).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE', details: { status: 'draining' } } });
    // Everything else is still served, the database included.
    const me = await api(s, 'GET', '/v1/me', undefined, token);
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(s.child.exitCode).toBeNull();
    expect(s.output()).not.toContain('shutting down: no new connections');

    expect(await s.exited, s.output().slice(-3000)).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain('stopped cleanly');
  }, START_TIMEOUT_MS + 60_000);

  it('Ctrl-C on npm start (SIGINT to the whole foreground group, then the one npm forwards): the drain goes on, exit 0', async () => {
    const s = await start(dataDir, {}, true);
    const pgPid = postmasterPid()!;
    const login = await loginInFlight(s);
    // The terminal signals every process of the group: the server, and PostgreSQL unless it has a group of its own.
    process.kill(-s.child.pid!, 'SIGINT');
    expect(await until(() => s.output().includes('shutting down'), 10_000), s.output().slice(-3000)).toBe(true);
    // npm forwards the SIGINT it got to its child (sent once the first is handled: two pending signals merge into one).
    process.kill(s.child.pid!, 'SIGINT');
    expect(await until(() => s.output().includes('already shutting down'), 10_000), s.output().slice(-3000)).toBe(true);
    expect(s.child.exitCode).toBeNull();
    // Answered in full (whether the account exists depends on which tests of this file ran: not the point here).
    const res = await login.finish();
    expect([200, 401], res.text).toContain(res.status);
    expect(typeof (JSON.parse(res.text) as { success: boolean }).success).toBe('boolean');
    expect(await s.exited, s.output().slice(-3000)).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain('stopped cleanly');
    expect(await waitGone(pgPid, 10_000)).toBe(true);
  }, START_TIMEOUT_MS + 60_000);
});

describe('first start without ROOT_API_KEY', () => {
  it('prints a working root key once; a second start on the same DATA_DIR prints none', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-lifecycle-root-'));
    extraDirs.push(dir);
    const first = await start(dir);
    const keys = [...first.output().matchAll(ROOT_KEY_RE)].map((m) => m[1]);
    expect(keys, first.output().slice(-3000)).toHaveLength(1);
    const key = keys[0];
    expect(key).toMatch(/^svc_live_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{32,64}$/);
    expect(first.output()).toContain(`curl -H "Authorization: Bearer ${key}" http://localhost:${first.port}/v1/me`);
    const me = await api(first, 'GET', '/v1/me', undefined, key);
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.success).toBe(true);
    expect((await api(first, 'GET', '/v1/me', undefined, `${key.slice(0, -4)}0000`)).status).toBe(401);
    await stop(first, dir);

    const second = await start(dir);
    expect(second.output()).not.toContain('Root API key');
    expect(second.output()).not.toContain(key);
    expect((await api(second, 'GET', '/v1/me', undefined, key)).status).toBe(200);
    await stop(second, dir);

    // Rotation: a ROOT_API_KEY set later becomes the root key and the printed one stops working; it is renewed at every
    // start (a key lives at most a year); a key whose prefix is taken by another key is refused in one line.
    const given = `svc_live_Rot8Key1_${randomBytes(16).toString('hex')}`;
    const third = await start(dir, { ROOT_API_KEY: given });
    expect((await api(third, 'GET', '/v1/me', undefined, given)).status).toBe(200);
    const old = await api(third, 'GET', '/v1/me', undefined, key);
    expect([old.status, old.body.error?.code]).toEqual([401, 'INVALID_API_KEY']);
    const expiry = async (s: Server) => {
      const keys = (await api(s, 'GET', '/v1/api-keys?limit=100', undefined, given)).body.data as unknown as Array<{ prefix: string; expires_at: string }>;
      return Date.parse(keys.find((k) => k.prefix === 'Rot8Key1')!.expires_at);
    };
    const firstExpiry = await expiry(third);
    await stop(third, dir);
    const fourth = await start(dir, { ROOT_API_KEY: given });
    expect(await expiry(fourth)).toBeGreaterThan(firstExpiry);
    // A tenant's own key is not a root key, whatever the environment says.
    const tenant = await api(fourth, 'POST', '/v1/auth/register', { email: `rot-${Date.now()}@example.com`, password: 'Correct-Horse-Battery-9', name: 'T', organization_name: 'T' });
    const tenantKey = (await api(fourth, 'POST', '/v1/api-keys', { name: 'k', scopes: ['projects:read'], expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString() },
      String(tenant.body.data!.access_token))).body.data!.key as string;
    await stop(fourth, dir);
    const refused = async (rootKey: string, prefix: string) => {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'platform.mjs'), 'serve'],
        { cwd: ROOT, env: serverEnv(dir, await freePort(), { ROOT_API_KEY: rootKey }), encoding: 'utf8', timeout: START_TIMEOUT_MS });
      expect(r.status, r.stderr.slice(-2000)).toBe(1);
      expect(r.stderr.trim().split('\n').at(-1)).toBe(`platform: could not start: ROOT_API_KEY: its prefix "${prefix}" belongs to another key; set a newly generated key`);
    };
    await refused(`svc_live_Rot8Key1_${randomBytes(16).toString('hex')}`, 'Rot8Key1');
    await refused(tenantKey, tenantKey.split('_')[2]);
  }, 6 * START_TIMEOUT_MS + 60_000);
});

describe('failures at start and at stop', () => {
  it('a malformed ROOT_API_KEY: one line on stderr (no stack), exit 1, the embedded PostgreSQL stopped', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-lifecycle-badkey-'));
    extraDirs.push(dir);
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'platform.mjs'), 'serve'],
      { cwd: ROOT, env: serverEnv(dir, await freePort(), { ROOT_API_KEY: 'svc_live_bad' }), encoding: 'utf8', timeout: START_TIMEOUT_MS });
    expect(r.status, r.stderr.slice(-2000)).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^platform: could not start: ROOT_API_KEY is malformed/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const pid = postmasterPid(dir);
    expect(pid === null || !alive(pid)).toBe(true);
  }, START_TIMEOUT_MS + 10_000);

  it('SIGTERM while the first start applies its migrations: the start stops once the database is up, PostgreSQL stopped, exit 0', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-lifecycle-early-'));
    extraDirs.push(dir);
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'platform.mjs'), 'serve'], { cwd: ROOT, env: serverEnv(dir, await freePort()), stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(child);
    let out = '';
    child.stdout!.on('data', (d) => { out += d; });
    child.stderr!.on('data', (d) => { out += d; });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    expect(await until(() => out.includes('migration applied'), START_TIMEOUT_MS), out.slice(-2000)).toBe(true);
    const pgPid = postmasterPid(dir);
    expect(pgPid).not.toBeNull();
    postgresPids.add(pgPid!);
    child.kill('SIGTERM');
    expect(await exited, out.slice(-3000)).toEqual({ code: 0, signal: null });
    expect(out).toContain('shutting down once the database has started');
    expect(out).not.toContain('Root API key');
    expect(await waitGone(pgPid!, 10_000)).toBe(true);
  }, START_TIMEOUT_MS + 30_000);

  it('a first start on a port in use prints its root key anyway (without the Try line), exits 1; the key works later', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-lifecycle-busy-'));
    extraDirs.push(dir);
    const busy = net.createServer();
    const port = await new Promise<number>((resolve) => busy.listen(0, () => resolve((busy.address() as net.AddressInfo).port)));
    try {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'platform.mjs'), 'serve'],
        { cwd: ROOT, env: serverEnv(dir, port), encoding: 'utf8', timeout: START_TIMEOUT_MS });
      expect(r.status, r.stderr.slice(-2000)).toBe(1);
      expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^platform: could not start: .*EADDRINUSE/);
      const keys = [...r.stdout.matchAll(ROOT_KEY_RE)].map((m) => m[1]);
      expect(keys, r.stdout).toHaveLength(1);
      expect(r.stdout).not.toContain('Try:');
      const later = await start(dir);
      expect(later.output()).not.toContain('Root API key');
      expect((await api(later, 'GET', '/v1/me', undefined, keys[0])).status).toBe(200);
      await stop(later, dir);
    } finally { busy.close(); }
  }, 2 * START_TIMEOUT_MS + 10_000);

  it('drain timeout: a request that never finishes is cut after SHUTDOWN_TIMEOUT_MS, PostgreSQL is stopped, exit 1', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-lifecycle-drain-'));
    extraDirs.push(dir);
    const s = await start(dir, { SHUTDOWN_TIMEOUT_MS: '1500' });
    const pgPid = postmasterPid(dir)!;
    // A request that cannot finish: its sign-in lookup waits on a lock this test holds on the users table.
    const locker = new pg.Client({ connectionString: `postgres://postgres:${encodeURIComponent(readFileSync(path.join(dir, 'pg-password'), 'utf8').trim())}@127.0.0.1:${readFileSync(path.join(dir, 'pg-port'), 'utf8').trim()}/postgres` });
    locker.on('error', () => { /* ended by PostgreSQL's shutdown, as expected */ });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const stuck = fetch(`http://127.0.0.1:${s.port}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.com', password: 'Correct-Horse-Battery-9' }) }).catch(() => null);
    await sleep(500);
    s.child.kill('SIGTERM');
    expect(await s.exited, s.output().slice(-3000)).toEqual({ code: 1, signal: null });
    const line = s.output().split('\n').find((l) => l.includes('drain timed out'));
    expect(line).toBeDefined();
    // It says where the drain stopped and what still held the database: the stuck sign-in's system-pool connection.
    const logged = JSON.parse(line!) as { stage: string; systemPool: { total: number; idle: number; waiting: number }; appPool: object };
    expect(logged.stage).toMatch(/^HTTP server/);
    expect(logged.systemPool.total - logged.systemPool.idle).toBeGreaterThanOrEqual(1);
    expect(logged.appPool).toMatchObject({ total: expect.any(Number), idle: expect.any(Number), waiting: expect.any(Number) });
    expect(await waitGone(pgPid, 10_000)).toBe(true);
    await stuck;
  }, START_TIMEOUT_MS + 60_000);
});
