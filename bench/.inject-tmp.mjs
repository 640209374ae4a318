import { mkdtempSync } from 'node:fs';
import os from 'node:os'; import path from 'node:path';
import Fastify from 'fastify';
process.env.DATA_DIR = mkdtempSync(path.join(os.tmpdir(), 'inj-'));
process.env.LOG_LEVEL = 'warn'; process.env.RATE_LIMIT_MAX = '1000000000'; process.env.RATE_LIMIT_AUTH_MAX='1000000000'; process.env.NODE_ENV='production';
process.env.JOB_POLL_MS='0';
const { loadConfig } = await import('/work/main/dist/core/config.js');
const { startPlatform } = await import('/work/main/dist/core/platform.js');
const { buildApp } = await import('/work/main/dist/app.js');
const pino = (await import('pino')).default;
const config = loadConfig();
const log = pino({ level: 'warn' });
const running = await startPlatform(config, log);
const app = await buildApp(running.platform, { loggerInstance: log });
await app.ready();
const reg = await app.inject({ method: 'POST', url: '/v1/auth/register', payload: { email: 'x@example.com', password: 'Zq9-uniqueSecret!', name: 'X', organization_name: 'X' } });
const tok = reg.json().data.access_token;
const key = (await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { authorization: 'Bearer ' + tok }, payload: { name: 'k', scopes: ['projects:read'], expires_at: new Date(Date.now() + 864e5).toISOString() } })).json().data.key;
const hello = Fastify({ logger: false }); hello.get('/', async () => ({ hello: 'world' })); await hello.ready();
async function time(label, a, opts, n = 20000) {
  for (let i = 0; i < 2000; i++) await a.inject(opts);
  const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) { const r = await a.inject(opts); if (r.statusCode !== 200) throw new Error(label + r.statusCode + r.body); }
  const t = Number(process.hrtime.bigint() - t0) / 1e3 / n; const c = process.cpuUsage(c0);
  console.log(label.padEnd(20), 'wall us/req', t.toFixed(1), 'cpu us/req', ((c.user + c.system) / n).toFixed(1));
}
const which = process.argv[2] ?? 'all';
if (which === 'all' || which === 'hello') await time('hello', hello, { url: '/' });
if (which === 'all' || which === 'pricing') await time('pricing', app, { url: '/v1/pricing' });
if (which === 'all' || which === 'me-key') await time('me key', app, { url: '/v1/me', headers: { authorization: 'Bearer ' + key } });
if (which === 'all' || which === 'me-jwt') await time('me jwt', app, { url: '/v1/me', headers: { authorization: 'Bearer ' + tok } });
if (which === 'all' || which === 'hello') await time('hello', hello, { url: '/' });
await app.close(); await running.close();
