import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { RouteNeeds } from './route-config.js';

/**
 * A route that takes no body: a write (POST, PUT, PATCH, DELETE) without a body schema that reads JSON (no `accepts`
 * of its own, not a protocol endpoint). Every such route refuses fields (refuseBody, added by the OpenAPI hook).
 */
export function takesNoBody(methods: string[], schema: { body?: unknown } | undefined, needs: RouteNeeds): boolean {
  const writes = methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE');
  return writes && !schema?.body && !needs.accepts && !needs.protocol;
}

/**
 * preValidation of a route that takes no body: an empty body or `{}` is fine (clients that always send JSON), any
 * field is refused like an unknown key of a strict body (spec part 7), so a client learns its input is ignored.
 */
export async function refuseBody(req: FastifyRequest): Promise<void> {
  const body = req.body;
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  const field = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body)[0] : '';
  throw new AppError('VALIDATION_ERROR', field ? `Unknown field "${field}": this route takes no body` : 'This route takes no body',
    { ...(field ? { field } : {}), reason: 'UNKNOWN_FIELD' });
}

/** preValidation of a route whose body is optional: no body (or JSON null) is validated as `{}`. */
export async function emptyBodyIsObject(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}
