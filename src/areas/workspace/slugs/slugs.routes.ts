import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ok } from '../../../core/http/envelope.js';
import { slugAvailability, type SlugKind } from './slugs.service.js';

const CACHE_CONTROL = 'private, max-age=0, must-revalidate';

const Query = Type.Object({
  kind: Type.Union([Type.Literal('org'), Type.Literal('project'), Type.Literal('package')]),
  slug: Type.String({ minLength: 1, maxLength: 256 }),
});
const Out = Type.Object({
  available: Type.Boolean(),
  reason: Type.Union([Type.Literal('taken'), Type.Literal('reserved'), Type.Literal('invalid_format'), Type.Literal('uuid_shaped'), Type.Literal('error'), Type.Null()],
    { description: 'null when available' }),
});

export default async function slugRoutes(app: FastifyInstance) {
  app.get('/v1/slugs/availability', {
    config: { scope: 'projects:read', rateLimit: { max: 60, key: 'user' }, responseHeaders: { 'Cache-Control': 'private, max-age=0, must-revalidate (errors too)' } },
    schema: { summary: 'Whether a slug is free for an organization, project or package (60 per minute per user)', querystring: Query, response: { 200: Envelope(Out) } },
    // Spec 4.6 names the header for the endpoint: every answer carries it, errors (400, 403, 429) included.
    onSend: (_req, reply, payload, done) => { reply.header('Cache-Control', CACHE_CONTROL); done(null, payload); },
  }, async (req) => {
    const q = req.query as { kind: SlugKind; slug: string };
    return ok(await slugAvailability(req.ctx, q.kind, q.slug));
  });
}
