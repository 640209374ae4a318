import { AppError } from '../../../core/errors.js';
import { isUuid } from '../../../core/ids.js';
import { isOffset } from '../../../core/pagination.js';
import { getDocument, listDocuments } from '../../../areas/documents/documents.service.js';
import { resourceUri, type ResourceProvider } from './define.js';

const mimeOf = (contentType: string) => (contentType === 'markdown' ? 'text/markdown' : contentType === 'rich_text' ? 'text/html' : 'text/plain');

/** Documents of the library (kind `document`), newest change first, as `platform://documents/<id>`. */
export const documentsResources: ResourceProvider = {
  kind: 'documents',
  gate: 'documents.get',
  listGate: 'documents.list',
  title: 'Documents',
  description: 'Documents of the organization\'s library; the text is the document\'s content.',
  mimeType: 'text/markdown',

  async list(ctx, cursor, limit) {
    const c = (cursor ?? { o: 0 }) as { o?: unknown };
    if (typeof c !== 'object' || !isOffset(c.o)) throw new AppError('INVALID_PARAMETER', '"cursor" is not a cursor this server issued', { field: 'cursor' });
    const offset = c.o as number;
    const r = await listDocuments(ctx, { kind: 'document', sort_by: 'updated_at', sort_order: 'desc', limit, offset } as unknown as Parameters<typeof listDocuments>[1], { content: false });
    return {
      items: r.items.map((d) => ({ uri: resourceUri('documents', d.id), name: d.title, title: d.title, description: d.excerpt || undefined, mimeType: mimeOf(d.content_type) })),
      next: offset + r.items.length < r.total ? { o: offset + r.items.length } : null,
    };
  },

  async read(ctx, id) {
    if (!isUuid(id)) return null;
    const d = await getDocument(ctx, { id });
    return {
      uri: resourceUri('documents', d.id), mimeType: mimeOf(d.content_type), text: d.content,
      _meta: { id: d.id, title: d.title, project_id: d.project_id, content_type: d.content_type, tags: d.tags, updated_at: d.updated_at },
    };
  },
};
