import { Type } from 'typebox';
import { defineTools, listResult } from './define.js';
import * as docs from '../../../areas/documents/documents.service.js';
import { ListDocumentsQuery } from '../../../areas/documents/documents.schemas.js';

type Paged<T> = { items: T[]; total: number; limit: number; offset: number };
const paged = <T>(r: Paged<T>) => listResult(r.items, r);
/** An agent's context is small: list results carry the excerpt, not the content (documents.get reads it). */
const titlesOnly = (r: Awaited<ReturnType<typeof docs.listDocuments>>) => paged({ ...r, items: r.items.map(({ content: _content, ...item }) => item) });

/** documents.search: the list query with `search` required (full-text, prefix matching, ranked). */
const SearchInput = Type.Object({
  ...ListDocumentsQuery.properties,
  search: Type.String({ minLength: 1, maxLength: 200, description: 'Words to find in titles and contents' }),
}, { additionalProperties: false });

// Lives here until the documents area owns src/areas/documents/documents.tools.ts.
export const documentsTools = defineTools([
  {
    name: 'documents.search', title: 'Search documents', access: 'read', route: 'GET /v1/documents',
    description: 'Full-text search of documents by title and content (prefix matching, ranked by relevance); optional project_id, parent_id, kind and language filters. Results carry an excerpt, not the content: use documents.get for that.',
    keywords: ['find', 'query', 'lookup', 'knowledge', 'notes', 'text'],
    input: SearchInput,
    run: async (ctx, a) => titlesOnly(await docs.searchDocuments(ctx, a as Parameters<typeof docs.searchDocuments>[1], { content: false })),
  },
  {
    name: 'documents.list', title: 'List documents', access: 'read', route: 'GET /v1/documents',
    description: 'List documents of the organization (filter by project_id, parent_id folder, kind; sort by created_at, updated_at or title); items carry an excerpt, not the content.',
    keywords: ['browse', 'all', 'notes', 'files', 'library'],
    run: async (ctx, a) => titlesOnly(await docs.listDocuments(ctx, a as Parameters<typeof docs.listDocuments>[1], { content: false })),
  },
  {
    name: 'documents.get', title: 'Read a document', access: 'read', route: 'GET /v1/documents/:id',
    description: 'Read one document by id with its full content. Also readable as the resource platform://documents/<id>.',
    keywords: ['read', 'open', 'content', 'note'],
    run: (ctx, a) => docs.getDocument(ctx, a as { id: string }),
  },
  {
    name: 'documents.create', title: 'Create a document', access: 'write', route: 'POST /v1/documents',
    description: 'Create a document: title (required), content, content_type (markdown default, plain, rich_text), project_id, parent_id (folder), tags, metadata. It becomes searchable once indexed.',
    keywords: ['write', 'new', 'note', 'page'],
    run: (ctx, a) => docs.createDocument(ctx, a as Parameters<typeof docs.createDocument>[1]),
  },
  {
    name: 'documents.update', title: 'Update a document', access: 'write', route: 'PUT /v1/documents/:id',
    description: 'Change a document by id: title, content, content_type, project_id, parent_id, tags, metadata (content changes re-index it).',
    keywords: ['edit', 'write', 'rename', 'move', 'note'],
    run: (ctx, a) => docs.updateDocument(ctx, a as Parameters<typeof docs.updateDocument>[1]),
  },
  {
    name: 'documents.delete', title: 'Delete a document', access: 'write', route: 'DELETE /v1/documents/:id',
    description: 'Delete a document permanently, with its history and stored file.',
    run: (ctx, a) => docs.deleteDocument(ctx, a as { id: string }),
  },
]);
