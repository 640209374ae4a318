import { validation } from '../../core/errors.js';
import { assertStorableText, charLength } from '../../core/text.js';
import { jsonDepthExceeds, mayHoldUnstorable } from '../../core/http/json-parser.js';
import { cellRef, parseRef } from './sheet-ref.js';

/**
 * Spreadsheet content, stored as JSON in the document's `content`:
 * `{"sheets":[{"name":"Sheet1","cells":{"A1":{"v":"Item"},"B2":{"v":3},"B3":{"f":"=SUM(B1:B2)"}}}]}`.
 * A cell has a value `v` (string, number, boolean or null) and/or a formula `f` (text starting with "=").
 */
export type CellValue = string | number | boolean | null;
export interface Cell { v?: CellValue; f?: string }
export interface Sheet { name: string; cells: Record<string, Cell> }
export interface Workbook { sheets: Sheet[] }

export const SHEET_CONTENT_TYPE = 'application/x-sheet';
export const DECK_CONTENT_TYPE = 'application/x-slides';
export const emptyWorkbook = (): Workbook => ({ sheets: [{ name: 'Sheet1', cells: {} }] });
export const emptyDeck = () => ({ slides: [{ id: 's1', title: '', body: '' }] });

export { MAX_COLUMNS, MAX_ROWS, cellRef, colName, parseRef } from './sheet-ref.js';

/**
 * Refuses parsed sheet or deck content holding a NUL or an unpaired surrogate anywhere (keys included): the JSON text
 * may carry them escaped (`\u0000`), which text storage would take, but the REST API refuses them everywhere else and
 * exports could not write them. 400 VALIDATION_ERROR, reason UNSTORABLE_CHARACTER, field `content`, `path` inside it.
 */
const assertStorableModel = (content: string, model: unknown): void => {
  // Walked only when its text may hold one (mayHoldUnstorable): the walk of a 10 MB model costs about a second.
  if (mayHoldUnstorable(content)) assertStorableText(model, { nul: true, within: 'content' });
};

/**
 * Refuses model text nested deeper than `maxDepth` (JSON_MAX_DEPTH, the bound of HTTP bodies, checked the same way)
 * before it is parsed: the model is a string inside the body, so the body's bound never saw its nesting, and the
 * walks of a parsed model (assertStorableModel) recurse: 6,000 levels overflowed the stack, a 500. 400
 * VALIDATION_ERROR, field `content`, reason TOO_DEEP, `limit` the depth.
 */
function assertModelDepth(content: string, maxDepth: number): void {
  if (jsonDepthExceeds(content, maxDepth)) throw validation(`Field "content" nests JSON deeper than ${maxDepth} levels`, { field: 'content', reason: 'TOO_DEEP', limit: maxDepth });
}

/**
 * Most cells a workbook may hold (all its sheets, formulas and values), written through REST or the sheet socket.
 * Every read of a sheet parses its whole model on the event loop (an edit, a snapshot, an export): 500,000 cells
 * (10 MB) took over a second each, 200,000 about a third of that. The xlsx export's bound is the same, so any
 * workbook written since fits it; one stored before the bound is still read, exported and shrunk.
 */
export const MAX_WORKBOOK_CELLS = 200_000;

/**
 * Sheet content as written by a client (REST PUT): the model parseWorkbook checks, nested at most `maxDepth` deep,
 * at most MAX_WORKBOOK_CELLS cells, and only storable text.
 */
export function validateWorkbook(content: string, maxDepth: number): Workbook {
  assertModelDepth(content, maxDepth);
  const { workbook: wb, cells } = parseCountedWorkbook(content);
  if (cells > MAX_WORKBOOK_CELLS) {
    throw validation(`Field "content" holds ${cells} cells; a workbook holds at most ${MAX_WORKBOOK_CELLS}`, { field: 'content', reason: 'TOO_MANY_CELLS', limit: MAX_WORKBOOK_CELLS });
  }
  assertStorableModel(content, wb);
  return wb;
}

/** Parses and checks stored sheet content; a malformed model is a VALIDATION_ERROR. */
export function parseWorkbook(content: string): Workbook {
  return parseCountedWorkbook(content).workbook;
}

/** A checked workbook with the number of its cells and of its formula cells (all sheets). */
export interface CountedWorkbook { workbook: Workbook; cells: number; formulas: number }

/**
 * parseWorkbook, counting the cells and formulas as it checks them, so that a caller needing those counts (an edit)
 * does not walk the cells again: each walk of a 200,000-cell sheet costs tens of milliseconds of the event loop
 * (its keys are enumerated from a hash table), and a walk by Object.entries or Object.values more than twice that.
 */
export function parseCountedWorkbook(content: string): CountedWorkbook {
  let wb: unknown;
  try { wb = content ? JSON.parse(content) : emptyWorkbook(); } catch { throw validation('Sheet content must be JSON', { field: 'content' }); }
  const w = wb as Workbook;
  if (!w || !Array.isArray(w.sheets) || w.sheets.length === 0 || w.sheets.length > 100) throw validation('Sheet content needs 1-100 sheets', { field: 'content' });
  let cells = 0;
  let formulas = 0;
  for (const s of w.sheets) {
    if (!s || typeof s.name !== 'string' || typeof s.cells !== 'object' || s.cells === null) throw validation('Each sheet needs a name and cells', { field: 'content' });
    const refs = Object.keys(s.cells);
    for (let i = 0; i < refs.length; i++) {
      const ref = refs[i];
      const cell = s.cells[ref] as unknown;
      if (!parseRef(ref) || typeof cell !== 'object' || cell === null) throw validation(`Bad cell ${ref}: a cell is an A1 reference inside the grid (A1 to XFD1048576) holding an object`, { field: 'content' });
      const { f, v } = cell as { f?: unknown; v?: unknown };
      if (f !== undefined) {
        if (typeof f !== 'string' || !f.startsWith('=')) throw validation(`Formula of ${ref} must start with =`, { field: 'content' });
        formulas++;
      }
      if (v !== undefined && v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw validation(`Bad value in ${ref}`, { field: 'content' });
    }
    cells += refs.length;
  }
  return { workbook: w, cells, formulas };
}

/**
 * Deck content: `{"slides":[{"id":"s1","title":"Intro","body":"..."}]}`. Other keys of the deck or of a slide
 * (speaker notes, layout) are kept as sent.
 */
export interface Slide { id: string; title: string; body: string }
export interface Deck { slides: Slide[] }
export const MAX_SLIDES = 1000;
export const MAX_SLIDE_ID = 100;
export const MAX_SLIDE_TITLE = 500;

/**
 * Checks deck content a client writes (REST PUT of a deck): JSON, an object with 1-MAX_SLIDES slides, each an object
 * with a unique `id` of 1-100 characters, a `title` of at most 500 characters and a `body` text (bounded by the
 * document content limit only), nested at most `maxDepth` deep, and only storable text. A VALIDATION_ERROR (field `content`) names what is wrong.
 */
export function validateDeck(content: string, maxDepth: number): Deck {
  assertModelDepth(content, maxDepth);
  let deck: unknown;
  try { deck = JSON.parse(content); } catch { throw validation('Deck content must be JSON', { field: 'content' }); }
  if (!deck || typeof deck !== 'object' || Array.isArray(deck)) throw validation('Deck content must be an object {"slides":[...]}', { field: 'content' });
  const slides = (deck as { slides?: unknown }).slides;
  if (!Array.isArray(slides) || slides.length === 0 || slides.length > MAX_SLIDES) throw validation(`Deck content needs 1-${MAX_SLIDES} slides`, { field: 'content' });
  const ids = new Set<string>();
  slides.forEach((slide: unknown, i) => {
    if (!slide || typeof slide !== 'object' || Array.isArray(slide)) throw validation(`Slide ${i} must be an object with id, title and body`, { field: 'content' });
    const { id, title, body } = slide as Record<string, unknown>;
    if (typeof id !== 'string' || id.length === 0 || charLength(id) > MAX_SLIDE_ID) throw validation(`Slide ${i} needs an "id" of 1-${MAX_SLIDE_ID} characters`, { field: 'content' });
    if (ids.has(id)) throw validation(`Slide ${i} repeats the id "${id}"`, { field: 'content' });
    ids.add(id);
    if (typeof title !== 'string' || charLength(title) > MAX_SLIDE_TITLE) throw validation(`Slide ${i} needs a "title" of at most ${MAX_SLIDE_TITLE} characters`, { field: 'content' });
    if (typeof body !== 'string') throw validation(`Slide ${i} needs a "body" text`, { field: 'content' });
  });
  assertStorableModel(content, deck);
  return deck as Deck;
}

type Val = number | string | boolean | null | Val[];

/** Thrown through the evaluation of every formula on or depending on a reference cycle. */
class Cycle extends Error {}
const CYCLE = '#CYCLE!';

/*
 * Bounds on the work of evaluating formulas. Evaluation is synchronous, on the server's event loop (each sheet socket's
 * snapshot, every edit, exports): without them a 1 KB formula of a hundred 100,000-cell ranges stalled every request
 * of every tenant for seconds. A formula past a bound is an error value (#ERROR!), the same in the socket, the
 * snapshot and exports; past the length, cells or work bound it is not evaluated at all. It is stored as sent, like
 * any formula the evaluator cannot read.
 */
/** Characters of one formula, "=" included (Excel's own limit; a socket edit refuses a longer one). */
export const MAX_FORMULA_LENGTH = 8192;
/** Cells one formula reads: 1 per reference, a range's area, summed over the formula with repeats counted. */
export const MAX_FORMULA_CELLS = 100_000;
/**
 * Work of one recalculation of a workbook (all its sheets): each formula costs its length, plus one per single-cell
 * reference, plus one per RANGE_CELLS_PER_UNIT cells its ranges cover (a range reads only the cells the sheet holds
 * and walks the rest, about ten times cheaper per cell than a reference: a running total of 2,000 rows as
 * `=SUM(A1:An)`, two million range cells, fits; each unit is ~0.1-0.2 microseconds of the event loop). Formulas are taken sheet by sheet, each sheet's in the order its content lists them: one whose cost fits in what
 * is left runs, one whose cost does not is #ERROR!. So which formulas run depends on the workbook only, not on which
 * cell or sheet is asked first.
 */
export const MAX_RECALCULATION_WORK = 250_000;
export const RANGE_CELLS_PER_UNIT = 10;
/**
 * Longest text a formula reads or makes (Excel's limit for a cell): comparing or joining longer text, or a result
 * longer than this, is an error.
 */
export const MAX_FORMULA_TEXT = 32_767;
/**
 * Text all formulas of a workbook show together (their results, in the order above): past it, a formula whose value
 * is text shows #ERROR!. `=A1` in thousands of cells would otherwise copy A1's text into every snapshot and export
 * once per formula, gigabytes from a few kilobytes. About the content limit (10 MiB). Only what is shown: a formula
 * reading such a cell gets its text.
 */
export const MAX_SHOWN_FORMULA_TEXT = 10_000_000;
/** Cells one range may cover. */
const MAX_RANGE_CELLS = 100_000;
/** Longest text read as a number (`="  7"+1`): no number needs more, and converting longer text costs its length. */
const MAX_NUMBER_TEXT = 255;

/**
 * Cells a formula's single-cell references and its ranges cover, repeats counted (a reference outside the grid is an
 * error before it reads).
 */
function referencedCells(formula: string): { single: number; inRanges: number } {
  const cells = { single: 0, inRanges: 0 };
  for (const tok of formula.match(FORMULA_TOKENS) ?? []) {
    if (!/^[A-Z]{1,3}[0-9]+(:|$)/.test(tok)) continue;
    const [a, b] = tok.split(':').map(parseRef);
    if (!a || b === null) continue;
    if (b) cells.inRanges += (Math.abs(b.row - a.row) + 1) * (Math.abs(b.col - a.col) + 1);
    else cells.single++;
  }
  return cells;
}

/**
 * Per sheet of the workbook, the references of its formula cells in the order of its cells (the order formulas are
 * taken in: see MAX_RECALCULATION_WORK). Found once and handed on: each walk of a 200,000-cell sheet costs tens of
 * milliseconds of the event loop.
 */
export function formulaCellRefs(wb: Workbook): string[][] {
  return wb.sheets.map((sheet) => {
    const refs: string[] = [];
    for (const ref of Object.keys(sheet.cells)) if (sheet.cells[ref].f) refs.push(ref);
    return refs;
  });
}

/**
 * Per sheet of the workbook, the references of the formulas within the bounds above (see MAX_RECALCULATION_WORK), of
 * its formula cells `formulas` (formulaCellRefs).
 */
function admittedFormulas(wb: Workbook, formulas: string[][]): Array<Set<string>> {
  let left = MAX_RECALCULATION_WORK;
  return wb.sheets.map((sheet, i) => {
    const admitted = new Set<string>();
    for (const ref of formulas[i]) {
      const f = sheet.cells[ref].f;
      if (!f || f.length > MAX_FORMULA_LENGTH || f.length > left) continue;
      // Its length is charged even when it is refused below: counting its cells reads all of it.
      left -= f.length;
      const { single, inRanges } = referencedCells(f);
      const cost = single + Math.ceil(inRanges / RANGE_CELLS_PER_UNIT);
      if (single + inRanges > MAX_FORMULA_CELLS || cost > left) continue;
      left -= cost;
      admitted.add(ref);
    }
    return admitted;
  });
}

/**
 * The values of a workbook's formulas, within the bounds above: a value function per sheet, by index. Every formula
 * that runs is evaluated here, in the order it was admitted, so the text they show is counted in that order too
 * (MAX_SHOWN_FORMULA_TEXT); the work is bounded by MAX_RECALCULATION_WORK whichever sheet is then asked for.
 * `formulas`: formulaCellRefs(wb), when the caller has them.
 */
export function evaluateWorkbook(wb: Workbook, formulas: string[][] = formulaCellRefs(wb)): (sheet: number) => (ref: string) => CellValue {
  const admitted = admittedFormulas(wb, formulas);
  const values = wb.sheets.map((sheet, i) => evaluateSheet(sheet, admitted[i]));
  let left = MAX_SHOWN_FORMULA_TEXT;
  const hidden = admitted.map((refs, i) => {
    const over = new Set<string>();
    for (const ref of refs) {
      const v = values[i](ref);
      if (typeof v !== 'string') continue;
      if (v.length > left) over.add(ref); else left -= v.length;
    }
    return over;
  });
  return (i) => (ref) => (hidden[i].has(ref) ? '#ERROR!' : values[i](ref));
}

/**
 * The displayed values of every sheet of a workbook (a socket snapshot's `display`), by reference in the order of its
 * cells, from one recalculation. A value cell shows its value, as the recalculation would answer for it: only formula
 * cells are asked for theirs, and a workbook without formulas is not recalculated at all (asking for each of 200,000
 * value cells cost ~0.1 s of the event loop per snapshot).
 */
export function workbookDisplay(wb: Workbook): Array<Record<string, CellValue>> {
  const formulaRefs: string[][] = [];
  const shown = wb.sheets.map((sheet, i) => {
    const out: Record<string, CellValue> = {};
    const refs: string[] = (formulaRefs[i] = []);
    for (const ref of Object.keys(sheet.cells)) {
      const cell = sheet.cells[ref];
      // A formula's place is taken now (null), so the keys keep the order of the sheet's cells; its value comes below.
      if (cell.f) { out[ref] = null; refs.push(ref); } else out[ref] = cell.v ?? null;
    }
    return out;
  });
  if (formulaRefs.every((refs) => refs.length === 0)) return shown;
  const value = evaluateWorkbook(wb, formulaRefs);
  formulaRefs.forEach((refs, i) => { const v = value(i); for (const ref of refs) shown[i][ref] = v(ref); });
  return shown;
}

/**
 * Evaluates formulas: numbers, strings, cell references and ranges, + - * / ^ &, comparison, parentheses,
 * and SUM, AVERAGE, MIN, MAX, COUNT, IF, ROUND, ABS, CONCAT. Errors show as "#ERROR!", cycles as "#CYCLE!":
 * a cell on a cycle (itself, `=C2+1` in C2, or through others) and every formula that reads one show "#CYCLE!"
 * (the cycle propagates like an error value, whatever the operator), the same whichever cell is asked first.
 * The sheet is evaluated as a workbook of its own, within the bounds above (see evaluateWorkbook).
 */
export function evaluate(sheet: Sheet): (ref: string) => CellValue {
  return evaluateWorkbook({ sheets: [sheet] })(0);
}

/** evaluate(), running only the formulas `admitted` names: the others are past a bound, #ERROR! (see admittedFormulas). */
function evaluateSheet(sheet: Sheet, admitted: Set<string>): (ref: string) => CellValue {
  const cache = new Map<string, CellValue>();
  const cyclic = new Set<string>();
  const active = new Set<string>();
  // Formula cells whose value is an error: a formula reading one is an error too, as in a spreadsheet program (a
  // SUM over it would otherwise skip it as text and show a plausible wrong total). Text typed as "#ERROR!" is text.
  const failed = new Set<string>();
  const operand = (ref: string): CellValue => { const v = read(ref); if (failed.has(ref)) throw new Error('error value'); return v; };
  // The value a formula reads; throws Cycle when the cell is on, or depends on, a cycle.
  const read = (ref: string): CellValue => {
    // A value first: a range reads many cells, and only formulas are ever cyclic or cached.
    const cell = sheet.cells[ref];
    if (!cell) return null;
    if (!cell.f) return cell.v ?? null;
    if (cyclic.has(ref)) throw new Cycle();
    if (cache.has(ref)) return cache.get(ref)!;
    if (active.has(ref)) throw new Cycle();
    active.add(ref);
    let out: CellValue;
    try {
      if (!admitted.has(ref)) throw new Error('past a bound');
      const r = new Parser(cell.f.slice(1), operand, rangeValues).run();
      out = Array.isArray(r) ? (flatten(r)[0] ?? null) as CellValue : r;
      if (typeof out === 'string' && out.length > MAX_FORMULA_TEXT) throw new Error('text too long');
      // An overflow (=1e308*10) is an error like =0/0: no export format or JSON answer can carry an infinity.
      if (typeof out === 'number' && !Number.isFinite(out)) throw new Error('overflow');
    } catch (err) {
      if (err instanceof Cycle) { cyclic.add(ref); throw err; }
      out = '#ERROR!';
      failed.add(ref);
    } finally {
      active.delete(ref);
    }
    cache.set(ref, out);
    return out;
  };
  // A range's values in row-major order (null where no cell is), reading only the cells the sheet has: a column index
  // made on the first range, so a range costs a walk of its area and a read of each cell it holds, not a reference
  // built and looked up for every cell of its area.
  let columns: Map<number, ColumnCells> | undefined;
  const rangeValues = (a: { col: number; row: number }, b: { col: number; row: number }): Val[] => {
    columns ??= columnIndex(sheet);
    const [r1, r2, c1, c2] = [Math.min(a.row, b.row), Math.max(a.row, b.row), Math.min(a.col, b.col), Math.max(a.col, b.col)];
    const width = c2 - c1 + 1;
    const out: Val[] = new Array((r2 - r1 + 1) * width).fill(null);
    // Per column of the range, its cells from r1 on; walked row by row, as a spreadsheet reads a range.
    const cursors: Array<{ column: ColumnCells; at: number } | undefined> = [];
    for (let c = c1; c <= c2; c++) {
      const column = columns.get(c);
      cursors.push(column && { column, at: firstAtOrAfter(column.rows, r1) });
    }
    for (let r = r1; r <= r2; r++) {
      for (let i = 0; i < width; i++) {
        const cur = cursors[i];
        if (!cur || cur.column.rows[cur.at] !== r) continue;
        const cell = cur.column.cells[cur.at];
        const ref = cur.column.refs[cur.at++];
        out[(r - r1) * width + i] = cell.f ? operand(ref) : cell.v ?? null;
      }
    }
    return out;
  };
  // Before a formula is read, the formulas it depends on are read in dependency order from an explicit stack, so
  // read() finds them cached and recurses one formula deep, not once per link of a chain: a running total listed
  // bottom-up (A1000 =A999+1, ..., asked first) would otherwise pass the stack's depth (~800 links) and show #ERROR!.
  // Only a cycle still recurses, over its own cells.
  const settled = (ref: string) => !sheet.cells[ref]?.f || cache.has(ref) || cyclic.has(ref);
  const settle = (root: string) => {
    const entered = new Set<string>();
    const stack: Array<[ref: string, depsDone: boolean]> = [[root, false]];
    while (stack.length > 0) {
      const [ref, depsDone] = stack.pop()!;
      if (settled(ref)) continue;
      if (depsDone) {
        try { read(ref); } catch (err) { if (!(err instanceof Cycle)) throw err; }
        continue;
      }
      if (entered.has(ref)) continue; // on a cycle, or reached again before it was read: read() takes it from here
      entered.add(ref);
      stack.push([ref, true]);
      // A formula past a bound reads nothing (read() gives #ERROR! at once).
      if (admitted.has(ref)) for (const dep of referencedFormulaCells((columns ??= columnIndex(sheet)), sheet.cells[ref].f!)) if (!settled(dep) && !entered.has(dep)) stack.push([dep, false]);
    }
  };
  return (ref) => {
    try { settle(ref); return read(ref); } catch (err) { if (err instanceof Cycle) return CYCLE; throw err; }
  };
}

/** One column's cells: rows ascending (zero-based), with their references and cells. */
interface ColumnCells { rows: number[]; refs: string[]; cells: Cell[] }

/**
 * The sheet's cells by column (zero-based). Built once per recalculation of a sheet holding a range or a formula: its
 * columns are gathered as arrays, not as a pair per cell, and sorted only when their rows do not already come in order
 * (a sheet written row by row lists each column's rows ascending), since at 200,000 cells this ran on the event loop
 * for tens of milliseconds.
 */
function columnIndex(sheet: Sheet): Map<number, ColumnCells> {
  const byColumn = new Map<number, { rows: number[]; refs: string[] }>();
  for (const ref of Object.keys(sheet.cells)) {
    const p = parseRef(ref);
    if (!p) continue;
    let column = byColumn.get(p.col);
    if (!column) byColumn.set(p.col, (column = { rows: [], refs: [] }));
    column.rows.push(p.row);
    column.refs.push(ref);
  }
  const index = new Map<number, ColumnCells>();
  for (const [col, { rows, refs }] of byColumn) {
    let ascending = true;
    for (let i = 1; i < rows.length && ascending; i++) ascending = rows[i - 1] < rows[i];
    if (ascending) {
      index.set(col, { rows, refs, cells: refs.map((ref) => sheet.cells[ref]) });
      continue;
    }
    // A column's rows are distinct (one reference per cell), so the order by row is the only one.
    const order = rows.map((_, i) => i).sort((x, y) => rows[x] - rows[y]);
    index.set(col, { rows: order.map((i) => rows[i]), refs: order.map((i) => refs[i]), cells: order.map((i) => sheet.cells[refs[i]]) });
  }
  return index;
}

/** The first position in ascending `rows` whose row is at least `row` (rows.length if none). */
function firstAtOrAfter(rows: number[], row: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < row) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** The formula cells a formula refers to, alone or in a range (a range past the evaluator's size reads nothing). */
function referencedFormulaCells(columns: Map<number, ColumnCells>, formula: string): string[] {
  const out: string[] = [];
  for (const tok of formula.match(FORMULA_TOKENS) ?? []) {
    if (!/^[A-Z]{1,3}[0-9]+(:|$)/.test(tok)) continue;
    const [a, b = a] = tok.split(':').map(parseRef);
    if (!a || !b || (Math.abs(b.row - a.row) + 1) * (Math.abs(b.col - a.col) + 1) > MAX_RANGE_CELLS) continue;
    const [r1, r2] = [Math.min(a.row, b.row), Math.max(a.row, b.row)];
    for (let c = Math.min(a.col, b.col); c <= Math.max(a.col, b.col); c++) {
      const column = columns.get(c);
      if (!column) continue;
      for (let i = firstAtOrAfter(column.rows, r1); i < column.rows.length && column.rows[i] <= r2; i++) if (column.cells[i].f) out.push(column.refs[i]);
    }
  }
  return out;
}

const notANumber = (): never => { throw new Error('not a number'); };
const num = (v: Val): number => {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return Number(v);
  if (v === null || v === '') return 0;
  // A range read as one number is its text: one cell's (a boolean's "TRUE" is none); two or more join with commas, never
  // a number, so that text is not built.
  if (Array.isArray(v)) return v.length > 1 ? notANumber() : v.length ? num(typeof v[0] === 'boolean' ? String(v[0]) : v[0]) : 0;
  if (v.length > MAX_NUMBER_TEXT) return notANumber();
  const n = Number(v);
  return Number.isFinite(n) ? n : notANumber();
};
/** A value as text (a range: its cells joined by commas); an error past MAX_FORMULA_TEXT, checked before it is built. */
const text = (v: Val): string => {
  const length = Array.isArray(v) ? v.reduce<number>((n, x) => n + (x === null ? 0 : String(x).length), Math.max(v.length - 1, 0)) : v === null ? 0 : String(v).length;
  if (length > MAX_FORMULA_TEXT) throw new Error('text too long');
  return v === null ? '' : String(v);
};
const flatten = (v: Val[]): Val[] => {
  const out: Val[] = [];
  const walk = (a: Val[]) => { for (const x of a) if (Array.isArray(x)) walk(x); else out.push(x); };
  walk(v);
  return out;
};
/**
 * Count, sum, least and greatest of the numbers among the arguments (ranges included; text, booleans and empty cells
 * are skipped), in one walk: no copy of a 100,000-cell range, and no spread of it into Math.min's arguments, which
 * passes the stack's limit on argument count.
 */
function numberStats(args: Val[]): { count: number; sum: number; min: number; max: number } {
  const stats = { count: 0, sum: 0, min: Infinity, max: -Infinity };
  const walk = (a: Val[]) => {
    for (const v of a) {
      if (Array.isArray(v)) walk(v);
      else if (typeof v === 'number') {
        stats.count++; stats.sum += v;
        if (v < stats.min) stats.min = v;
        if (v > stats.max) stats.max = v;
      }
    }
  };
  walk(args);
  return stats;
}

/** A formula's tokens: strings, cell references and ranges, function names, numbers, operators. */
const FORMULA_TOKENS = /"(?:[^"]|"")*"|[A-Z]{1,3}[0-9]+(?::[A-Z]{1,3}[0-9]+)?|[A-Za-z_]+(?=\()|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|<=|>=|<>|[-+*/^&(),:=<>]|TRUE|FALSE/g;

/**
 * The formula with its references moved up by one row, as a spreadsheet program rewrites them when the first row is
 * deleted (an export without the header row): a reference to row 1 becomes #REF!, a range that starts there keeps
 * the rows that remain, and text in quotes is left alone.
 */
export function formulaWithoutFirstRow(formula: string): string {
  const up = (ref: string) => { const p = parseRef(ref); return p ? { col: p.col, row: p.row - 1 } : null; };
  const name = (p: { col: number; row: number }) => cellRef(p.col, p.row);
  return formula.replace(FORMULA_TOKENS, (tok) => {
    if (!/^[A-Z]{1,3}[0-9]+(:|$)/.test(tok)) return tok;
    const [a, b] = tok.split(':').map(up);
    if (!a || (b === null)) return tok; // not a reference inside the grid: the formula shows an error either way
    if (b === undefined) return a.row < 0 ? '#REF!' : name(a);
    if (a.row < 0 && b.row < 0) return '#REF!';
    return `${name({ col: a.col, row: Math.max(a.row, 0) })}:${name({ col: b.col, row: Math.max(b.row, 0) })}`;
  });
}

/**
 * The formula as an xlsx file stores it: functions Excel added after 2007 carry the `_xlfn.` prefix in the file
 * (without it Excel reads an unknown name and shows #NAME? once it recalculates). Of ours, only CONCAT.
 */
export function xlsxFormula(formula: string): string {
  return formula.replace(FORMULA_TOKENS, (tok) => (/^concat$/i.test(tok) ? `_xlfn.${tok}` : tok));
}

/** The functions of the formula language (what call() evaluates), by upper-case name. */
const FUNCTIONS = new Set(['SUM', 'AVERAGE', 'MIN', 'MAX', 'COUNT', 'IF', 'ROUND', 'ABS', 'CONCAT']);

/**
 * Whether a formula is written in the platform's formula language: the grammar Parser evaluates, with references
 * inside the grid, known functions only and at most MAX_FORMULA_LENGTH characters. Checked without evaluating it, so
 * `=1/0` is a formula (its value is an error) and `=cmd|' /C calc'!A0` (a DDE payload) or `=HYPERLINK(...)` is not.
 * An xlsx export writes only such formulas as formulas: any other text after "=" would run in the spreadsheet program
 * of whoever opens the file, as the CSV injection rule says of text.
 */
export function isSheetFormula(formula: string): boolean {
  if (!formula.startsWith('=') || formula.length > MAX_FORMULA_LENGTH) return false;
  const src = formula.slice(1);
  const toks = src.match(FORMULA_TOKENS) ?? [];
  if (toks.join('').replace(/\s/g, '') !== src.replace(/\s/g, '')) return false;
  let i = 0;
  // Each returns whether what follows is that part of the grammar, as the Parser method of the same name reads it.
  const ops = (part: () => boolean, operators: string[]) => () => {
    if (!part()) return false;
    while (operators.includes(toks[i])) { i++; if (!part()) return false; }
    return true;
  };
  const atom = (): boolean => {
    const t = toks[i++];
    if (t === undefined) return false;
    if (t === '(') return cmp() && toks[i++] === ')';
    if (t === 'TRUE' || t === 'FALSE' || /^\d/.test(t) || t.startsWith('"')) return true;
    if (/^[A-Z]{1,3}[0-9]+(:|$)/.test(t)) return t.split(':').every((ref) => parseRef(ref) !== null);
    if (/^[A-Za-z_]+$/.test(t) && toks[i] === '(' && FUNCTIONS.has(t.toUpperCase())) {
      i++;
      if (toks[i] !== ')') { do { if (!cmp()) return false; } while (toks[i] === ',' && ++i); }
      return toks[i++] === ')';
    }
    return false;
  };
  const unary = (): boolean => (toks[i] === '-' || toks[i] === '+' ? (i++, unary()) : atom());
  const pow = ops(unary, ['^']);
  const mul = ops(pow, ['*', '/']);
  const add = ops(mul, ['+', '-']);
  const concat = ops(add, ['&']);
  const cmp: () => boolean = ops(concat, ['=', '<>', '<', '>', '<=', '>=']);
  try { return cmp() && i === toks.length; } catch { return false; } // nesting too deep for the stack: not one we evaluate either
}

class Parser {
  private i = 0;
  private toks: string[];
  constructor(src: string, private readonly cell: (ref: string) => CellValue,
    private readonly rangeValues: (a: { col: number; row: number }, b: { col: number; row: number }) => Val[]) {
    this.toks = src.match(FORMULA_TOKENS) ?? [];
    if (this.toks.join('').replace(/\s/g, '') !== src.replace(/\s/g, '')) throw new Error('bad token');
  }
  run(): Val { const v = this.cmp(); if (this.i !== this.toks.length) throw new Error('trailing'); return v; }
  private peek() { return this.toks[this.i]; }
  private cmp(): Val {
    let l = this.concat();
    while (['=', '<>', '<', '>', '<=', '>='].includes(this.peek())) {
      const op = this.toks[this.i++]; const r = this.concat();
      const a = typeof l === 'number' || typeof r === 'number' ? num(l) : text(l); const b = typeof l === 'number' || typeof r === 'number' ? num(r) : text(r);
      l = op === '=' ? a === b : op === '<>' ? a !== b : op === '<' ? a < b : op === '>' ? a > b : op === '<=' ? a <= b : a >= b;
    }
    return l;
  }
  private concat(): Val { let l = this.add(); while (this.peek() === '&') { this.i++; l = text(text(l) + text(this.add())); } return l; }
  private add(): Val { let l = this.mul(); while (this.peek() === '+' || this.peek() === '-') { const op = this.toks[this.i++]; const r = this.mul(); l = op === '+' ? num(l) + num(r) : num(l) - num(r); } return l; }
  private mul(): Val {
    let l = this.pow();
    while (this.peek() === '*' || this.peek() === '/') {
      const op = this.toks[this.i++]; const r = this.pow();
      if (op === '/' && num(r) === 0) throw new Error('div0');
      l = op === '*' ? num(l) * num(r) : num(l) / num(r);
    }
    return l;
  }
  private pow(): Val { let l = this.unary(); while (this.peek() === '^') { this.i++; l = num(l) ** num(this.unary()); } return l; }
  private unary(): Val { if (this.peek() === '-') { this.i++; return -num(this.unary()); } if (this.peek() === '+') { this.i++; return num(this.unary()); } return this.atom(); }
  private atom(): Val {
    const t = this.toks[this.i++];
    if (t === undefined) throw new Error('end');
    if (t === '(') { const v = this.cmp(); if (this.toks[this.i++] !== ')') throw new Error(')'); return v; }
    if (t === 'TRUE' || t === 'FALSE') return t === 'TRUE';
    if (/^\d/.test(t)) return Number(t);
    if (t.startsWith('"')) return t.slice(1, -1).replace(/""/g, '"');
    if (/^[A-Z]{1,3}[0-9]+:/.test(t)) return this.range(t);
    if (/^[A-Z]{1,3}[0-9]+$/.test(t)) { if (!parseRef(t)) throw new Error('ref'); return this.cell(t); }
    if (/^[A-Za-z_]+$/.test(t) && this.peek() === '(') {
      this.i++;
      const args: Val[] = [];
      if (this.peek() !== ')') { do { args.push(this.cmp()); } while (this.peek() === ',' && ++this.i); }
      if (this.toks[this.i++] !== ')') throw new Error(')');
      return call(t.toUpperCase(), args);
    }
    throw new Error(`unexpected ${t}`);
  }
  private range(t: string): Val[] {
    const [a, b] = t.split(':').map(parseRef);
    // Cells in the range, both ends included (a single row or column counts too).
    if (!a || !b || (Math.abs(b.row - a.row) + 1) * (Math.abs(b.col - a.col) + 1) > MAX_RANGE_CELLS) throw new Error('range');
    return this.rangeValues(a, b);
  }
}

function call(fn: string, args: Val[]): Val {
  switch (fn) {
    case 'SUM': return numberStats(args).sum;
    case 'AVERAGE': { const n = numberStats(args); if (!n.count) throw new Error('div0'); return n.sum / n.count; }
    case 'MIN': { const n = numberStats(args); return n.count ? n.min : 0; }
    case 'MAX': { const n = numberStats(args); return n.count ? n.max : 0; }
    case 'COUNT': return numberStats(args).count;
    case 'IF': return args[0] ? (args[1] ?? true) : (args[2] ?? false);
    case 'ROUND': { const f = 10 ** num(args[1] ?? 0); return Math.round(num(args[0]) * f) / f; }
    case 'ABS': return Math.abs(num(args[0]));
    case 'CONCAT': {
      const parts = flatten(args).map(text);
      if (parts.reduce((n, p) => n + p.length, 0) > MAX_FORMULA_TEXT) throw new Error('text too long');
      return parts.join('');
    }
    default: throw new Error(`unknown function ${fn}`);
  }
}

/** The used rectangle of a sheet as rows of cells (raw: formula text for formula cells; displayed: computed values). */
/** Rows × columns of the rectangle from A1 to the sheet's last used row and column (what an export writes). */
export function gridSize(sheet: Sheet): number {
  let maxRow = -1; let maxCol = -1;
  for (const ref of Object.keys(sheet.cells)) { const p = parseRef(ref); if (p) { maxRow = Math.max(maxRow, p.row); maxCol = Math.max(maxCol, p.col); } }
  return (maxRow + 1) * (maxCol + 1);
}

export function sheetRows(sheet: Sheet, mode: 'raw' | 'displayed', value: (ref: string) => CellValue = evaluate(sheet)): CellValue[][] {
  let maxRow = -1; let maxCol = -1;
  for (const ref of Object.keys(sheet.cells)) { const p = parseRef(ref)!; maxRow = Math.max(maxRow, p.row); maxCol = Math.max(maxCol, p.col); }
  const rows: CellValue[][] = [];
  for (let r = 0; r <= maxRow; r++) {
    const row: CellValue[] = [];
    for (let c = 0; c <= maxCol; c++) {
      const ref = cellRef(c, r);
      const cell = sheet.cells[ref];
      row.push(mode === 'raw' ? (cell?.f ?? cell?.v ?? null) : value(ref));
    }
    rows.push(row);
  }
  return rows;
}
