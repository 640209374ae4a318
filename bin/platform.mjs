#!/usr/bin/env node
// The `platform` command. Compiles TypeScript on first use (or when sources changed), then runs dist/cli.js.
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(root, 'dist', 'cli.js');
// Written after every successful build: an incremental tsc leaves unchanged outputs (dist/cli.js among them) untouched,
// so their times cannot tell whether the build is current.
const stamp = path.join(root, 'dist', '.build-stamp');

function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    // Tests and test fixtures are not part of the build; editing them must not trigger one.
    else if (e.name.endsWith('.ts') && !/\.(test|fixtures)\.ts$|test-support\.ts$/.test(e.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

const isStale = () => !existsSync(entry) || !existsSync(stamp) || newestSource(path.join(root, 'src')) > statSync(stamp).mtimeMs;

// Several processes may start at once (tests, a CLI call beside the server): one builds, the others wait.
const lockDir = path.join(root, '.build-lock');

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}

/**
 * Why the lock in `dir` is stale, or null while its builder may still be at work. The builder writes its pid into
 * the lock: Ctrl-C or a crash during a build leaves the lock behind, and a dead builder must not make the next start
 * wait minutes. The age limit stays for a pid reused by another process.
 */
function staleReason(dir, pid, staleMs) {
  const age = Date.now() - statSync(dir).mtimeMs;
  if (age > staleMs) return `older than ${Math.round(staleMs / 1000)} s`;
  if (!pid) return age > 10_000 ? 'no builder recorded' : null; // mkdir and the pid write are a moment apart
  return alive(pid) ? null : `its builder (pid ${pid}) is gone`;
}

/** The pid recorded in the lock `dir`: null before it is written, or in a lock from an older version. */
function holderOf(dir) {
  try { return Number(readFileSync(path.join(dir, 'pid'), 'utf8')) || null; } catch { return null; }
}

/** Runs `fn` holding the build lock `dir` (a directory: mkdir is atomic), waiting while a live builder holds it. */
export async function withBuildLock(dir, fn, { staleMs = 180_000, pollMs = 200, say = (m) => process.stderr.write(m) } = {}) {
  let told = false;
  for (;;) {
    try { mkdirSync(dir); break; } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      try {
        const holder = holderOf(dir);
        const reason = staleReason(dir, holder, staleMs);
        // Removed only if still the lock judged stale: another waiter may have replaced it meanwhile.
        if (reason && holderOf(dir) === holder) {
          say(`Removing a stale build lock (${reason}).\n`);
          rmSync(dir, { recursive: true, force: true });
          continue;
        }
        if (!told && holder) { say(`Waiting for another build (pid ${holder}) to finish...\n`); told = true; }
      } catch { /* released meanwhile */ }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
  try {
    writeFileSync(path.join(dir, 'pid'), String(process.pid));
    return await fn();
  } finally { rmSync(dir, { recursive: true, force: true }); }
}

async function main() {
  if (isStale()) await withBuildLock(lockDir, () => {
    if (!isStale()) return;
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    if (!existsSync(tsc)) {
      console.error('TypeScript is not installed: run "npm ci" (with dev dependencies) first.');
      process.exit(1);
    }
    process.stderr.write('Building (tsc)...\n');
    const started = new Date(); // the stamp's time: a source saved during the build still counts as newer
    const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
    if (r.status !== 0) { rmSync(lockDir, { recursive: true, force: true }); process.exit(r.status ?? 1); }
    writeFileSync(stamp, `${started.toISOString()}\n`);
    utimesSync(stamp, started, started);
  });
  const args = process.argv.slice(2);
  if (args[0] === '--build-only') process.exit(0);
  const cli = await import(pathToFileURL(entry).href);
  await cli.main(args);
}

// Run as the command (directly or through npm's bin link), not when a test imports withBuildLock.
const invoked = process.argv[1] ? (() => { try { return realpathSync(process.argv[1]); } catch { return process.argv[1]; } })() : '';
if (invoked === fileURLToPath(import.meta.url)) await main();
