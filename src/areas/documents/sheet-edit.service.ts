import type { Platform } from '../../core/context.js';
import { AppError, notFound, validation } from '../../core/errors.js';
import type { Principal } from '../../core/auth/principal.js';
import { audit } from '../../core/audit.js';
import { enqueue } from '../../core/jobs.js';
import { INDEX_JOB, assertContentSize, moderate } from './documents.service.js';
import { documentContent, documentKind, replaceContent } from './documents.repo.js';
import { MAX_CONTENT_BYTES } from './documents.schemas.js';
import { MAX_WORKBOOK_CELLS, evaluateWorkbook, parseRef, parseWorkbook, workbookCells, type CellValue, type Workbook } from './sheet-model.js';
import { unstorableNumberProblem, unstorableTextProblem } from '../../core/text.js';
import { checkNeeds } from '../../core/http/guard.js';
import { principalFromQueryToken } from '../../core/auth/query-session.js';
import { writeWithdrawn } from './collab.service.js';

export interface SheetSession { principal: Principal; documentId: string; capability: 'read' | 'write' }

/** GET /v1/sheet/ws admission: a session JWT (token version checked), the documents feature, a sheet the caller can see. */
export async function openSheetSession(platform: Platform, token: string | undefined, documentId: string): Promise<SheetSession> {
  const principal = await principalFromQueryToken(platform.credentials, token, 'The sheet socket');
  if (!principal.org.features.includes('documents')) throw new AppError('FEATURE_DISABLED', 'The "documents" feature is not enabled for this organization', { feature: 'documents' });
  if (!principal.permissions.has('document.view')) throw new AppError('PERMISSION_DENIED', 'This needs the "document.view" permission');
  const kind = await platform.db.tenant(principal.orgId, (sql) => documentKind(sql, principal.orgId, documentId));
  if (kind !== 'sheet') throw notFound('Spreadsheet');
  return { principal, documentId, capability: principal.permissions.has('document.update') ? 'write' : 'read' };
}

export async function readWorkbook(platform: Platform, s: SheetSession): Promise<Workbook> {
  const content = await platform.db.tenant(s.principal.orgId, (sql) => documentContent(sql, s.principal.orgId, s.documentId));
  if (content === undefined) throw notFound('Spreadsheet');
  return parseWorkbook(content);
}

export interface CellEdit { sheet: number; cell: string; value?: CellValue; formula?: string | null }

/** Sets (or, with neither value nor formula, clears) one cell under the row lock; returns the cell and its displayed value. */
export async function editCell(platform: Platform, s: SheetSession, e: CellEdit) {
  if (s.capability !== 'write') throw new AppError('PERMISSION_DENIED', 'This connection is read-only (needs "document.update")', { permission: 'document.update' });
  if (!Number.isInteger(e.sheet) || e.sheet < 0) throw validation('"sheet" must be a zero-based sheet index', { field: 'sheet' });
  if (typeof e.cell !== 'string' || !parseRef(e.cell)) throw validation('"cell" must be an A1 reference inside the grid, A1 to XFD1048576', { field: 'cell' });
  if (e.formula !== undefined && e.formula !== null && (typeof e.formula !== 'string' || !e.formula.startsWith('=') || e.formula.length > 8192)) throw validation('"formula" must start with =', { field: 'formula' });
  if (e.value !== undefined && e.value !== null && !['string', 'number', 'boolean'].includes(typeof e.value)) throw validation('"value" must be a string, number, boolean or null', { field: 'value' });
  if (typeof e.value === 'string' && e.value.length > 32_768) throw validation('"value" is too long', { field: 'value' });
  // What the REST API refuses (core assertStorableText) is refused here too, before anything is read or written.
  // A number past the double range (1e400 parses as Infinity) would be stored as null: refused as REST refuses it.
  const numberFlaw = typeof e.value === 'number' ? unstorableNumberProblem(e.value) : null;
  if (numberFlaw) throw validation(`"value" ${numberFlaw}`, { field: 'value', reason: 'NUMBER_OUT_OF_RANGE' });
  for (const field of ['value', 'formula'] as const) {
    const text = e[field];
    const flaw = typeof text === 'string' ? unstorableTextProblem(text) : null;
    if (flaw) throw validation(`"${field}" ${flaw}`, { field, reason: 'UNSTORABLE_CHARACTER' });
  }
  // The safety gate of a content PUT (spec 4.5): a cell's text the content policy refuses is not written. Only what
  // is written is checked (a formula wins over a value sent with it).
  await moderate({ platform }, [e.formula ? e.formula : typeof e.value === 'string' ? e.value : undefined]);
  const orgId = s.principal.orgId;
  return platform.db.tenantTx(orgId, async (sql) => {
    const content = await documentContent(sql, orgId, s.documentId, { forUpdate: true });
    if (content === undefined) throw notFound('Spreadsheet');
    const wb = parseWorkbook(content);
    const sheet = wb.sheets[e.sheet];
    if (!sheet) throw validation(`Sheet ${e.sheet} does not exist`, { field: 'sheet' });
    // A new cell past the workbook's bound is refused; editing or clearing one is always allowed (and a workbook
    // stored before the bound can shrink).
    const adds = (e.formula || (e.value !== undefined && e.value !== null && e.value !== '')) && !Object.hasOwn(sheet.cells, e.cell);
    if (adds && workbookCells(wb) >= MAX_WORKBOOK_CELLS) {
      throw validation(`The workbook holds ${MAX_WORKBOOK_CELLS} cells, its most: clear cells before adding ${e.cell}`, { field: 'cell', reason: 'TOO_MANY_CELLS', limit: MAX_WORKBOOK_CELLS });
    }
    const before = formulaValues(wb);
    if (e.formula) sheet.cells[e.cell] = { f: e.formula };
    else if (e.value !== undefined && e.value !== null && e.value !== '') sheet.cells[e.cell] = { v: e.value };
    else delete sheet.cells[e.cell];
    // The content limit of a REST write (10 MiB of UTF-8): a sheet the socket grew past it could not be written back.
    // An edit that does not grow the sheet is always allowed, so a sheet already past the limit can be shrunk.
    const next = JSON.stringify(wb);
    if (next.length * 3 > MAX_CONTENT_BYTES && Buffer.byteLength(next) > Buffer.byteLength(content)) assertContentSize(next);
    await replaceContent(sql, orgId, s.documentId, next);
    await enqueue(sql, { orgId, kind: INDEX_JOB, payload: { id: s.documentId }, dedupeKey: s.documentId });
    await audit(sql, { platform, principal: s.principal, requestId: 'ws', ip: null }, { action: 'sheet.cell_updated', targetType: 'document', targetId: s.documentId, details: { sheet: e.sheet, cell: e.cell } });
    // Only what the edit changed (its cell, and formulas of the sheet whose value moved): sending the whole sheet's
    // displayed values to every socket after each edit made a 60-byte edit megabytes per socket.
    return { sheet: e.sheet, cell: e.cell, data: sheet.cells[e.cell] ?? null, ...changedDisplay(wb, e.sheet, e.cell, before) };
  });
}

/**
 * The displayed values of the formula cells of every sheet, by sheet index (the whole workbook's recalculation, as in
 * the snapshot: the same formulas run, see MAX_RECALCULATION_WORK); none is computed for a workbook without formulas.
 */
function formulaValues(wb: Workbook): Array<Map<string, CellValue>> {
  const values = wb.sheets.map(() => new Map<string, CellValue>());
  if (!wb.sheets.some((s) => Object.values(s.cells).some((c) => c.f))) return values;
  const value = evaluateWorkbook(wb);
  wb.sheets.forEach((s, i) => { const v = value(i); for (const [ref, cell] of Object.entries(s.cells)) if (cell.f) values[i].set(ref, v(ref)); });
  return values;
}

/**
 * What an edit of `cell` on sheet `sheet` changed on the display (`before`: formulaValues before the edit). `display`:
 * the cell itself (null when it was cleared) and every formula cell of that sheet whose displayed value is not what it
 * was, by reference. `other_sheets`, only when there are some: formula cells of other sheets whose value changed
 * through the workbook's shared bounds (a formula elsewhere now past, or within, the recalculation budget).
 */
function changedDisplay(wb: Workbook, sheet: number, cell: string, before: Array<Map<string, CellValue>>) {
  const after = formulaValues(wb);
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

/**
 * The sheet socket's re-check after a credential change (its admission is openSheetSession: a session JWT, the
 * documents feature, `document.view`; write = `document.update`), by the session behind the token. Returns the
 * current principal (edits are audited with it); throws what a new connection would get, and PERMISSION_DENIED when
 * a write socket would now be read-only.
 */
export async function recheckSheetPrincipal(platform: Platform, p: Principal, capability: 'read' | 'write'): Promise<Principal> {
  const now = await platform.credentials.recheck(p);
  checkNeeds({ feature: 'documents', permission: 'document.view' }, now);
  if (capability === 'write' && !now.permissions.has('document.update')) throw writeWithdrawn();
  return now;
}
