import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../core/http/envelope.js';
import * as S from './sync.schemas.js';
import * as c from './comments.service.js';

type Id = { id: string };

/** Comments on documents and tasks (our design); permissions follow the target (document.* or task.*). */
export default async function commentRoutes(app: FastifyInstance) {
  app.get('/v1/comments', { config: { scope: 'documents:read' }, schema: { summary: 'Comments of one document or task, oldest first', querystring: S.ListCommentsQuery, response: { 200: ListEnvelope(Type.Array(S.CommentOut)) } } },
    async (req) => { const q = req.query as { target_type: 'document' | 'task'; target_id: string; limit: number; offset: number }; const r = await c.listComments(req.ctx, q); return okList(r.items, { total: r.total, limit: q.limit, offset: q.offset }); });
  app.post('/v1/comments', { config: { scope: 'documents:write' }, schema: { summary: 'Comment on a document or task', body: S.CreateCommentBody, response: { 201: Envelope(S.CommentOut) } } },
    async (req, reply) => reply.code(201).send(ok(await c.createComment(req.ctx, req.body as S.CreateCommentInput))));
  app.put('/v1/comments/:id', { config: { scope: 'documents:write', fixture: 'comment' }, schema: { summary: 'Edit your comment', params: S.IdParams, body: S.UpdateCommentBody, response: { 200: Envelope(S.CommentOut) } } },
    async (req) => ok(await c.updateComment(req.ctx, { id: (req.params as Id).id, body: (req.body as { body: string }).body })));
  app.delete('/v1/comments/:id', { config: { scope: 'documents:write', fixture: 'comment' }, schema: { summary: 'Delete a comment (author or administrator)', params: S.IdParams, response: { 200: Envelope(S.DeletedOut) } } },
    async (req) => ok(await c.deleteComment(req.ctx, req.params as Id)));
}
