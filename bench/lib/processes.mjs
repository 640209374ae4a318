// Child processes of the bench: the platform, the hello-world baseline and the bare-query server.
// Each runs in its own process so autocannon's CPU is never counted in a server's figures.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `node <args>` with env; its stdout and stderr go to logFile. Resolves once ready() says so
 * (polled every 250 ms) or rejects when the process exits first or timeoutMs passes.
 */
export async function startProcess({ name, args, env, logFile, ready, timeoutMs = 60_000 }) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(logFile, { flags: 'w' });
  let output = '';
  const keep = (d) => { output = (output + d).slice(-20_000); log.write(d); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  const exitPromise = new Promise((r) => child.once('exit', (code, signal) => { exited = { code, signal }; r(exited); }));
  const proc = {
    name, child, pid: child.pid, logFile,
    get output() { return output; },
    /** SIGTERM, then SIGKILL after graceMs; resolves when the process has exited. */
    async stop(graceMs = 30_000) {
      if (exited) return exited;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const r = await exitPromise;
      clearTimeout(t);
      log.end();
      return r;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (true) {
    if (exited) throw new Error(`${name} exited during start (${exited.code ?? exited.signal}); log ${logFile}:\n${output.slice(-3000)}`);
    if (await ready(proc).catch(() => false)) return proc;
    if (Date.now() > deadline) { await proc.stop(5000); throw new Error(`${name} not ready after ${timeoutMs} ms; log ${logFile}:\n${output.slice(-3000)}`); }
    await sleep(250);
  }
}

/** Resident-set figures of a process in kB, from /proc (Linux only; null elsewhere). */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
  } catch { return null; }
}

/**
 * Resets the peak-RSS mark (VmHWM) of a process so the next reading is the peak of one scenario.
 * Returns false where the kernel does not allow it; VmHWM is then the peak since the process started.
 */
export function resetPeak(pid) {
  try { writeFileSync(`/proc/${pid}/clear_refs`, '5'); return true; } catch { return false; }
}

/** Samples VmRSS while a scenario runs: a fallback peak where VmHWM cannot be reset. */
export function sampleRss(pid, everyMs = 200) {
  let max = 0;
  const tick = () => { const m = memoryOf(pid); if (m && m.rssKb > max) max = m.rssKb; };
  tick();
  const t = setInterval(tick, everyMs);
  return () => { clearInterval(t); tick(); return max; };
}
