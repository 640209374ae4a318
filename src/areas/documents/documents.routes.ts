import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ok } from '../../core/http/envelope.js';
import * as S from './documents.schemas.js';
import * as docs from './documents.service.js';

const read = { scope: 'documents:read', permission: 'document.view', feature: 'documents' } as const;
const write = (permission: string) => ({ scope: 'documents:write', permission, feature: 'documents' as const });
const CONTENT_BODY_LIMIT = S.DOCUMENT_BODY_LIMIT;

/** Document library: spec 4.5 first bullet. */
export default async function documentRoutes(app: FastifyInstance) {
  app.get('/v1/documents', { config: read, schema: { summary: 'List or search documents', querystring: S.ListDocumentsQuery, response: { 200: Type.Object({ success: Type.Literal(true), data: S.DocumentListOut, pagination: S.PaginationOut }) } } },
    async (req) => {
      const r = await docs.listDocuments(req.ctx, req.query as S.ListDocumentsInput);
      const pagination = { total: r.total, limit: r.limit, offset: r.offset, has_more: r.offset + r.limit < r.total };
      // Spec 4.5: data holds items and pagination; the list envelope of 2.1 carries it beside data as well.
      return { success: true as const, data: { items: r.items, pagination }, pagination };
    });

  app.post('/v1/documents', { bodyLimit: CONTENT_BODY_LIMIT, config: write('document.create'), schema: { summary: 'Create a document', body: S.CreateDocumentBody, response: { 201: Envelope(S.DocumentOut) } } },
    async (req, reply) => reply.code(201).send(ok(await docs.createDocument(req.ctx, req.body as S.CreateDocumentInput))));

  app.get('/v1/documents/:id', { config: { ...read, fixture: 'document' }, schema: { summary: 'Get a document', params: S.IdParams, response: { 200: Envelope(S.DocumentOut) } } },
    async (req) => ok(await docs.getDocument(req.ctx, req.params as { id: string })));

  app.put('/v1/documents/:id', { bodyLimit: CONTENT_BODY_LIMIT, config: { ...write('document.update'), fixture: 'document' }, schema: { summary: 'Update a document (all fields optional; content changes re-index)', params: S.IdParams, body: S.UpdateDocumentBody, response: { 200: Envelope(S.DocumentOut) } } },
    async (req) => ok(await docs.updateDocument(req.ctx, { ...(req.body as S.UpdateDocumentInput ?? {}), id: (req.params as { id: string }).id })));

  app.delete('/v1/documents/:id', { config: { ...write('document.delete'), fixture: 'document' }, schema: { summary: 'Delete a document permanently', params: S.IdParams, response: { 200: Envelope(S.DeletedOut) } } },
    async (req) => ok(await docs.deleteDocument(req.ctx, req.params as { id: string })));
}
