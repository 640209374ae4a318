#!/usr/bin/env node
// The `platform` command. Compiles TypeScript on first use (or when sources changed), then runs dist/cli.js.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(root, 'dist', 'cli.js');

function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

const stale = !existsSync(entry) || newestSource(path.join(root, 'src')) > statSync(entry).mtimeMs;
if (stale) {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) {
    console.error('TypeScript is not installed: run "npm ci" (with dev dependencies) first.');
    process.exit(1);
  }
  process.stderr.write('Building (tsc)...\n');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const args = process.argv.slice(2);
if (args[0] === '--build-only') process.exit(0);
const { main } = await import(pathToFileURL(entry).href);
await main(args);
