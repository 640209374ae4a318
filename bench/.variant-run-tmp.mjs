import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort } from './lib/processes.mjs';
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
const variants = ['', 'logger', 'reqid', 'cors', 'hook', 'big', 'big,schema', 'logger,reqid,cors,hook,big,schema'];
const out = {};
for (let round = 0; round < 2; round++) for (const v of variants) {
  const port = await freePort();
  const c = spawn(process.execPath, ['bench/.variant-server-tmp.mjs'], { env: { ...process.env, PORT: String(port), VARIANT: v }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((r) => c.stdout.once('data', r));
  const url = `http://127.0.0.1:${port}/`;
  await autocannon({ url, connections: 50, duration: 1 });
  const c0 = cpu(c.pid); const r = await autocannon({ url, connections: 50, duration: 4 }); const c1 = cpu(c.pid);
  (out[v || 'hello'] ??= []).push(Math.round(((c1 - c0) * 1e6) / r.requests.total));
  c.kill(); await new Promise((r) => c.once('exit', r));
}
for (const [k, a] of Object.entries(out)) console.log(k.padEnd(36), a.join(' / '), 'us/req');
