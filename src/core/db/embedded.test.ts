/**
 * Start-up recovery of the embedded PostgreSQL (src/core/db/embedded.ts), in this process on temporary DATA_DIRs:
 * a postmaster.pid naming a process that is not ours, a crash during the first initdb, two starts at once, and
 * PostgreSQL dying under a running server.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { isPostmasterOf, startEmbeddedPostgres, type EmbeddedPg } from './embedded.js';

const dirs: string[] = [];
const running: EmbeddedPg[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.allSettled(running.map((r) => r.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; } };

function tempDataDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'platform-embedded-'));
  dirs.push(d);
  return d;
}

async function start(dataDir: string, opts: { log?: (m: string) => void; onUnexpectedExit?: (m: string) => void } = {}): Promise<EmbeddedPg> {
  const pgServer = await startEmbeddedPostgres({ dataDir, port: 0, ...opts });
  running.push(pgServer);
  return pgServer;
}

async function selectOne(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return (await c.query<{ n: number }>('SELECT 1 AS n')).rows[0].n; } finally { await c.end(); }
}

const pidFileOf = (dataDir: string) => path.join(dataDir, 'pg', 'postmaster.pid');
const postmasterPid = (dataDir: string) => Number(readFileSync(pidFileOf(dataDir), 'utf8').split('\n')[0]);

/** Writes dataDir's postmaster.pid as a crash would leave it, but naming `pid`, owned like the cluster. */
function writePidFile(dataDir: string, pid: number): void {
  const file = pidFileOf(dataDir);
  writeFileSync(file, `${pid}\n${path.join(dataDir, 'pg')}\n1700000000\n5432\n\n127.0.0.1\n  5432001         0\nready   \n`, { mode: 0o600 });
  const owner = statSync(path.join(dataDir, 'pg'));
  chownSync(file, owner.uid, owner.gid);
}

/** A long-running process whose command line says "postgres" (as a reused pid might), not on any data directory. */
async function dummy(viaNodeParent: boolean): Promise<number> {
  const keep = 'setInterval(() => {}, 1e9)';
  const script = viaNodeParent
    // The dummy's parent is then another live Node.js process, as a platform server's postmaster's would be.
    ? `const c = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(keep)}, 'postgres-dummy'], { stdio: 'ignore' }); console.log(c.pid); ${keep}`
    : `console.log(process.pid); ${keep}`;
  const child = spawn(process.execPath, ['-e', script, 'postgres-dummy'], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  const pid = await new Promise<number>((resolve) => child.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
  if (viaNodeParent) child.once('exit', () => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });
  return pid;
}

/** Pids whose command line contains every one of `parts` (Linux /proc). */
function pidsWith(...parts: string[]): number[] {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try { const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8'); if (parts.every((p) => cmd.includes(p))) found.push(Number(e)); } catch { /* gone */ }
  }
  return found;
}

describe('a stale postmaster.pid naming a process that is not ours', () => {
  it('another PostgreSQL cluster: left running, and the start serves', async () => {
    const other = tempDataDir();
    const otherPg = await start(other);
    const otherPid = postmasterPid(other);
    const ours = tempDataDir();
    await (await start(ours)).stop();
    writePidFile(ours, otherPid);

    const logs: string[] = [];
    const again = await start(ours, { log: (m) => logs.push(m) });
    expect(await selectOne(again.url)).toBe(1);
    expect(alive(otherPid)).toBe(true);
    expect(await selectOne(otherPg.url)).toBe(1);
    expect(logs.join('\n')).not.toContain('stopping a server left running');
    await again.stop();
    await otherPg.stop();
  }, 120_000);

  it('a live "postgres" process of ours (child) or of another Node.js process: left running, and the start serves', async () => {
    const ours = tempDataDir();
    await (await start(ours)).stop();
    for (const viaNodeParent of [false, true]) {
      const pid = await dummy(viaNodeParent);
      expect(alive(pid)).toBe(true);
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('postgres-dummy');
      writePidFile(ours, pid);
      const again = await start(ours);
      expect(await selectOne(again.url)).toBe(1);
      expect(alive(pid)).toBe(true);
      await again.stop();
      expect(existsSync(pidFileOf(ours))).toBe(false);
    }
  }, 120_000);
});

describe('a crash during the first initdb', () => {
  it('the next start creates the cluster again (the unfinished one is removed) and serves', async () => {
    const dir = tempDataDir();
    const first = startEmbeddedPostgres({ dataDir: dir, port: 0 }).then((p) => { running.push(p); return 'started'; }, (e: Error) => e.message);
    // Kill initdb once it has begun writing the cluster (PG_VERSION comes first, the bootstrap long after).
    let killed = 0;
    for (let i = 0; i < 4000 && !killed; i++) {
      const begun = ['pg', 'pg.initdb-tmp'].some((d) => existsSync(path.join(dir, d, 'PG_VERSION')));
      const initdb = begun ? pidsWith('initdb', dir) : [];
      for (const pid of initdb) { process.kill(pid, 'SIGKILL'); killed = pid; }
      if (!killed) await sleep(5);
    }
    expect(killed).toBeGreaterThan(0);
    expect(await first).toMatch(/initdb failed/);
    // Its bootstrap backend ends once its input is gone.
    for (let i = 0; i < 200 && pidsWith(dir).length; i++) await sleep(50);

    const logs: string[] = [];
    const again = await start(dir, { log: (m) => logs.push(m) });
    expect(await selectOne(again.url)).toBe(1);
    expect(existsSync(path.join(dir, 'pg.initdb-tmp'))).toBe(false);
    expect(logs.join('\n')).toContain('removing an unfinished initdb');
    await again.stop();
  }, 120_000);
});

describe('a DATA_DIR that cannot be used', () => {
  it('a file in its place is refused naming DATA_DIR and the path', async () => {
    const file = path.join(tempDataDir(), 'a-file');
    writeFileSync(file, 'not a directory');
    const refusal = await start(file).then(() => 'started', (err: Error) => err.message);
    expect(refusal).toBe(`DATA_DIR ${file} cannot be used: EEXIST: file already exists, mkdir '${file}'`);
  });
});

describe('a cluster made by another PostgreSQL major', () => {
  it('is refused with what to do, and left as it was', async () => {
    const dir = tempDataDir();
    mkdirSync(path.join(dir, 'pg'));
    writeFileSync(path.join(dir, 'pg', 'PG_VERSION'), '17\n');
    const refusal = await start(dir).then(() => 'started', (err: Error) => err.message);
    expect(refusal).toMatch(/^The embedded PostgreSQL cluster in .*\/pg was made by PostgreSQL 17; this release runs PostgreSQL 18\.\d+, which cannot open it\. Nothing was changed\. Start the release that made it, or move the data to a PostgreSQL 18 server \(README, "Upgrading": dump with pg_dump, restore, then start with DATABASE_URL\)\.$/);
    expect(readdirSync(path.join(dir, 'pg'))).toEqual(['PG_VERSION']);
    expect(existsSync(path.join(dir, 'embedded-pg.lock'))).toBe(false);
  });
});

describe('the DATA_DIR lock', () => {
  it('two starts at once on a fresh DATA_DIR: one serves, the other says DATA_DIR is in use; released by stop', async () => {
    const dir = tempDataDir();
    const results = await Promise.allSettled([start(dir), start(dir)]);
    const ok = results.filter((r): r is PromiseFulfilledResult<EmbeddedPg> => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok, refused.map((r) => String(r.reason)).join('\n')).toHaveLength(1);
    expect(String(refused[0].reason)).toMatch(/DATA_DIR .* is in use/);
    expect(await selectOne(ok[0].value.url)).toBe(1);
    await ok[0].value.stop();
    expect(existsSync(path.join(dir, 'embedded-pg.lock'))).toBe(false);
    await (await start(dir)).stop();
  }, 120_000);

  it('a lock left by a process that no longer runs is stale', async () => {
    const dir = tempDataDir();
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((r) => gone.once('exit', r));
    writeFileSync(path.join(dir, 'embedded-pg.lock'), `${gone.pid} 1\n`);
    const pgServer = await start(dir);
    expect(await selectOne(pgServer.url)).toBe(1);
    await pgServer.stop();
  }, 120_000);
});

describe('PostgreSQL dying under a running server', () => {
  it('is reported once, clearly', async () => {
    const dir = tempDataDir();
    const said: string[] = [];
    const pgServer = await start(dir, { onUnexpectedExit: (m) => said.push(m) });
    const pid = postmasterPid(dir);
    // The running postmaster is recognised by its data directory (PostgreSQL keeps its command line).
    expect(isPostmasterOf(pid, path.join(dir, 'pg'))).toBe(true);
    expect(isPostmasterOf(pid, path.join(tempDataDir(), 'pg'))).toBe(false);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && !said.length; i++) await sleep(50);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/embedded PostgreSQL \(pid \d+\) exited unexpectedly \(signal SIGKILL\).*restart the server/);
    // The data directory stays this process's until it stops.
    expect(existsSync(path.join(dir, 'embedded-pg.lock'))).toBe(true);
    await pgServer.stop();
    expect(existsSync(path.join(dir, 'embedded-pg.lock'))).toBe(false);
    expect(said).toHaveLength(1);
  }, 120_000);

  it('a stop is not reported', async () => {
    const said: string[] = [];
    const pgServer = await start(tempDataDir(), { onUnexpectedExit: (m) => said.push(m) });
    await pgServer.stop();
    await sleep(100);
    expect(said).toEqual([]);
  }, 120_000);
});
