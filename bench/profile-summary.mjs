// Summarizes a V8 .cpuprofile (from BENCH_PROFILE=1 or `node --cpu-prof`): the functions with the most
// self time, and optionally the inclusive time of functions whose name or file matches a filter.
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [top=40] [filter]
import { readFileSync } from 'node:fs';

const [file, topArg, filter] = process.argv.slice(2);
if (!file) { console.error('Usage: node bench/profile-summary.mjs <file.cpuprofile> [top=40] [filter]'); process.exit(2); }
const top = Number(topArg ?? 40);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// self samples per node, from the sample stream (time deltas give each sample's weight)
const selfUs = new Map();
prof.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const label = (n) => {
  const f = n.callFrame;
  const url = f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '~/').replace(/^.*\/work\/main\//, '');
  return `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
};
const selfBy = new Map();
for (const [id, us] of selfUs) { const l = label(byId.get(id)); selfBy.set(l, (selfBy.get(l) ?? 0) + us); }
const busy = [...selfBy].filter(([l]) => l !== '(idle)').reduce((a, [, us]) => a + us, 0);
console.log(`total ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s not idle\n\nself time (% of non-idle):`);
for (const [l, us] of [...selfBy].filter(([l]) => l !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((us / busy) * 100).toFixed(1).padStart(5)}%  ${l}`);
}
if (filter) {
  // inclusive time: a sample counts once for every distinct matching label on its stack
  const incl = new Map();
  for (const [id, us] of selfUs) {
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const l = label(byId.get(n));
      if (!seen.has(l) && l.toLowerCase().includes(filter.toLowerCase())) { seen.add(l); incl.set(l, (incl.get(l) ?? 0) + us); }
    }
  }
  console.log(`\ninclusive time of functions matching "${filter}" (% of non-idle):`);
  for (const [l, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((us / busy) * 100).toFixed(1).padStart(5)}%  ${l}`);
}
