import { requireProject } from '../projects/project-access.js';
import { principalFromQueryToken } from '../../core/auth/query-session.js';
import ExcelJS from 'exceljs';
import { PassThrough } from 'node:stream';
import type { ServiceContext } from '../../core/context.js';
import { AppError, conflict, notFound, validation } from '../../core/errors.js';
import { audit } from '../../core/audit.js';
import { enqueue } from '../../core/jobs.js';
import { uuidv7 } from '../../core/ids.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { charLength, nonBlankText, safeFilename } from '../../core/text.js';
import { checkNeeds } from '../../core/http/guard.js';
import * as repo from './documents.repo.js';
import { INDEX_JOB, docAccess, moderate, rejectNul, toDocument } from './documents.service.js';
import { DECK_CONTENT_TYPE, MAX_WORKBOOK_CELLS, SHEET_CONTENT_TYPE, emptyDeck, emptyWorkbook, evaluateWorkbook, formulaWithoutFirstRow, gridSize, isSheetFormula, parseRef, parseWorkbook, sheetRows, xlsxFormula, type Cell, type CellValue, type Workbook } from './sheet-model.js';

export type GridKind = 'sheet' | 'deck';

/**
 * POST /v1/projects/{projectId}/sheets and /slides: a new spreadsheet or deck in the project, empty or
 * a copy of `fromTemplateId` (a sheet or deck of the same kind in the organization). Names are unique
 * per project and kind, case-insensitively (409 CONFLICT).
 */
export async function createGridDocument(ctx: ServiceContext, input: { projectId: string; kind: GridKind; name: string; fromTemplateId?: string }) {
  const p = docAccess(ctx, 'document.create');
  rejectNul(input.name, 'name');
  const name = nonBlankText(input.name, 'name');
  if (charLength(name) > 500) throw validation('Field "name" must be 1-500 characters after trimming', { field: 'name' });
  await moderate(ctx, [name]);
  const id = uuidv7();
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await requireProject(sql, p.orgId, input.projectId, { writable: true });
    let content = JSON.stringify(input.kind === 'sheet' ? emptyWorkbook() : emptyDeck());
    if (input.fromTemplateId) {
      const tpl = await repo.getDocument(sql, p.orgId, input.fromTemplateId);
      if (!tpl || tpl.kind !== input.kind) throw notFound('Template', { field: 'fromTemplateId' });
      content = tpl.content;
    }
    let r: repo.DocumentRow;
    try {
      r = await repo.insertDocument(sql, p.orgId, { id, kind: input.kind, projectId: input.projectId, parentId: null, title: name, content,
        contentType: input.kind === 'sheet' ? SHEET_CONTENT_TYPE : DECK_CONTENT_TYPE, tags: [], metadata: {}, language: 'simple', createdBy: p.userId });
    } catch (err) {
      if (isUniqueViolation(err, 'documents_project_kind_name')) throw conflict(`A ${input.kind === 'sheet' ? 'spreadsheet' : 'deck'} named "${name}" already exists in this project`, { code: 'NAME_EXISTS', field: 'name' });
      throw err;
    }
    await enqueue(sql, { orgId: p.orgId, kind: INDEX_JOB, payload: { id }, dedupeKey: id });
    await audit(sql, ctx, { action: `${input.kind}.created`, targetType: 'document', targetId: id, details: { project_id: input.projectId, from_template_id: input.fromTemplateId ?? null } });
    return r;
  });
  ctx.platform.jobs.poke();
  return { document: toDocument(row) };
}

export interface ExportInput {
  documentId: string; token?: string; format?: string; sheet_id?: string; header_row?: string; value_mode?: string; filename?: string;
}
/**
 * Largest rectangle (rows × columns up to the last used cell) a csv or tsv export writes: those formats hold every
 * cell of it, empty ones included. An xlsx holds only the cells used: MAX_XLSX_EXPORT_CELLS bounds those.
 */
export const MAX_EXPORT_CELLS = 500_000;
/**
 * Most cells (used ones, of all the sheets exported) an xlsx export writes: a workbook's bound, so only one stored
 * before that bound can pass it. Streamed, 500,000 cells took ~3.3 s and ~180 MB, with the event loop held up to
 * ~1.5 s (reading the 10 MB model, recalculating, ordering the cells); 200,000 take ~1.4 s, ~0.6 s at most at once.
 */
export const MAX_XLSX_EXPORT_CELLS = MAX_WORKBOOK_CELLS;
const EXPORT_PARAMS = ['format', 'sheet_id', 'header_row', 'value_mode', 'filename'] as const;

export const EXPORT_MEDIA_TYPES = { xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', csv: 'text/csv; charset=utf-8', tsv: 'text/tab-separated-values; charset=utf-8' } as const;

/**
 * Text an export writes: a NUL character (content stored before sheets refused it) becomes U+FFFD, the replacement
 * character, so no export holds a NUL byte (CSV readers stop or fail at one; XML cannot hold it); so do the
 * non-characters U+FFFE and U+FFFF (XML cannot hold them either: the xlsx would not be well-formed) and an unpaired
 * surrogate (what UTF-8 encoding writes for it anyway).
 */
export const exportText = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed().replace(/[\u0000\uFFFE\uFFFF]/g, '\uFFFD');

/** CSV/TSV cells that a spreadsheet program would run as a formula get a leading apostrophe (OWASP CSV injection). */
export function safeText(v: CellValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const text = exportText(v);
  return /^[=+\-@\t\r|]/.test(text) ? `'${text}` : text;
}

function delimited(rows: CellValue[][], sep: ',' | '\t'): string {
  const quote = (s: string) => (sep === ',' ? (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s) : s.replace(/[\t\r\n]/g, ' '));
  return rows.map((r) => r.map((v) => quote(safeText(v))).join(sep)).join('\r\n') + '\r\n';
}

/**
 * GET /v1/sheet/{documentId}/export. The session JWT in `token` authenticates (API keys are refused;
 * a revoked session or bumped token version fails); the caller needs document.view.
 */
export async function exportSheet(ctx: ServiceContext, q: ExportInput): Promise<{ body: Buffer; contentType: string; filename: string }> {
  const principal = await principalFromQueryToken(ctx.platform.credentials, q.token, 'Export');
  try { checkNeeds({ feature: 'documents' }, principal); } catch (err) { if ((err as AppError).code === 'FEATURE_DISABLED') throw new AppError('PERMISSION_DENIED', (err as AppError).message, { feature: 'documents' }); throw err; }
  if (!principal.permissions.has('document.view')) throw new AppError('PERMISSION_DENIED', 'This export needs the "document.view" permission', { permission: 'document.view' });
  ctx.principal = principal;

  for (const k of EXPORT_PARAMS) if (q[k] !== undefined && typeof q[k] !== 'string') throw validation(`Query parameter "${k}" must be given once`, { field: k });
  const format = q.format as keyof typeof EXPORT_MEDIA_TYPES | undefined;
  if (!format || !Object.hasOwn(EXPORT_MEDIA_TYPES, format)) throw validation('Query parameter "format" must be xlsx, csv or tsv', { field: 'format' });
  const mode = q.value_mode ?? 'displayed';
  if (mode !== 'displayed' && mode !== 'raw') throw validation('Query parameter "value_mode" must be displayed or raw', { field: 'value_mode' });
  if (q.header_row !== undefined && q.header_row !== 'true' && q.header_row !== 'false') throw validation('Query parameter "header_row" must be true or false', { field: 'header_row' });
  const headerRow = q.header_row !== 'false';
  if (q.filename !== undefined && (q.filename.length < 1 || charLength(q.filename) > 200)) throw validation('Query parameter "filename" must be 1-200 characters', { field: 'filename' });
  let sheetId: number | null = null;
  if (q.sheet_id !== undefined) {
    if (!/^\d{1,4}$/.test(q.sheet_id)) throw validation('Query parameter "sheet_id" must be a zero-based sheet index', { field: 'sheet_id' });
    sheetId = Number(q.sheet_id);
  }
  if (format !== 'xlsx' && sheetId === null) throw validation(`Query parameter "sheet_id" is required for ${format}`, { field: 'sheet_id' });

  const row = await ctx.platform.db.tenant(principal.orgId, (sql) => repo.getDocument(sql, principal.orgId, q.documentId));
  if (!row || row.kind !== 'sheet') throw notFound('Spreadsheet');
  const wb = parseWorkbook(row.content);
  if (sheetId !== null && sheetId >= wb.sheets.length) throw validation(`sheet_id ${sheetId} is out of range (the workbook has ${wb.sheets.length} sheet${wb.sheets.length === 1 ? '' : 's'}; sheet_id counts from 0)`, { field: 'sheet_id' });
  const chosen = sheetId === null ? wb.sheets.map((_, i) => i) : [sheetId];
  // csv and tsv write the dense rectangle up to the last used cell: one far-away cell (XFD1048576) would build
  // billions of cells and exhaust the server's memory. The sheet may still be exported as xlsx.
  const cells = format === 'xlsx' ? 0 : gridSize(wb.sheets[chosen[0]]);
  if (cells > MAX_EXPORT_CELLS) {
    throw validation(`As ${format}, this sheet would span ${cells} cells (rows × columns up to the last used cell, empty ones included); the limit is ${MAX_EXPORT_CELLS}: export it as xlsx, which holds only the cells used`,
      { field: 'sheet_id', reason: 'EXPORT_TOO_LARGE', limit: MAX_EXPORT_CELLS });
  }
  const used = format === 'xlsx' ? chosen.reduce((n, i) => n + Object.keys(wb.sheets[i].cells).length, 0) : 0;
  if (used > MAX_XLSX_EXPORT_CELLS) {
    throw validation(`As xlsx, ${sheetId === null ? 'this workbook' : 'this sheet'} holds ${used} cells; the limit is ${MAX_XLSX_EXPORT_CELLS}${sheetId === null && chosen.length > 1 ? ': export one sheet at a time (sheet_id)' : ''}`,
      { field: 'sheet_id', reason: 'EXPORT_TOO_LARGE', limit: MAX_XLSX_EXPORT_CELLS });
  }
  const base = safeFilename((q.filename ?? row.title).replace(/\.(xlsx|csv|tsv)$/i, ''), 'sheet');
  const filename = `${base}.${format}`;
  // Values of the whole workbook's recalculation (its bounds: sheet-model.ts), as the sheet socket shows them.
  const values = evaluateWorkbook(wb);

  if (format !== 'xlsx') {
    let rows = sheetRows(wb.sheets[chosen[0]], mode, values(chosen[0]));
    if (!headerRow) rows = rows.slice(1);
    return { body: Buffer.from(delimited(rows, format === 'csv' ? ',' : '\t'), 'utf8'), contentType: EXPORT_MEDIA_TYPES[format], filename };
  }
  return { body: await xlsxExport(wb, chosen, values, mode, headerRow), contentType: EXPORT_MEDIA_TYPES.xlsx, filename };
}

/** Cells written between two yields to the event loop while an xlsx export is built (each a few microseconds). */
const XLSX_CELLS_PER_TURN = 2000;

/**
 * The xlsx file of the chosen sheets, streamed (exceljs' WorkbookWriter: each row is written and let go once done),
 * giving the event loop back every XLSX_CELLS_PER_TURN cells: built in memory, a 500,000-cell sheet took ~10 s of
 * the event loop and ~400 MB.
 */
async function xlsxExport(wb: Workbook, chosen: number[], values: (sheet: number) => (ref: string) => CellValue, mode: string, headerRow: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => chunks.push(c));
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({ stream, useStyles: true, useSharedStrings: false });
  book.creator = 'platform-api';
  const names = worksheetNames();
  let written = 0;
  for (const i of chosen) {
    const s = wb.sheets[i];
    const frozen = headerRow && Object.keys(s.cells).length > 0;
    const ws = book.addWorksheet(names.next(s.name), frozen ? { views: [{ state: 'frozen', ySplit: 1 }] } : {});
    const displayed = values(i);
    // Only the cells used (an xlsx is sparse): a sheet with one far-away cell is as small as its cells. A streamed
    // sheet is written row by row, in order.
    const byRow = new Map<number, Array<[col: number, ref: string]>>();
    for (const ref of Object.keys(s.cells)) {
      const at = parseRef(ref);
      if (!at || (!headerRow && at.row === 0)) continue;
      let row = byRow.get(at.row);
      if (!row) byRow.set(at.row, (row = []));
      row.push([at.col, ref]);
    }
    for (const r of [...byRow.keys()].sort((x, y) => x - y)) {
      // Without the header row every row moves up one: the formulas' references move with them.
      const row = ws.getRow(skipTo(ws, r + (headerRow ? 1 : 0)));
      for (const [col, ref] of byRow.get(r)!) row.getCell(col + 1).value = xlsxValue(s.cells[ref], displayed(ref), mode, headerRow);
      if (headerRow && r === 0) row.font = { bold: true };
      row.commit();
      written += byRow.get(r)!.length;
      if (written >= XLSX_CELLS_PER_TURN) { written = 0; await new Promise((resolve) => setImmediate(resolve)); }
    }
    ws.commit();
  }
  await book.commit();
  return Buffer.concat(chunks);
}

/**
 * `rowNumber`, once the streamed sheet is told that no row before it will come. exceljs (4.4) keeps a streamed sheet's
 * uncommitted rows in an array indexed from its first uncommitted row number (`_rowZero`), and commits by shift()ing
 * that array up to the row: after row 2, a cell at XFD1048576 made an array of a million holes whose commit is
 * quadratic (the export never finished). Every row before is committed here (rows come in order, each committed), so
 * the array may start at this row.
 */
function skipTo(ws: ExcelJS.Worksheet, rowNumber: number): number {
  const internals = ws as unknown as { _rowZero?: unknown; _rows?: unknown };
  if (typeof internals._rowZero === 'number' && Array.isArray(internals._rows) && internals._rows.length === 0 && internals._rowZero < rowNumber) internals._rowZero = rowNumber;
  return rowNumber;
}

/** What an xlsx export writes in a cell: its displayed value, or in raw mode its formula (see below). */
function xlsxValue(stored: Cell, v: CellValue, mode: string, headerRow: boolean): ExcelJS.CellValue {
  const shown = typeof v === 'string' ? exportText(v) : v;
  // Raw mode writes a live formula only in the platform's own formula language: other text after "=" (a DDE
  // payload, HYPERLINK...) would run in the spreadsheet program of whoever opens the file, so it is written as
  // the text it is, as stored (csv and tsv neutralise it with the injection rule's apostrophe).
  if (mode === 'raw' && stored.f && isSheetFormula(stored.f)) {
    const formula = headerRow ? stored.f : formulaWithoutFirstRow(stored.f);
    return { formula: exportText(xlsxFormula(formula).slice(1)), result: shown as never };
  }
  if (mode === 'raw' && stored.f) return exportText(stored.f);
  return shown as ExcelJS.CellValue;
}

/**
 * Worksheet names Excel takes, one per sheet in order: the model allows any name, Excel does not (at most 31
 * characters, none of \\ / ? * [ ] : or a control character, no apostrophe first or last, not "History", unique
 * regardless of case). Each is made legal (a "_" for each character it cannot have, "Sheet" for an empty one), then
 * unique with " (2)", " (3)"...
 */
function worksheetNames(): { next(name: string): string } {
  const taken = new Set<string>();
  const fit = (s: string, room: number) => { let t = s; while (t.length > room) t = Array.from(t).slice(0, -1).join(''); return t; };
  return {
    next(name) {
      let legal = fit(exportText(name).replace(/[\\/?*[\]:\u0001-\u001f]/g, '_'), 31).replace(/^'|'$/g, '_') || 'Sheet';
      if (legal.toLowerCase() === 'history') legal = `${legal}_`;
      let unique = legal;
      for (let n = 2; taken.has(unique.toLowerCase()); n++) unique = `${fit(legal, 31 - ` (${n})`.length)} (${n})`;
      taken.add(unique.toLowerCase());
      return unique;
    },
  };
}
