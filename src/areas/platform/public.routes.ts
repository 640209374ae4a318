import { redactUrlsIn } from '../../core/http/redact-url.js';
import { AppError } from '../../core/errors.js';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { jsonBodyParser } from '../../core/http/json-parser.js';

/** Body limit of CSP reports (spec 4.1 and part 8: 16 KB). */
export const CSP_REPORT_MAX_BYTES = 16 * 1024;
const CSP_TYPES = ['application/csp-report', 'application/reports+json', 'application/json'];

/**
 * Public endpoints of spec 4.1 that live outside the REST areas: the container JWKS and the CSP report sink. (The
 * proof and command-line services' routes come with those areas.)
 */
export default async function publicPlatformRoutes(app: FastifyInstance) {
  const pub = { auth: 'public' as const };

  // Spec 4.1: JWKS with zero or one Ed25519 key, always 200, cacheable for 5 minutes. No container backend is
  // configured here, so no container token is ever signed and the set is empty. The envelope keys ride along;
  // JWKS readers ignore members they do not know (RFC 7517 section 5).
  app.get('/v1/containers/.well-known/jwks.json', {
    config: { ...pub, responseHeaders: { 'Cache-Control': 'public, max-age=300' } },
    schema: { summary: 'Public keys of container connect and data tokens (EdDSA)', response: { 200: Type.Object({
      keys: Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 1 }),
      success: Type.Literal(true), data: Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }),
    }) } },
  }, async (_req, reply) => {
    reply.header('Cache-Control', 'public, max-age=300');
    return { keys: [], success: true as const, data: { keys: [] } };
  });

  await app.register(async (csp) => {
    // Browsers send CSP reports as application/csp-report or application/reports+json; both are JSON, parsed by the
    // platform's JSON parser, taking the report as sent (it is logged, never stored; a browser does not retry).
    // Any other type is refused by Fastify before the handler: 415 naming these (route config `accepts`); a request
    // without a body and without Content-Type reaches the handler, and is refused there the same way.
    csp.removeAllContentTypeParsers();
    csp.addContentTypeParser(/^application\/(csp-report|reports\+json|json)\s*(;.*)?$/i, { parseAs: 'buffer' },
      jsonBodyParser(app.platform.config.jsonMaxDepth, { notStored: true }));
    csp.post('/v1/security/csp-report', {
      bodyLimit: CSP_REPORT_MAX_BYTES,
      config: { ...pub, accepts: CSP_TYPES, rateLimit: { max: 100, windowMs: 60_000, key: 'ip' } },
      schema: { summary: 'Content-Security-Policy violation reports (browsers)', response: { 204: Type.Null({ description: 'Accepted' }) } },
    }, async (req, reply) => {
      if (!req.headers['content-type']) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "" is not accepted here; send ${CSP_TYPES.join(' or ')}`);
      }
      req.log.info({ cspReport: redactUrlsIn(req.body), ip: req.ip }, 'csp violation report');
      return reply.code(204).send();
    });
  });
}
