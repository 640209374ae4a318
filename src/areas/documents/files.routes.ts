import { contentDisposition } from '../../core/http/content-disposition.js';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { Envelope, ok } from '../../core/http/envelope.js';
import * as S from './documents.schemas.js';
import * as files from './files.service.js';

/** Document files (spec 4.5, 5.8): upload (our design), streamed download with bearer or signed URL, signed URL issue. */
export default async function fileRoutes(app: FastifyInstance) {
  // Raw bodies for the upload route only (this plugin's scope): the PDF bytes as sent.
  app.addContentTypeParser(['application/pdf', 'application/octet-stream'], { parseAs: 'buffer', bodyLimit: files.MAX_FILE_BYTES }, (_req, body, done) => done(null, body));

  app.put('/v1/documents/:id/file', {
    bodyLimit: files.MAX_FILE_BYTES,
    config: { scope: 'documents:write', permission: 'document.update', feature: 'documents', fixture: 'document', accepts: ['application/pdf', 'application/octet-stream'] },
    schema: { summary: 'Upload the PDF of a document (raw application/pdf body, max 25 MB)', params: S.IdParams, response: { 200: Envelope(S.FileOut) } },
  }, async (req) => {
    const body = req.body;
    // Thrown as our own error: the core mapping of Fastify's media-type error would say "send application/json".
    if (!Buffer.isBuffer(body)) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the PDF as the raw body with Content-Type: application/pdf');
    return ok(await files.uploadFile(req.ctx, { id: (req.params as { id: string }).id, data: body, contentType: String(req.headers['content-type']) }));
  });

  app.get('/v1/documents/:id/file', {
    config: { auth: 'public', bearerInHandler: true, rateLimit: { key: 'ip' }, fixture: 'document_file',
      responseHeaders: { 'Content-Disposition': 'inline; filename="<title>.pdf"', 'Cache-Control': 'private, no-store' } },
    schema: {
      summary: 'Download the PDF: bearer credential, or the signed query org/exp/sig (then the bearer header is ignored)',
      params: S.IdParams, querystring: S.FileQuery,
      response: { 200: { description: 'The PDF', content: { 'application/pdf': { schema: Type.String({ format: 'binary' }) } } } },
    },
  }, async (req, reply) => {
    const q = req.query as { org?: string; exp?: string; sig?: string };
    const f = await files.openFile(req.ctx, { id: (req.params as { id: string }).id, ...q, authorization: req.headers.authorization });
    reply.header('content-type', f.contentType).header('content-length', f.size)
      .header('content-disposition', contentDisposition('inline', f.filename)).header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff');
    return reply.send(f.body);
  });

  app.delete('/v1/documents/:id/file', {
    config: { scope: 'documents:write', permission: 'document.update', feature: 'documents', fixture: 'document_file' },
    schema: { summary: 'Delete the file of a document (later downloads are 404 FILE_DELETED)', params: S.IdParams, response: { 200: Envelope(S.DeletedOut) } },
  }, async (req) => ok(await files.deleteFile(req.ctx, req.params as { id: string })));

  app.post('/v1/documents/:id/file/signed-url', {
    config: { scope: 'documents:read', permission: 'document.view', feature: 'documents', fixture: 'document_file', bodyOptional: true },
    schema: { summary: 'Issue a signed download URL for the file', params: S.IdParams, body: S.SignedUrlBody, response: { 200: Envelope(S.SignedUrlOut) } },
  }, async (req) => ok(await files.createSignedUrl(req.ctx, { id: (req.params as { id: string }).id, ...((req.body as { expires_in?: number }) ?? {}) })));
}
