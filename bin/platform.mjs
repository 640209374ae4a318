#!/usr/bin/env node
// The `platform` command. Compiles TypeScript on first use (or when sources changed), then runs dist/cli.js.
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
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
async function withBuildLock(fn) {
  for (;;) {
    try { mkdirSync(lockDir); break; } catch {
      try { if (Date.now() - statSync(lockDir).mtimeMs > 180_000) rmSync(lockDir, { recursive: true, force: true }); } catch { /* gone */ }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try { return fn(); } finally { rmSync(lockDir, { recursive: true, force: true }); }
}

if (isStale()) await withBuildLock(() => {
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
const { main } = await import(pathToFileURL(entry).href);
await main(args);
