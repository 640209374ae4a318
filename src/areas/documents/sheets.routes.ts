import { contentDisposition } from '../../core/http/content-disposition.js';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope } from '../../core/http/envelope.js';
import { HandlerCheckedQuery } from '../../core/http/query-values.js';
import * as S from './documents.schemas.js';
import * as sheets from './sheets.service.js';

const GridBody = Type.Object({
  // No maxLength: the limit applies after trimming, so the service checks it (a schema bound would name another limit).
  name: Type.String({ minLength: 1, description: '1-500 characters after trimming' }),
  fromTemplateId: Type.Optional(S.Uuid),
}, { additionalProperties: false });
const ProjectParams = Type.Object({ projectId: S.Uuid });
const ExportParams = Type.Object({ documentId: S.Uuid });
/**
 * Query values are checked by the service: this endpoint reports VALIDATION_ERROR (spec 4.5), not
 * INVALID_PARAMETER, so the validated schema sets no limits of its own (a repeated parameter arrives as an array
 * and is refused by the service too). The URL itself is bounded by the server's header size limit. The document
 * shows what the service accepts (sheets.service.ts, exportSheet).
 */
const ExportQuery = Type.Object({
  token: HandlerCheckedQuery(Type.String({ description: 'the session access token (JWT)' })),
  format: HandlerCheckedQuery(Type.String({ enum: ['xlsx', 'csv', 'tsv'], description: 'xlsx | csv | tsv (required)' })),
  sheet_id: HandlerCheckedQuery(Type.Integer({ minimum: 0, maximum: 9999, description: 'zero-based sheet index; required for csv and tsv' })),
  header_row: HandlerCheckedQuery(Type.Boolean({ default: true, description: 'true (default) | false' })),
  value_mode: HandlerCheckedQuery(Type.String({ enum: ['displayed', 'raw'], default: 'displayed', description: 'displayed (default) | raw' })),
  filename: HandlerCheckedQuery(Type.String({ minLength: 1, maxLength: 200, description: '1-200 characters; the extension is added' })),
});

/** Spreadsheets and slide decks (spec 4.5). */
export default async function sheetRoutes(app: FastifyInstance) {
  for (const [segment, kind] of [['sheets', 'sheet'], ['slides', 'deck']] as const) {
    app.post(`/v1/projects/:projectId/${segment}`, {
      config: { scope: 'documents:write', permission: 'document.create', feature: 'documents', fixture: 'project' },
      schema: { summary: kind === 'sheet' ? 'Create a spreadsheet in a project' : 'Create a slide deck in a project', params: ProjectParams, body: GridBody,
        response: { 201: Envelope(Type.Object({ document: S.DocumentOut })) } },
    }, async (req, reply) => {
      const b = req.body as { name: string; fromTemplateId?: string };
      return reply.code(201).send({ success: true, data: await sheets.createGridDocument(req.ctx, { projectId: (req.params as { projectId: string }).projectId, kind, ...b }) });
    });
  }

  app.get('/v1/sheet/:documentId/export', {
    config: { auth: 'public', rateLimit: { key: 'ip' }, fixture: 'sheet', requiredQuery: ['token', 'format'],
      responseHeaders: { 'Content-Disposition': 'attachment; filename="<filename>"; filename*=UTF-8\'\'<filename>', 'Cache-Control': 'no-store' } },
    schema: { summary: 'Export a spreadsheet as xlsx, csv or tsv (session JWT in `token`)', params: ExportParams, querystring: ExportQuery,
      response: { 200: { description: 'The exported sheet', content: Object.fromEntries(Object.values(sheets.EXPORT_MEDIA_TYPES).map((t) => [t, { schema: Type.String({ format: 'binary' }) }])) } } },
  }, async (req, reply) => {
    const out = await sheets.exportSheet(req.ctx, { documentId: (req.params as { documentId: string }).documentId, ...(req.query as object) });
    reply.header('content-type', out.contentType).header('cache-control', 'no-store')
      .header('content-disposition', contentDisposition('attachment', out.filename))
      .header('x-content-type-options', 'nosniff');
    return reply.send(out.body);
  });
}
