import pino from 'pino';
import { uuidv7 } from '../dist/core/ids.js';
import { randomUUID } from 'node:crypto';
const log = pino({ level: 'warn' });
function t(label, fn, n = 300000) { for (let i = 0; i < 20000; i++) fn(i); const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) fn(i); console.log(label.padEnd(28), (Number(process.hrtime.bigint() - t0) / n).toFixed(0), 'ns'); }
let sink;
t('uuidv7', () => { sink = uuidv7(); });
t('randomUUID', () => { sink = randomUUID(); });
t('pino child {reqId}', () => { sink = log.child({ reqId: 'abc' }); });
const m = new Map(); 
t('ratekey concat+map', (i) => { const k = `GET /v1/me|k:0193-abc-def`; let w = m.get(k); if (!w) { w = { count: 0, resetAtMs: 0 }; m.set(k, w); } w.count++; sink = { count: w.count, resetAtMs: w.resetAtMs }; });
const perms = Array.from({ length: 45 }, (_, i) => `perm.${(i * 7919) % 45}.x`); const set = new Set(perms);
t('[...set].sort() 45', () => { sink = [...set].sort(); });
t('async fn await', async () => { sink = await Promise.resolve(1); }, 100000);
