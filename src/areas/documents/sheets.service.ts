import { requireProject } from '../projects/project-access.js';
import { principalFromQueryToken } from '../../core/auth/query-session.js';
import ExcelJS from 'exceljs';
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
import { DECK_CONTENT_TYPE, SHEET_CONTENT_TYPE, emptyDeck, emptyWorkbook, evaluateWorkbook, formulaWithoutFirstRow, gridSize, isSheetFormula, parseRef, parseWorkbook, sheetRows, xlsxFormula, type CellValue } from './sheet-model.js';

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
 * cell of it, empty ones included. An xlsx holds only the cells used, so it has no such bound.
 */
export const MAX_EXPORT_CELLS = 500_000;
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
  if (sheetId !== null && sheetId >= wb.sheets.length) throw validation(`sheet_id ${sheetId} is out of range (the workbook has ${wb.sheets.length} sheets)`, { field: 'sheet_id' });
  const chosen = sheetId === null ? wb.sheets.map((_, i) => i) : [sheetId];
  // csv and tsv write the dense rectangle up to the last used cell: one far-away cell (XFD1048576) would build
  // billions of cells and exhaust the server's memory. The sheet may still be exported as xlsx.
  const cells = format === 'xlsx' ? 0 : gridSize(wb.sheets[chosen[0]]);
  if (cells > MAX_EXPORT_CELLS) {
    throw validation(`As ${format}, this sheet would span ${cells} cells (rows × columns up to the last used cell, empty ones included); the limit is ${MAX_EXPORT_CELLS}: export it as xlsx, which holds only the cells used`,
      { field: 'sheet_id', reason: 'EXPORT_TOO_LARGE', limit: MAX_EXPORT_CELLS });
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
  const book = new ExcelJS.Workbook();
  book.creator = 'platform-api';
  const names = worksheetNames();
  for (const i of chosen) {
    const s = wb.sheets[i];
    const ws = book.addWorksheet(names.next(s.name));
    const displayed = values(i);
    // Only the cells used (an xlsx is sparse): a sheet with one far-away cell is as small as its cells.
    for (const [ref, stored] of Object.entries(s.cells)) {
      const at = parseRef(ref);
      if (!at || (!headerRow && at.row === 0)) continue;
      // Without the header row every row moves up one: the formulas' references move with them.
      const cell = ws.getCell(at.row + (headerRow ? 1 : 0), at.col + 1);
      const v = displayed(ref);
      const shown = typeof v === 'string' ? exportText(v) : v;
      // Raw mode writes a live formula only in the platform's own formula language: other text after "=" (a DDE
      // payload, HYPERLINK...) would run in the spreadsheet program of whoever opens the file, so it is written as
      // the text it is, as stored (csv and tsv neutralise it with the injection rule's apostrophe).
      if (mode === 'raw' && stored.f && isSheetFormula(stored.f)) {
        const formula = headerRow ? stored.f : formulaWithoutFirstRow(stored.f);
        cell.value = { formula: exportText(xlsxFormula(formula).slice(1)), result: shown as never };
      } else if (mode === 'raw' && stored.f) cell.value = exportText(stored.f);
      else cell.value = shown as ExcelJS.CellValue;
    }
    if (headerRow && Object.keys(s.cells).length) { ws.getRow(1).font = { bold: true }; ws.views = [{ state: 'frozen', ySplit: 1 }]; }
  }
  return { body: Buffer.from(await book.xlsx.writeBuffer()), contentType: EXPORT_MEDIA_TYPES.xlsx, filename };
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
