/**
 * bin/platform.mjs's build lock: a lock left by a builder that is gone (Ctrl-C or a crash during the first build) is
 * taken at once; a live builder is waited for, with a line saying so. Tested on a temporary lock directory (no tsc run).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

type WithBuildLock = <T>(dir: string, fn: () => T | Promise<T>, opts?: { staleMs?: number; pollMs?: number; say?: (m: string) => void }) => Promise<T>;
// A computed specifier: the .mjs has no type declarations for tsc to find.
const { withBuildLock } = await import(pathToFileURL(path.resolve(import.meta.dirname, '..', 'bin', 'platform.mjs')).href) as { withBuildLock: WithBuildLock };

const tmp = mkdtempSync(path.join(os.tmpdir(), 'platform-build-lock-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
/** A lock directory as a builder leaves it: `pid` inside, when given. */
function lock(pid?: number): string {
  const dir = path.join(tmp, `lock-${n++}`);
  mkdirSync(dir);
  if (pid !== undefined) writeFileSync(path.join(dir, 'pid'), String(pid));
  return dir;
}

async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => c.once('exit', r));
  return c.pid!;
}

function liveProcess(): ChildProcess {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' });
  children.push(c);
  return c;
}

describe('build lock', () => {
  it('a lock whose builder is gone is stale at once, and is released after the build', async () => {
    const dir = lock(await deadPid());
    const said: string[] = [];
    const t0 = Date.now();
    const result = await withBuildLock(dir, () => (existsSync(dir) ? 'built' : 'unlocked'), { say: (m) => said.push(m) });
    expect(result).toBe('built');
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(said.join('')).toMatch(/stale build lock \(its builder \(pid \d+\) is gone\)/);
    expect(existsSync(dir)).toBe(false);
  });

  it('a live builder is waited for, with one line saying so; its lock is taken once it ends', async () => {
    const builder = liveProcess();
    const dir = lock(builder.pid);
    const said: string[] = [];
    let ran = false;
    const waiting = withBuildLock(dir, () => { ran = true; }, { pollMs: 20, say: (m) => said.push(m) });
    await new Promise((r) => setTimeout(r, 300));
    expect(ran).toBe(false);
    expect(said).toEqual([`Waiting for another build (pid ${builder.pid}) to finish...\n`]);
    builder.kill('SIGKILL');
    await waiting;
    expect(ran).toBe(true);
    expect(said.filter((m) => m.startsWith('Waiting'))).toHaveLength(1);
  });

  it('a lock older than the age limit is stale even when its pid is alive (a reused pid)', async () => {
    const dir = lock(liveProcess().pid);
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(dir, old, old);
    await expect(withBuildLock(dir, () => 'built', { pollMs: 20, say: () => {} })).resolves.toBe('built');
  });

  it('a lock without a recorded builder (an older lock, or a crash right after creating it) is stale after 10 s', async () => {
    const dir = lock();
    const old = new Date(Date.now() - 30_000);
    utimesSync(dir, old, old);
    const t0 = Date.now();
    await expect(withBuildLock(dir, () => 'built', { pollMs: 20, say: () => {} })).resolves.toBe('built');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('the builder records its pid in the lock', async () => {
    const dir = path.join(tmp, 'fresh');
    const seen = await withBuildLock(dir, () => readPid(dir), { say: () => {} });
    expect(seen).toBe(process.pid);
  });
});

function readPid(dir: string): number {
  return Number(readFileSync(path.join(dir, 'pid'), 'utf8'));
}
