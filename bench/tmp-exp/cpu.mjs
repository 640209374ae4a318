import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
const [pid, url, token, dur = '4', rate = '0', conns = '50'] = process.argv.slice(2);
const cpu = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
const run = (d) => new Promise((res, rej) => autocannon({ url, connections: Number(conns), duration: d, ...(Number(rate) ? { overallRate: Number(rate) } : {}), headers: { authorization: `Bearer ${token}` } }, (e, r) => e ? rej(e) : res(r)));
await run(1);
const c0 = cpu(); const r = await run(Number(dur)); const c1 = cpu();
console.log(url.replace(/^http:\/\/[^/]+/, ''), 'req/s', Math.round(r.requests.average), 'p99', r.latency.p99, 'non2xx', r.non2xx, 'cpu us/req', Math.round((c1 - c0) * 1e6 / r.requests.total));
