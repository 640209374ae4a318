// `npm run bench`: measures the platform's request path against a hello-world Fastify server and a bare
// pg query, with autocannon, on the embedded PostgreSQL and (when DATABASE_URL is set) on that server too.
// Scenarios live in bench/scenarios.mjs; how to add one: bench/README.md.
//
// Environment:
//   BENCH_DURATION     seconds per scenario (default 10)
//   BENCH_CONNECTIONS  concurrent connections (default 50)
//   BENCH_WARMUP       seconds of unmeasured load before each scenario (default: duration / 5, 1 to 3)
//   BENCH_ONLY         comma-separated substrings: measure only matching scenarios (the baselines always run)
//   BENCH_DATABASES    comma-separated: embedded, external (default: embedded, plus external when DATABASE_URL is set)
//   DATABASE_URL       a PostgreSQL server; the bench creates a fresh database on it and drops it afterwards
//   BENCH_COUNT_QUERIES  1 = also report database transactions per request (pg_stat_database; adds ~22 s per scenario,
//                      because PostgreSQL publishes a busy backend's counters up to 10 s late)
//   BENCH_PROFILE      1 = run the platform and the baseline servers under `node --cpu-prof`; profiles go to bench/results/profiles/
//                      when the platform stops (summarize it with `node bench/profile-summary.mjs <file>`)
//   BENCH_RATE         requests/s for every scenario (autocannon overallRate; default 0 = as fast as possible). Server CPU
//                      per request depends on load (a server woken for each request spends more per request than one
//                      that finds a batch), so compare two routes' CPU us/req at the same BENCH_RATE, below both maxima
//   BENCH_LOG_LEVEL    the platform's LOG_LEVEL (default warn; info adds Fastify's two log lines per request)
//   BENCH_KEEP         1 = keep the temporary DATA_DIR and the external database (for looking at them afterwards)
import autocannon from 'autocannon';
import pg from 'pg';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarios } from './scenarios.mjs';
import { freePort, memoryOf, resetPeak, sampleRss, startProcess } from './lib/processes.mjs';
import { client } from './lib/client.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
// The node flags `npm start` runs the server with (package.json "start": `node <flags> bin/platform.mjs serve`): the
// bench starts the platform with the same ones, so it measures the server as deployed.
const START_FLAGS = (/^(?:exec\s+)?node((?:\s+--\S+)*)\s/.exec(JSON.parse(readFileSync(path.join(benchDir, '..', 'package.json'), 'utf8')).scripts.start)?.[1] ?? '')
  .trim().split(/\s+/).filter(Boolean);
const resultsDir = path.join(benchDir, 'results');

function num(v, dflt) {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`Expected a non-negative number, got "${v}"`);
  return n;
}
const DURATION = num(process.env.BENCH_DURATION, 10);
const CONNECTIONS = Math.max(1, Math.round(num(process.env.BENCH_CONNECTIONS, 50)));
const RATE = num(process.env.BENCH_RATE, 0);
const WARMUP = num(process.env.BENCH_WARMUP, Math.min(3, Math.max(1, Math.round(DURATION / 5))));
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
const KEEP = process.env.BENCH_KEEP === '1';
const COUNT_QUERIES = process.env.BENCH_COUNT_QUERIES === '1';
const PROFILE = process.env.BENCH_PROFILE === '1';
const DATABASES = (process.env.BENCH_DATABASES ?? (process.env.DATABASE_URL ? 'embedded,external' : 'embedded'))
  .split(',').map((s) => s.trim()).filter(Boolean);

const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- processes of one database run

const running = new Set();
/** Stops the helper servers first, then the platform (which stops the embedded PostgreSQL under them). */
async function stopAll() {
  const all = [...running];
  await Promise.allSettled(all.filter((p) => p.name !== 'platform').map((p) => p.stop()));
  await Promise.allSettled(all.filter((p) => p.name === 'platform').map((p) => p.stop()));
  running.clear();
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => { log(`${sig}: stopping servers`); void stopAll().finally(() => process.exit(130)); });
}

function rootApiKey() {
  const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let prefix = '';
  for (const b of randomBytes(8)) prefix += alnum[b % alnum.length];
  return `svc_live_${prefix}_${randomBytes(32).toString('hex')}`;
}

async function httpOk(url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status === 200;
}

/** A fresh database on the DATABASE_URL server; returns its URL and how to drop it. */
async function createExternalDatabase(adminUrl) {
  const name = `platform_bench_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try { await admin.query(`CREATE DATABASE "${name}"`); } finally { await admin.end(); }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    name, url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try { await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`); } finally { await c.end(); }
    },
  };
}

async function startServers(kind) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-bench-'));
  const logDir = path.join(resultsDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  let external = null;
  if (kind === 'external') {
    if (!process.env.DATABASE_URL) throw new Error('BENCH_DATABASES has "external" but DATABASE_URL is not set');
    external = await createExternalDatabase(process.env.DATABASE_URL);
    log(`external database ${external.name} created`);
  }
  const rootKey = rootApiKey();
  const platformPort = await freePort();
  const env = {
    ...process.env,
    NODE_ENV: 'production', PORT: String(platformPort), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
    ROOT_API_KEY: rootKey, DEFAULT_SUBSCRIPTION_STATUS: 'active',
    // The limiter still runs (its cost is part of the request path) but never refuses.
    RATE_LIMIT_MAX: '1000000000', RATE_LIMIT_AUTH_MAX: '1000000000',
  };
  delete env.DATABASE_URL;
  delete env.EMBEDDED_PG_PORT;
  if (external) env.DATABASE_URL = external.url;
  const base = `http://127.0.0.1:${platformPort}`;
  const cleanup = async () => {
    await stopAll();
    if (external && !KEEP) await external.drop().catch((e) => log(`could not drop ${external.name}: ${e.message}`));
    if (!KEEP) rmSync(dataDir, { recursive: true, force: true });
    else log(`kept DATA_DIR ${dataDir}${external ? ` and database ${external.name}` : ''}`);
  };
  try {
    log(`starting the platform (${kind} PostgreSQL, DATA_DIR ${dataDir})`);
    const platform = await startProcess({
      name: 'platform', env,
      args: [...START_FLAGS, ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.join(resultsDir, 'profiles')}`, `--cpu-prof-name=platform-${kind}-${Date.now()}.cpuprofile`] : []),
        path.join(benchDir, 'lib', 'serve.mjs')],
      logFile: path.join(logDir, `platform-${kind}.log`), timeoutMs: 180_000,
      ready: () => httpOk(`${base}/v1/health`),
    });
    running.add(platform);
    const dbUrl = external ? external.url
      : `postgres://postgres:${encodeURIComponent(readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim())}@127.0.0.1:${readFileSync(path.join(dataDir, 'pg-port'), 'utf8').trim()}/postgres`;
    const helper = async (name, file, extraEnv) => {
      const port = await freePort();
      const p = await startProcess({
        name, args: [...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.join(resultsDir, 'profiles')}`, `--cpu-prof-name=${name}-${kind}-${Date.now()}.cpuprofile`] : []), path.join(benchDir, file)], env: { ...process.env, ...extraEnv, PORT: String(port) },
        logFile: path.join(logDir, `${name}-${kind}.log`), ready: (proc) => Promise.resolve(proc.output.includes('listening')),
      });
      running.add(p);
      return { proc: p, url: `http://127.0.0.1:${port}` };
    };
    const baseline = await helper('baseline', 'baseline-server.mjs', {});
    const bare = await helper('bare', 'bare-server.mjs', { DATABASE_URL: dbUrl });
    return {
      dataDir, rootKey, dbUrl, cleanup,
      targets: {
        platform: { proc: platform, url: base },
        baseline, bare,
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

// ---------------------------------------------------------------- the context scenario setups receive

async function makeContext(kind, servers) {
  const api = client(servers.targets.platform.url);
  let pool = null;
  const tokenAge = new WeakMap();
  const ctx = {
    api,
    rootKey: servers.rootKey,
    database: { kind, url: servers.dbUrl },
    state: {},
    log,
    async newTenant(label = 'tenant') {
      const email = `bench-${label}-${randomBytes(5).toString('hex')}@example.com`.toLowerCase();
      const r = await api.post('/v1/auth/register', {
        email, password: `Bench-${randomBytes(12).toString('base64url')}`, name: `Bench ${label}`, organization_name: `Bench ${label}`,
      }, { expect: 201 });
      const t = { userId: r.data.user.id, orgId: r.data.organization.id, email, accessToken: r.data.access_token, refreshToken: r.data.refresh_token };
      tokenAge.set(t, Date.now());
      return t;
    },
    async createApiKey(tenant, scopes = ['projects:read']) {
      const r = await api.post('/v1/api-keys', {
        name: `bench ${scopes.join(' ')}`, scopes, expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      }, { token: await ctx.freshToken(tenant), expect: 201 });
      return r.data.key;
    },
    async freshToken(tenant) {
      if (Date.now() - (tokenAge.get(tenant) ?? 0) > 10 * 60_000) {
        const r = await api.post('/v1/auth/refresh', { refresh_token: tenant.refreshToken });
        tenant.accessToken = r.data.access_token;
        tenant.refreshToken = r.data.refresh_token;
        tokenAge.set(tenant, Date.now());
      }
      return tenant.accessToken;
    },
    async sql(text, params) {
      pool ??= new pg.Pool({ connectionString: servers.dbUrl, max: 4 });
      return (await pool.query(text, params)).rows;
    },
    async close() { if (pool) await pool.end(); },
  };
  ctx.tenant = await ctx.newTenant('main');
  ctx.tenant.apiKey = await ctx.createApiKey(ctx.tenant);
  return ctx;
}

// ---------------------------------------------------------------- measuring

const value = (v, ctx, data) => (typeof v === 'function' ? v(ctx, data) : v);

function cpuSecondsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (USER_HZ = 100 on Linux)
  } catch { return null; }
}

/**
 * CPU ticks of every PostgreSQL process, by pid on this machine (processes named "postgres": the embedded server's and a
 * local DATABASE_URL server's backends). A pool's backends live for the whole scenario, so their ticks add up.
 */
function databaseCpuTicks() {
  const ticks = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.split(') ')[1].split(' ');
      ticks.set(entry, Number(fields[11]) + Number(fields[12]));
    } catch { /* exited meanwhile */ }
  }
  return ticks;
}

/** CPU seconds PostgreSQL spent between two databaseCpuTicks() readings (a process that exited meanwhile is not counted). */
function databaseCpuSecondsBetween(before, after) {
  let ticks = 0;
  for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
  return ticks / 100;
}

// PostgreSQL publishes a busy backend's statistics at most once a second, and up to 10 s late when it goes idle.
const STATS_DELAY_MS = 11_000;

/** Committed + rolled-back transactions of the bench database so far (each statement outside BEGIN is one). */
async function transactionCount(ctx) {
  const [row] = await ctx.sql(`SELECT (xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database WHERE datname = current_database()`);
  return Number(row.n);
}

function cannon(opts) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
    inst.on('error', () => {}); // connection errors are counted in result.errors
  });
}

/**
 * A scenario with `run` instead of a load: its own client code (a sync client paging, WebSocket clients), timed,
 * with the server's CPU and peak RSS around it. `run(ctx, data, baseUrl, { rssMb })` (rssMb(): the server's RSS
 * now) returns
 * { requests, latencyMs?, non2xx?, errors?, unit?, extra?, note } (note: a line of its own figures; unit: what
 * `requests` counts, for the per-second figure; extra: kept in latest.json).
 */
async function measureRun(scn, ctx, target, data) {
  const pid = target.proc.pid;
  globalThis.gc?.();
  await sleep(500);
  const before = memoryOf(pid);
  const peakReset = resetPeak(pid);
  const stopSampling = sampleRss(pid, 100);
  const cpu0 = cpuSecondsOf(pid);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const rssMb = () => { const m = memoryOf(pid); return m ? Math.round(m.rssKb / 102.4) / 10 : null; };
  const out = await scn.run(ctx, data, target.url, { rssMb });
  const seconds = (performance.now() - t0) / 1000;
  const own1 = process.cpuUsage(own0);
  const cpu1 = cpuSecondsOf(pid);
  const sampledKb = stopSampling();
  const mem = memoryOf(pid);
  const peakKb = mem ? (peakReset ? Math.max(mem.hwmKb, sampledKb) : sampledKb) : null;
  const mb = (kb) => (kb ? Math.round(kb / 102.4) / 10 : null);
  return {
    name: scn.name, target: scn.target ?? 'platform', method: 'RUN', url: out.url ?? '', compareTo: 'baseline', goal: scn.goal ?? null,
    connections: out.connections ?? 1, duration: Math.round(seconds * 10) / 10,
    rps: out.requests / seconds, requestsTotal: out.requests,
    latencyMs: { p50: null, p90: null, p99: null, avg: null, max: null, ...(out.latencyMs ?? {}) },
    non2xx: out.non2xx ?? 0, errors: out.errors ?? 0, timeouts: 0, statusCodes: {},
    rssBeforeMb: mb(before?.rssKb), peakRssMb: mb(peakKb),
    peakRssSource: mem ? (peakReset ? 'VmHWM (reset before the scenario)' : 'VmRSS sampled every 100 ms') : 'unavailable',
    serverCpuPercent: cpu0 !== null && cpu1 !== null ? Math.round(((cpu1 - cpu0) / seconds) * 100) : null,
    serverCpuMicrosPerRequest: cpu0 !== null && cpu1 !== null && out.requests ? Math.round(((cpu1 - cpu0) * 1e6) / out.requests) : null,
    clientCpuPercent: Math.round(((own1.user + own1.system) / 1e6 / seconds) * 100),
    dbTransactionsPerRequest: null,
    note: `${out.note}, ${Math.round((out.extra?.rows ?? out.requests) / seconds).toLocaleString('en-US')} ${out.unit ?? (out.extra?.rows !== undefined ? 'rows' : 'requests')}/s; server RSS ${mb(before?.rssKb) ?? '-'} MB before, peak ${mb(peakKb) ?? '-'} MB during`,
    ...(out.extra ? { extra: out.extra } : {}),
  };
}

async function measure(scn, ctx, servers) {
  const target = servers.targets[scn.target ?? 'platform'];
  const data = scn.setup ? await scn.setup(ctx) : undefined;
  if (scn.run) return measureRun(scn, ctx, target, data);
  const duration = scn.duration ?? DURATION;
  const headers = { ...(value(scn.headers, ctx, data) ?? {}) };
  let body = value(scn.body, ctx, data);
  if (body !== undefined && typeof body !== 'string') { body = JSON.stringify(body); headers['content-type'] ??= 'application/json'; }
  const opts = {
    url: target.url + value(scn.path ?? '/', ctx, data),
    method: scn.method ?? 'GET', headers, body,
    requests: value(scn.requests, ctx, data),
    connections: scn.connections ?? CONNECTIONS,
    ...(RATE > 0 ? { overallRate: RATE } : {}),
    timeout: 10,
  };
  if (WARMUP > 0) await cannon({ ...opts, duration: WARMUP });
  globalThis.gc?.();
  await sleep(COUNT_QUERIES ? STATS_DELAY_MS : 200);
  const xact0 = COUNT_QUERIES ? await transactionCount(ctx) : null;
  const pid = target.proc.pid;
  const peakReset = resetPeak(pid);
  const stopSampling = sampleRss(pid);
  const cpu0 = cpuSecondsOf(pid);
  const db0 = databaseCpuTicks();
  const own0 = process.cpuUsage();
  const r = await cannon({ ...opts, duration });
  const own1 = process.cpuUsage(own0);
  const cpu1 = cpuSecondsOf(pid);
  const db1 = databaseCpuTicks();
  const sampledKb = stopSampling();
  const mem = memoryOf(pid);
  let dbTransactionsPerRequest = null;
  if (COUNT_QUERIES) {
    await sleep(STATS_DELAY_MS);
    // minus one: the reading of xact0 is itself a transaction
    dbTransactionsPerRequest = r.requests.total ? Math.max(0, (await transactionCount(ctx)) - xact0 - 1) / r.requests.total : null;
  }
  const peakKb = mem ? (peakReset ? Math.max(mem.hwmKb, sampledKb) : sampledKb) : null;
  return {
    name: scn.name, target: scn.target ?? 'platform', method: opts.method, url: opts.url.replace(target.url, ''),
    compareTo: scn.compareTo ?? 'baseline', goal: scn.goal ?? null,
    connections: opts.connections, duration,
    rps: r.requests.average, requestsTotal: r.requests.total,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, avg: r.latency.average, max: r.latency.max },
    throughputBytesPerSec: r.throughput.average,
    non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
    peakRssMb: peakKb ? Math.round(peakKb / 102.4) / 10 : null,
    peakRssSource: mem ? (peakReset ? 'VmHWM (reset before the scenario)' : 'VmRSS sampled every 200 ms') : 'unavailable',
    serverCpuPercent: cpu0 !== null && cpu1 !== null ? Math.round(((cpu1 - cpu0) / duration) * 100) : null,
    // CPU time the server process spent per request: steadier than req/s on a shared machine (PostgreSQL's own CPU is not in it)
    serverCpuMicrosPerRequest: cpu0 !== null && cpu1 !== null && r.requests.total ? Math.round(((cpu1 - cpu0) * 1e6) / r.requests.total) : null,
    // autocannon's own CPU (this process): near 100% means the client, not the server, set the pace
    clientCpuPercent: Math.round(((own1.user + own1.system) / 1e6 / duration) * 100),
    // PostgreSQL's CPU time per request (every postgres process on the machine)
    dbCpuMicrosPerRequest: r.requests.total ? Math.round((databaseCpuSecondsBetween(db0, db1) * 1e6) / r.requests.total) : null,
    dbTransactionsPerRequest,
  };
}

/**
 * The scenarios of this run: the baselines (hello world, and the generic bare query) always; the others when they
 * match BENCH_ONLY; a bare counterpart named by a chosen scenario's `compareTo` whenever that scenario runs.
 */
function chooseScenarios() {
  const matches = (s) => !ONLY.length || ONLY.some((o) => s.name.toLowerCase().includes(o));
  const counterparts = new Set(scenarios.map((s) => s.compareTo).filter((c) => c && c !== 'bare' && c !== 'baseline'));
  const wanted = new Set(scenarios.filter((s) => s.target !== 'baseline' && s.target !== 'bare' && matches(s)).map((s) => s.compareTo));
  return scenarios.filter((s) => s.target === 'baseline'
    || (s.target === 'bare' ? !counterparts.has(s.name) || wanted.has(s.name) || matches(s) : matches(s)));
}

/** Ratios against the baselines and goal verdicts. */
function finish(rows) {
  const hello = rows.find((r) => r.target === 'baseline' && !r.error);
  const bareOf = (r) => (r.compareTo === 'bare' ? rows.find((b) => b.target === 'bare' && !b.error)
    : r.compareTo !== 'baseline' ? rows.find((b) => b.name === r.compareTo && !b.error) : undefined);
  for (const r of rows) {
    if (r.error) continue;
    const bare = bareOf(r);
    r.ratioToBaseline = hello && r !== hello ? r.rps / hello.rps : null;
    r.ratioToBare = bare ? r.rps / bare.rps : null;
    r.bareName = bare?.name ?? null;
    // Server CPU per request of the bare route divided by this route's (PostgreSQL's CPU is in neither).
    r.cpuRatioToBare = bare && bare.serverCpuMicrosPerRequest && r.serverCpuMicrosPerRequest
      ? bare.serverCpuMicrosPerRequest / r.serverCpuMicrosPerRequest : null;
    // The same ratio estimated from server CPU time per request: what req/s would be if the server process alone
    // set the pace. Less sensitive than req/s to a client or a neighbour taking the CPU, so the steadier figure here.
    r.cpuRatioToBaseline = hello && r !== hello && hello.serverCpuMicrosPerRequest && r.serverCpuMicrosPerRequest
      ? hello.serverCpuMicrosPerRequest / r.serverCpuMicrosPerRequest : null;
    if (r.goal && RATE > 0) r.goalResult = null; // at a fixed rate req/s says nothing about the route: no verdict
    else if (r.goal) {
      const ratioOk = (r.goal.minRatio === undefined || (r.ratioToBaseline !== null && r.ratioToBaseline >= r.goal.minRatio))
        && (r.goal.minBareRatio === undefined || (r.ratioToBare !== null && r.ratioToBare >= r.goal.minBareRatio));
      const p99Ok = r.latencyMs.p99 !== null && r.latencyMs.p99 < r.goal.maxP99Ms;
      r.goalResult = { pass: ratioOk && p99Ok && r.non2xx === 0 && r.errors === 0, ratioOk, p99Ok };
    }
  }
  return rows;
}

// ---------------------------------------------------------------- output

const fmt = (n, d = 0) => (n === null || n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
const pct = (n) => (n === null || n === undefined ? '-' : `${Math.round(n * 100)}%`);

function printTable(kind, rows) {
  const head = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'x hello', 'x bare', 'non-2xx', 'peak RSS MB', 'server CPU', 'CPU us/req', 'x hello CPU', 'x bare CPU', 'db CPU us/req', 'client CPU'];
  if (COUNT_QUERIES) head.push('db xact/req');
  const body = rows.map((r) => r.error
    ? [r.name, 'ERROR', ...head.slice(2).map(() => '')]
    : [r.name, fmt(r.rps), fmt(r.latencyMs.p50, 1), fmt(r.latencyMs.p99, 1), pct(r.ratioToBaseline), pct(r.ratioToBare),
      String(r.non2xx + r.errors + r.timeouts), fmt(r.peakRssMb, 1), r.serverCpuPercent === null ? '-' : `${r.serverCpuPercent}%`,
      fmt(r.serverCpuMicrosPerRequest), pct(r.cpuRatioToBaseline), pct(r.cpuRatioToBare), fmt(r.dbCpuMicrosPerRequest), `${r.clientCpuPercent}%`, ...(COUNT_QUERIES ? [fmt(r.dbTransactionsPerRequest, 3)] : [])]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  process.stdout.write(`\n${kind} PostgreSQL — ${CONNECTIONS} connections, ${DURATION} s per scenario (warm-up ${WARMUP} s)${RATE ? `, at most ${RATE} req/s` : ''}\n`);
  process.stdout.write(line(head) + '\n' + widths.map((w) => '-'.repeat(w)).join('  ') + '\n');
  for (const b of body) process.stdout.write(line(b) + '\n');
  for (const r of rows) {
    if (r.error) process.stdout.write(`ERROR   ${r.name}: ${r.error}\n`);
    else if (r.non2xx || r.errors || r.timeouts) {
      process.stdout.write(`WARNING ${r.name}: ${r.non2xx} non-2xx responses (${JSON.stringify(r.statusCodes)}), ${r.errors} errors, ${r.timeouts} timeouts: its figures do not measure the route\n`);
    }
  }
  for (const r of rows) if (r.note) process.stdout.write(`INFO    ${r.name}: ${r.note}\n`);
  if (RATE > 0) process.stdout.write(`(BENCH_RATE=${RATE}: every scenario was held to that rate, so req/s ratios and latencies are not the routes'; goals are not judged. Compare CPU us/req.)\n`);
  for (const r of rows) {
    if (!r.goalResult) continue;
    const g = r.goal;
    const ratios = [
      ...(g.minRatio !== undefined ? [`${pct(r.ratioToBaseline)} of hello-world req/s (goal >= ${pct(g.minRatio)})`] : []),
      ...(g.minBareRatio !== undefined ? [`${pct(r.ratioToBare)} of "${r.bareName ?? r.compareTo}" req/s (goal >= ${pct(g.minBareRatio)})`] : []),
    ];
    const cpu = g.minRatio === undefined && g.minBareRatio === undefined ? `server CPU ${fmt(r.serverCpuMicrosPerRequest)} us per request`
      : g.minBareRatio !== undefined
      ? `by server CPU per request ${pct(r.cpuRatioToBare)} of the bare route's (PostgreSQL's CPU not included)`
      : `by server CPU per request ${pct(r.cpuRatioToBaseline)} of hello world`;
    process.stdout.write(`${r.goalResult.pass ? 'PASS' : 'FAIL'}    ${r.name}: ${[...ratios, ''].join(', ')}p99 ${fmt(r.latencyMs.p99, 1)} ms (goal < ${g.maxP99Ms} ms)${r.non2xx || r.errors ? ', with failed requests' : ''}; ${cpu}\n`);
  }
}

// ---------------------------------------------------------------- main

async function runDatabase(kind) {
  const servers = await startServers(kind);
  const rows = [];
  let ctx;
  try {
    ctx = await makeContext(kind, servers);
    const chosen = chooseScenarios();
    for (const scn of chosen) {
      log(`${kind}: ${scn.name}`);
      try {
        rows.push(await measure(scn, ctx, servers));
      } catch (err) {
        log(`${kind}: ${scn.name} failed: ${err.stack ?? err}`);
        rows.push({ name: scn.name, target: scn.target ?? 'platform', error: String(err.message ?? err) });
      }
    }
    const startupHwm = memoryOf(servers.targets.platform.proc.pid);
    return { kind, rows: finish(rows), platformRssAtEndMb: startupHwm ? Math.round(startupHwm.rssKb / 102.4) / 10 : null };
  } finally {
    await ctx?.close();
    await servers.cleanup();
  }
}

const startedAt = new Date();
const machine = {
  cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? null, totalMemMb: Math.round(os.totalmem() / 1048576),
  loadAvgAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100), node: process.version, platform: `${os.platform()}-${os.arch()}`,
};
log(`${scenarios.length} scenarios x ${DATABASES.join(' + ')}; ${DURATION} s each at ${CONNECTIONS} connections; load average ${machine.loadAvgAtStart.join(' ')} on ${machine.cpus} CPUs`);
const runs = [];
let failed = false;
for (const kind of DATABASES) {
  try {
    const run = await runDatabase(kind);
    runs.push(run);
    printTable(kind, run.rows);
  } catch (err) {
    failed = true;
    log(`${kind}: could not run: ${err.stack ?? err}`);
    runs.push({ kind, error: String(err.message ?? err), rows: [] });
  }
}
mkdirSync(resultsDir, { recursive: true });
const out = {
  startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(),
  settings: { logLevel: process.env.BENCH_LOG_LEVEL || 'warn', durationSeconds: DURATION, rate: RATE || null, connections: CONNECTIONS, warmupSeconds: WARMUP, only: ONLY, countQueries: COUNT_QUERIES, profile: PROFILE },
  machine: { ...machine, loadAvgAtEnd: os.loadavg().map((l) => Math.round(l * 100) / 100) },
  databases: runs,
};
writeFileSync(path.join(resultsDir, 'latest.json'), JSON.stringify(out, null, 2) + '\n');
process.stdout.write(`\nResults: ${path.relative(process.cwd(), path.join(resultsDir, 'latest.json'))}; server logs in ${path.relative(process.cwd(), path.join(resultsDir, 'logs'))}/\n`);
// Goals and warnings are reported, not enforced: the exit code says only whether the bench could run.
// Exit explicitly: client libraries a scenario loaded (y-websocket) may leave handles that would keep the process up.
process.exit(failed ? 1 : 0);
