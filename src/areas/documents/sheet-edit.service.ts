import type { Platform } from '../../core/context.js';
import { AppError, notFound, validation } from '../../core/errors.js';
import type { Principal } from '../../core/auth/principal.js';
import { audit } from '../../core/audit.js';
import { enqueue } from '../../core/jobs.js';
import { INDEX_JOB, moderate } from './documents.service.js';
import { documentContent, documentKind, replaceContent } from './documents.repo.js';
import { parseRef, type Workbook } from './sheet-model.js';
import { applyCellEdit, type CellEdit } from './sheet-cell-edit.js';
import { workbookCache } from './workbook-cache.js';
import { unstorableNumberProblem, unstorableTextProblem } from '../../core/text.js';
import { checkNeeds } from '../../core/http/guard.js';
import { principalFromQueryToken } from '../../core/auth/query-session.js';
import { writeWithdrawn } from './collab.service.js';

export type { CellEdit } from './sheet-cell-edit.js';

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
  // Shared with other readers (the parse of this text kept on this node): read it, never change it.
  return workbookCache(platform).read(`${s.principal.orgId}:${s.documentId}`, content).workbook;
}


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
  const workbooks = workbookCache(platform);
  const key = `${orgId}:${s.documentId}`;
  const written = await platform.db.tenantTx(orgId, async (sql) => {
    const content = await documentContent(sql, orgId, s.documentId, { forUpdate: true });
    if (content === undefined) throw notFound('Spreadsheet');
    // The parse of this very text when this node has it (the previous edit's), else a new one (workbook-cache.ts).
    const { next, counted, result } = applyCellEdit(content, e, workbooks.take(key, content));
    await replaceContent(sql, orgId, s.documentId, next);
    await enqueue(sql, { orgId, kind: INDEX_JOB, payload: { id: s.documentId }, dedupeKey: s.documentId });
    await audit(sql, { platform, principal: s.principal, requestId: 'ws', ip: null }, { action: 'sheet.cell_updated', targetType: 'document', targetId: s.documentId, details: { sheet: e.sheet, cell: e.cell } });
    return { next, counted, result };
  });
  // Committed: its parse is kept for the next edit (an edit that failed left nothing in the cache).
  workbooks.put(key, written.next, written.counted);
  return written.result;
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
