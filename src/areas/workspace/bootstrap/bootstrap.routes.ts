import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ok } from '../../../core/http/envelope.js';
import { JsonObject, Timestamp, Uuid } from '../common.js';
import { PersonalizationOut } from '../settings/settings.schemas.js';
import { bootstrap, BOOTSTRAP_CACHE_CONTROL, etagMatches } from './bootstrap.service.js';

const Nullable = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.Array>>(t: T) => Type.Union([t, Type.Null()]);
const BootstrapOut = Type.Object({
  user: Nullable(Type.Object({ id: Uuid, email: Type.String(), name: Type.String() })),
  organizations: Nullable(Type.Array(Type.Object({ id: Uuid, name: Type.String(), slug: Type.String(), role: Type.String(), plan_tier: Type.String(), is_current: Type.Boolean() }))),
  projects: Nullable(Type.Array(Type.Object({
    id: Uuid, name: Type.String(), slug: Type.String(), description: Type.Union([Type.String(), Type.Null()]),
    prefix: Type.Union([Type.String(), Type.Null()]), visibility: Type.String(), updated_at: Timestamp,
  }), { description: 'Active projects of the organization, newest first, first 50' })),
  settings: Nullable(Type.Object({ organization: JsonObject(), personalization: PersonalizationOut, preferences: JsonObject() })),
});

export default async function bootstrapRoutes(app: FastifyInstance) {
  app.get('/v1/bootstrap', {
    config: { responseHeaders: { ETag: 'Weak ETag of the four slices; send it back in If-None-Match', 'Cache-Control': BOOTSTRAP_CACHE_CONTROL, Vary: 'Origin, Authorization' } },
    schema: {
      summary: 'First-paint slices: user, organizations, projects, settings (weak ETag; 304 on If-None-Match)',
      // No length bound: a list of tags too long to hold ours is a condition that is false (RFC 9110 13.1.2), not an error.
      headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
      response: { 200: Envelope(BootstrapOut), 304: Type.Null({ description: 'Not modified; no body' }) },
    },
  }, async (req, reply) => {
    const { data, etag } = await bootstrap(req.ctx);
    // Added to the Vary the CORS hook may have set (Origin), not in its place: a cached answer for one allowed origin
    // must not be reused for another.
    const vary = reply.getHeader('Vary');
    reply.header('ETag', etag).header('Cache-Control', BOOTSTRAP_CACHE_CONTROL).header('Vary', vary ? `${String(vary)}, Authorization` : 'Authorization');
    if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send();
    return ok(data);
  });
}
