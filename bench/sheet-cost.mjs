// Event-loop cost of the sheet socket's work on a workbook at the cell bound (200,000 cells): parsing stored content,
// one socket edit (applyCellEdit: all of an edit but its database round trips) and one snapshot (read, display,
// message text, as src/transports/ws/sheet.routes.ts makes it). Not a test: figures for docs/benchmarks.md.
// Run after a build: node bin/platform.mjs --build-only && node --expose-gc bench/sheet-cost.mjs
import { performance } from 'node:perf_hooks';

// The built tree to measure: this checkout's, or another's given as the first argument (to compare two versions).
const dist = new URL('dist/areas/documents/', process.argv[2] ? new URL(`file://${process.argv[2].replace(/\/?$/, '/')}`) : new URL('../', import.meta.url));
const model = await import(new URL('sheet-model.js', dist));
const { applyCellEdit } = await import(new URL('sheet-cell-edit.js', dist));
// Absent from builds before the cache (when comparing with an older checkout).
const { WorkbookCache, sharedDisplay } = await import(new URL('workbook-cache.js', dist)).catch(() => ({}));
const readStored = model.parseWorkbook;

const ROWS = 10_000;
const COLS = 20;
/** 200,000 cells in one sheet: numbers and short texts; with `formulas`, that many cells of column T are formulas. */
function workbookText(formulas) {
  const cells = {};
  for (let r = 1; r <= ROWS; r++) {
    for (let c = 0; c < COLS; c++) {
      const ref = `${String.fromCharCode(65 + c)}${r}`;
      cells[ref] = c % 2 ? { v: `item ${r}-${c}` } : { v: r * 100 + c };
    }
    if (r <= formulas) cells[`T${r}`] = { f: r % 100 === 0 ? `=SUM(A${r - 99}:A${r})` : `=A${r}*2+C${r}` };
  }
  return JSON.stringify({ sheets: [{ name: 'Sheet1', cells }] });
}

/** Least and median of `runs` timings of `fn` in ms, after two warm-up calls (on a shared machine the least is the steadiest). */
function time(fn, runs = 15) {
  fn(); fn();
  const ms = [];
  for (let i = 0; i < runs; i++) {
    globalThis.gc?.();
    const t0 = performance.now();
    fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return `min ${ms[0].toFixed(0).padStart(4)} ms, median ${ms[runs >> 1].toFixed(0).padStart(4)} ms`;
}

for (const formulas of [0, 1_000]) {
  const content = workbookText(formulas);
  console.log(`\n200,000 cells, ${formulas} formulas, ${(content.length / 1e6).toFixed(1)} MB`);
  console.log('  JSON.parse          ', time(() => JSON.parse(content)));
  console.log('  parseWorkbook       ', time(() => model.parseWorkbook(content)));
  console.log('  read stored         ', time(() => readStored(content)));
  console.log('  edit (value of B7)  ', time(() => applyCellEdit(content, { sheet: 0, cell: 'B7', value: 42 })));
  console.log('  edit (value of A7)  ', time(() => applyCellEdit(content, { sheet: 0, cell: 'A7', value: 42 })));
  if (WorkbookCache) {
    // An edit after an edit on this node: the parse of the text it wrote is kept (workbook-cache.ts), so only the
    // comparison of the text read with the text kept, the recalculation and the serialization remain.
    const cache = new WorkbookCache();
    let text = content;
    cache.put('k', text, model.parseCountedWorkbook(text));
    let n = 0;
    console.log('  edit after an edit  ', time(() => {
      const { next, counted } = applyCellEdit(text, { sheet: 0, cell: 'B7', value: n++ }, cache.take('k', text));
      cache.put('k', next, counted);
      text = next;
    }));
  }
  console.log('  snapshot            ', time(() => {
    const wb = readStored(content);
    return JSON.stringify({ type: 'snapshot', document_id: 'x', capability: 'write', workbook: wb, display: model.workbookDisplay(wb) });
  }));
  if (WorkbookCache) {
    // Another socket opening on the same stored text: the node's parse and its display are shared (workbook-cache.ts).
    const cache = new WorkbookCache();
    console.log('  snapshot, same text ', time(() => {
      const wb = cache.read('k', content).workbook;
      return JSON.stringify({ type: 'snapshot', document_id: 'x', capability: 'write', workbook: wb, display: sharedDisplay(wb) });
    }));
  }
  const wb = model.parseWorkbook(content);
  console.log('    of which display  ', time(() => model.workbookDisplay(wb)));
  console.log('    JSON.stringify(wb)', time(() => JSON.stringify(wb)));
}
