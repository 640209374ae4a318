import { validation } from '../../core/errors.js';
import { assertContentSize } from './documents.service.js';
import { MAX_CONTENT_BYTES } from './documents.schemas.js';
import { MAX_WORKBOOK_CELLS, evaluateWorkbook, formulaCellRefs, parseCountedWorkbook, type CellValue, type CountedWorkbook, type Workbook } from './sheet-model.js';

export interface CellEdit { sheet: number; cell: string; value?: CellValue; formula?: string | null }

/**
 * One checked socket edit (`e`: its fields already checked by editCell) applied to the stored sheet content: the new
 * content to write and what the `cell` message says. No I/O: this is all the event-loop work of an edit (parse,
 * recalculation, serialization), apart from the database round trips, so it can be measured alone
 * (bench/sheet-cost.mjs). `stored`: the parse of `content`, when the caller has it (workbook-cache.ts); it is changed
 * in place. Returns the new content, its parse (`counted`, the same objects) and the message. Throws what the edit is
 * refused with; then nothing may be written (and `stored` may have been changed).
 */
export function applyCellEdit(content: string, e: CellEdit, stored: CountedWorkbook = parseCountedWorkbook(content)) {
  const { workbook: wb, cells, formulas } = stored;
  const sheet = wb.sheets[e.sheet];
  if (!sheet) throw validation(`Sheet ${e.sheet} does not exist`, { field: 'sheet' });
  // A new cell past the workbook's bound is refused; editing or clearing one is always allowed (and a workbook
  // stored before the bound can shrink).
  const adds = (e.formula || (e.value !== undefined && e.value !== null && e.value !== '')) && !Object.hasOwn(sheet.cells, e.cell);
  if (adds && cells >= MAX_WORKBOOK_CELLS) {
    throw validation(`The workbook holds ${MAX_WORKBOOK_CELLS} cells, its most: clear cells before adding ${e.cell}`, { field: 'cell', reason: 'TOO_MANY_CELLS', limit: MAX_WORKBOOK_CELLS });
  }
  // Whether the workbook has a formula before and after the edit, from the count made while parsing (a walk of every
  // cell to find one cost ~90 ms a time at the cell bound): without one, no recalculation is needed.
  const replacedFormula = Object.hasOwn(sheet.cells, e.cell) && sheet.cells[e.cell].f !== undefined;
  const formulasAfter = formulas - (replacedFormula ? 1 : 0) + (e.formula ? 1 : 0);
  const before = formulaValues(wb, formulas > 0);
  const existed = Object.hasOwn(sheet.cells, e.cell);
  if (e.formula) sheet.cells[e.cell] = { f: e.formula };
  else if (e.value !== undefined && e.value !== null && e.value !== '') sheet.cells[e.cell] = { v: e.value };
  else delete sheet.cells[e.cell];
  // The content limit of a REST write (10 MiB of UTF-8): a sheet the socket grew past it could not be written back.
  // An edit that does not grow the sheet is always allowed, so a sheet already past the limit can be shrunk.
  // (Its bytes are counted only when its length may pass the limit, and the old content's only when they do.)
  const next = JSON.stringify(wb);
  if (next.length * 3 > MAX_CONTENT_BYTES) {
    const bytes = Buffer.byteLength(next);
    if (bytes > MAX_CONTENT_BYTES && bytes > Buffer.byteLength(content)) assertContentSize(next);
  }
  // Only what the edit changed (its cell, and formulas of the sheet whose value moved): sending the whole sheet's
  // displayed values to every socket after each edit made a 60-byte edit megabytes per socket.
  const counted: CountedWorkbook = { workbook: wb, cells: cells - (existed ? 1 : 0) + (Object.hasOwn(sheet.cells, e.cell) ? 1 : 0), formulas: formulasAfter };
  return { next, counted, result: { sheet: e.sheet, cell: e.cell, data: sheet.cells[e.cell] ?? null, ...changedDisplay(wb, e.sheet, e.cell, before, formulaValues(wb, formulasAfter > 0)) } };
}

/**
 * The displayed values of the formula cells of every sheet, by sheet index (the whole workbook's recalculation, as in
 * the snapshot: the same formulas run, see MAX_RECALCULATION_WORK); none is computed for a workbook without formulas
 * (`hasFormulas` false).
 */
function formulaValues(wb: Workbook, hasFormulas: boolean): Array<Map<string, CellValue>> {
  const values = wb.sheets.map(() => new Map<string, CellValue>());
  if (!hasFormulas) return values;
  const formulas = formulaCellRefs(wb);
  const value = evaluateWorkbook(wb, formulas);
  formulas.forEach((refs, i) => { const v = value(i); for (const ref of refs) values[i].set(ref, v(ref)); });
  return values;
}

/**
 * What an edit of `cell` on sheet `sheet` changed on the display (`before` and `after`: formulaValues around the edit). `display`:
 * the cell itself (null when it was cleared) and every formula cell of that sheet whose displayed value is not what it
 * was, by reference. `other_sheets`, only when there are some: formula cells of other sheets whose value changed
 * through the workbook's shared bounds (a formula elsewhere now past, or within, the recalculation budget).
 */
function changedDisplay(wb: Workbook, sheet: number, cell: string, before: Array<Map<string, CellValue>>, after: Array<Map<string, CellValue>>) {
  const changes = (i: number) => {
    const changed: Record<string, CellValue> = {};
    for (const [ref, v] of after[i]) if (!(i === sheet && ref === cell) && before[i].get(ref) !== v) changed[ref] = v;
    return changed;
  };
  const target = wb.sheets[sheet].cells[cell];
  const display: Record<string, CellValue> = { [cell]: target ? (target.f ? after[sheet].get(cell) ?? null : target.v ?? null) : null, ...changes(sheet) };
  const others = wb.sheets.flatMap((_, i) => {
    const d = i === sheet ? {} : changes(i);
    return Object.keys(d).length ? [{ sheet: i, display: d }] : [];
  });
  return { display, ...(others.length ? { other_sheets: others } : {}) };
}
