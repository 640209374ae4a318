import { safeFilename } from '../../core/text.js';
import { accountsRepo } from '../accounts/accounts.repo.js';
import { createHmac } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ServiceContext } from '../../core/context.js';
import { AppError, notFound } from '../../core/errors.js';
import { audit } from '../../core/audit.js';
import { uuidv7 } from '../../core/ids.js';
import { safeEqual } from '../../core/crypto.js';
import { checkNeeds, bearerToken } from '../../core/http/guard.js';
import * as repo from './documents.repo.js';
import { documentsDeps } from './deps.js';
import { removeStoredFile } from './stored-files.js';
import { docAccess, toDocument } from './documents.service.js';
import { lockNamed } from '../../core/db/locks.js';
import type { Sql } from '../../core/db/database.js';

export const MAX_FILE_BYTES = 25 * 1024 * 1024;

const fileMissing = (row: repo.DocumentRow | undefined) => {
  if (!row) return notFound('Document');
  if (row.file_deleted_at) return new AppError('NOT_FOUND', 'The file of this document was deleted', { code: 'FILE_DELETED', deleted_at: row.file_deleted_at });
  return notFound('File', { code: 'FILE_NOT_FOUND' });
};

/**
 * The organization's file storage quota (FILE_STORAGE_QUOTA_BYTES): the files it keeps, the document's own earlier
 * file excepted (the upload replaces it), plus this one. 413 PAYLOAD_TOO_LARGE, the spec's code for "too large", with
 * details.code STORAGE_QUOTA_EXCEEDED. Checked once before the bytes are stored (so a full organization writes
 * nothing) and again in the transaction that records the file, under the organization's file lock, so concurrent
 * uploads cannot pass it together.
 */
async function assertUnderQuota(ctx: ServiceContext, sql: Sql, orgId: string, docId: string, size: number): Promise<void> {
  const quota = ctx.platform.config.fileStorageQuotaBytes;
  const used = await repo.fileBytes(sql, orgId, docId);
  if (used + size > quota) {
    throw new AppError('PAYLOAD_TOO_LARGE', `This organization's files would take ${used + size} bytes; its storage quota is ${quota} bytes. Delete files or documents first`,
      { code: 'STORAGE_QUOTA_EXCEEDED', maxBytes: quota, limit: quota, used, size });
  }
}

/** Stores the document's PDF (raw body); replaces an earlier file. Bounded by the organization's storage quota. */
export async function uploadFile(ctx: ServiceContext, input: { id: string; data: Buffer; contentType: string }) {
  const p = docAccess(ctx, 'document.update');
  if (input.data.length === 0) throw new AppError('VALIDATION_ERROR', 'The request body is empty; send the PDF bytes', { field: 'body' });
  if (input.data.subarray(0, 5).toString('latin1') !== '%PDF-') {
    throw new AppError('VALIDATION_ERROR', 'The body is not a PDF (it must start with %PDF-)', { field: 'body' });
  }
  const deps = documentsDeps(ctx.platform);
  await ctx.platform.db.tenant(p.orgId, async (sql) => {
    if (!(await repo.getDocument(sql, p.orgId, input.id))) throw notFound('Document');
    await assertUnderQuota(ctx, sql, p.orgId, input.id, input.data.length);
  });
  const key = `${p.orgId}/documents/${input.id}/${uuidv7()}.pdf`;
  // A store that timed out may still have kept the object: it is deleted (best effort) so nothing is left behind.
  await deps.blobs.put(key, input.data, 'application/pdf').catch(async (err) => { await removeStoredFile(ctx, key); throw err; });
  let old: string | null = null;
  const row = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await lockNamed(sql, `files:${p.orgId}`);
    const before = await repo.getDocument(sql, p.orgId, input.id, { forUpdate: true });
    if (!before) throw notFound('Document');
    await assertUnderQuota(ctx, sql, p.orgId, input.id, input.data.length);
    old = before.file_key;
    const r = await repo.setFile(sql, p.orgId, input.id, { key, size: input.data.length, contentType: 'application/pdf' });
    await audit(sql, ctx, { action: 'document.file_uploaded', targetType: 'document', targetId: input.id, details: { size: input.data.length } });
    return r!;
  }).catch(async (err) => { await removeStoredFile(ctx, key); throw err; });
  if (old) await removeStoredFile(ctx, old);
  const d = toDocument(row);
  return { id: d.id, file_url: d.file_url!, file_size: d.file_size!, content_type: 'application/pdf' };
}

export async function deleteFile(ctx: ServiceContext, input: { id: string }) {
  const p = docAccess(ctx, 'document.update');
  const gone = await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const before = await repo.getDocument(sql, p.orgId, input.id, { forUpdate: true });
    if (!before?.file_key) throw fileMissing(before);
    const r = await repo.markFileDeleted(sql, p.orgId, input.id);
    await audit(sql, ctx, { action: 'document.file_deleted', targetType: 'document', targetId: input.id });
    return r!;
  });
  if (gone.file_key) await removeStoredFile(ctx, gone.file_key);
  return { id: input.id, deleted: true };
}

/** HMAC-SHA256 over `{org}:{id}:{exp}` (spec 5.8) with the area's derived secret, hex. */
export function signFile(secret: Buffer, org: string, id: string, exp: number): string {
  return createHmac('sha256', secret).update(`${org}:${id}:${exp}`).digest('hex');
}

export async function createSignedUrl(ctx: ServiceContext, input: { id: string; expires_in?: number }) {
  const p = docAccess(ctx, 'document.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => repo.getDocument(sql, p.orgId, input.id));
  if (!row?.file_key) throw fileMissing(row);
  const ttl = input.expires_in ?? 3600;
  const exp = Math.floor(Date.now() / 1000) + ttl;
  const sig = signFile(documentsDeps(ctx.platform).urlSecret, p.orgId, input.id, exp);
  const path = `/v1/documents/${input.id}/file?org=${p.orgId}&exp=${exp}&sig=${sig}`;
  const base = ctx.platform.config.publicBaseUrl?.replace(/\/+$/, '') ?? '';
  return { url: `${base}${path}`, expires_at: new Date(exp * 1000).toISOString(), expires_in: ttl };
}

export interface FileAccess { id: string; org?: string | string[]; exp?: string | string[]; sig?: string | string[]; authorization?: string }

const badSignature = () => new AppError('UNAUTHORIZED', 'The signed URL is invalid: its org, exp or sig was altered or it was not issued here');
/** Said only of a URL whose signature holds: a forged one learns nothing from the message. */
const expiredSignature = (id: string, exp: number) => new AppError('UNAUTHORIZED',
  `The signed URL expired at ${new Date(exp * 1000).toISOString()}; issue a new one with POST /v1/documents/${id}/file/signed-url`);
/**
 * The canonical spelling of a signed URL's parameters, as createSignedUrl writes them: the organization id as a
 * lower-case UUID, `exp` as a decimal integer without sign or leading zeros (12 digits at most), `sig` as 64
 * lower-case hex digits. Anything else is refused like a wrong signature: one URL, one spelling.
 */
const CANONICAL_ORG = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CANONICAL_EXP = /^[1-9][0-9]{0,11}$/;
const CANONICAL_SIG = /^[0-9a-f]{64}$/;

/**
 * Who may read the file: with any of org/exp/sig present, only the signature counts (the bearer header
 * is ignored); otherwise a bearer credential with document.view (and the documents feature and scope).
 */
async function resolveAccess(ctx: ServiceContext, a: FileAccess): Promise<string> {
  if (a.org !== undefined || a.exp !== undefined || a.sig !== undefined) {
    if (typeof a.org !== 'string' || typeof a.exp !== 'string' || typeof a.sig !== 'string') throw badSignature();
    // Only the spelling createSignedUrl issues is accepted; any other (upper case, padding, a sign) is an altered URL.
    if (!CANONICAL_ORG.test(a.org) || !CANONICAL_EXP.test(a.exp) || !CANONICAL_SIG.test(a.sig)) throw badSignature();
    const exp = Number(a.exp);
    const expected = signFile(documentsDeps(ctx.platform).urlSecret, a.org, a.id, exp);
    const valid = safeEqual(expected, a.sig);
    if (!valid) throw badSignature();
    if (exp * 1000 <= Date.now()) throw expiredSignature(a.id, exp);
    // The link stands for the organization's own access: it ends with the organization, and pauses while its
    // documents feature is off, as a bearer credential would.
    const org = await accountsRepo.orgById(ctx.platform.db.sys, a.org); // a live organization, read as the owner
    if (!org) throw new AppError('NOT_FOUND', 'Document not found');
    if (!org.features.includes('documents')) throw new AppError('FEATURE_DISABLED', 'The "documents" feature is not enabled for this organization', { feature: 'documents' });
    return a.org;
  }
  const principal = await ctx.platform.credentials.resolve(bearerToken(a.authorization));
  checkNeeds({ feature: 'documents', scope: 'documents:read', permission: 'document.view' }, principal);
  ctx.principal = principal;
  return principal.orgId;
}

/** The file as a stream, for GET /v1/documents/{id}/file. */
export async function openFile(ctx: ServiceContext, a: FileAccess): Promise<{ body: Readable; size: number; contentType: string; filename: string }> {
  const orgId = await resolveAccess(ctx, a);
  const { row, deletedAt } = await ctx.platform.db.tenant(orgId, async (sql) => {
    const row = await repo.getDocument(sql, orgId, a.id);
    return { row, deletedAt: row ? undefined : await repo.deletedAt(sql, orgId, a.id) };
  });
  // A document deleted with its file (DELETE /v1/documents/{id} is permanent) is a deleted file too (spec 4.5, 7).
  if (deletedAt) throw new AppError('NOT_FOUND', 'This document and its file were deleted', { code: 'FILE_DELETED', deleted_at: deletedAt });
  if (!row?.file_key) throw fileMissing(row);
  const blob = await documentsDeps(ctx.platform).blobs.get(row.file_key);
  if (!blob) {
    // The database names a file the store lacks: S3 still catching up, or files not restored with the database
    // (README, "Backups"). The operator must hear of it; the client is told to retry.
    ctx.platform.log.error({ orgId, documentId: a.id, key: row.file_key, store: documentsDeps(ctx.platform).blobs.name }, 'document file missing from the file store');
    throw new AppError('SERVICE_UNAVAILABLE', 'The file store does not have this file right now; retry later');
  }
  const filename = `${safeFilename([...row.title].slice(0, 100).join(''), 'document')}.pdf`;
  return { body: blob.body, size: blob.size, contentType: row.file_content_type ?? blob.contentType, filename };
}
