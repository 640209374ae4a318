import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import pg from 'pg';
import { AppError } from '../errors.js';
import { rateLimitBeforeRouting } from './guard.js';
import { closeAfterAnswer } from './upgrade-close.js';
import { missingRow, pathTargetOf, type PathTarget } from './path-rows.js';
import type { RouteNeeds } from './route-config.js';
import { asEnumError } from './literal-unions.js';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable, databaseUnavailableCause } from '../db/unavailable.js';

/** Fields the platform assigns; a strict body that carries one is refused with a message that says so. */
export const PLATFORM_ASSIGNED_FIELDS = new Set([
  'id', 'org_id', 'created_at', 'updated_at', 'status', 'created_by', 'created_by_user_id', 'updated_by', 'deleted_at',
]);

interface AjvError { keyword: string; instancePath: string; schemaPath?: string; message?: string; params: Record<string, unknown> }

function fieldOf(e: AjvError): string {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return [path, e.params.missingProperty].filter(Boolean).join('.');
  if (e.keyword === 'additionalProperties') return [path, e.params.additionalProperty].filter(Boolean).join('.');
  return path;
}

/** The `description` a route's querystring schema gives a parameter, if any. */
function queryParameterDescription(req: FastifyRequest, field: string): string | undefined {
  const q = (req.routeOptions.schema as { querystring?: { properties?: Record<string, { description?: unknown }> } } | undefined)?.querystring;
  const d = q?.properties?.[field]?.description;
  return typeof d === 'string' && d.length <= 200 ? d : undefined;
}

/** The route's schema of one part of the request (`body`, `querystring`, ...), as the route declared it. */
const routeSchemaOf = (req: FastifyRequest, part: string): unknown => (req.routeOptions.schema as Record<string, unknown> | undefined)?.[part];

/** The schema a JSON pointer (an Ajv `schemaPath`, `#/properties/due_date/anyOf`) names inside `root`. */
function schemaAt(root: unknown, pointer: string): unknown {
  return pointer.replace(/^#/, '').split('/').filter(Boolean).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((s, k) => (s && typeof s === 'object' ? (s as Record<string, unknown>)[k] : undefined), root);
}

/** How a message names a string format. */
const FORMAT_NAMES: Record<string, string> = {
  'date-time': 'an RFC 3339 date-time', date: 'a YYYY-MM-DD date', time: 'an RFC 3339 time', uuid: 'a UUID', email: 'an e-mail address', uri: 'an absolute URI',
};

/**
 * What the union of string formats at `schemaPath` (an Ajv error's, in `root`) accepts, for REST and MCP messages:
 * `must be an RFC 3339 date-time, a YYYY-MM-DD date or null`. Read from the schema, since a branch may fail on its
 * pattern before its format. Null when the union is anything else.
 */
export function formatUnionPhrase(root: unknown, schemaPath: string): { phrase: string; formats: string[] } | null {
  const branches = schemaAt(root, schemaPath);
  if (!Array.isArray(branches)) return null;
  const formats = branches.flatMap((b: { type?: unknown; format?: unknown }) => (b?.type === 'string' && typeof b.format === 'string' ? [b.format] : []));
  const nullable = branches.some((b: { type?: unknown }) => b?.type === 'null');
  if (formats.length < 2 || formats.length + (nullable ? 1 : 0) !== branches.length) return null;
  const names = [...formats.map((f) => FORMAT_NAMES[f] ?? `a "${f}" string`), ...(nullable ? ['null'] : [])];
  return { phrase: `must be ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`, formats };
}

/**
 * A value that fails a union of string formats (a task's `due_date`: a date-time, a date alone, or null): Ajv blames
 * the first branch ("must match format "date-time""), which hides that the other forms are accepted too. Said as a
 * whole, from the union's own branches (the schema, since a branch may fail on its pattern before its format):
 * "must be an RFC 3339 date-time, a YYYY-MM-DD date or null". Null for any other failure.
 */
function asFormatUnionError(errors: AjvError[], root: unknown): AjvError | null {
  const first = errors[0];
  const union = errors.find((x) => x.keyword === 'anyOf' && x.instancePath === first?.instancePath);
  const said = union?.schemaPath ? formatUnionPhrase(root, union.schemaPath) : null;
  if (!first || !said) return null;
  return { keyword: 'format', instancePath: first.instancePath, message: said.phrase, params: { formats: said.formats } };
}

/** Turns an Ajv failure into the spec's code: path ids are INVALID_ID_FORMAT, query values INVALID_PARAMETER. */
function fromValidation(err: FastifyError & { validation: AjvError[]; validationContext?: string }, req: FastifyRequest): AppError {
  const params = req.params;
  const where = err.validationContext ?? 'body';
  const e = asEnumError(err.validation) ?? asFormatUnionError(err.validation, routeSchemaOf(req, where)) ?? err.validation[0];
  const field = fieldOf(e);
  if (where === 'params') {
    if (e.keyword === 'format' && e.params.format === 'uuid') {
      // `/v1/projects/` (a trailing slash) or `/v1/projects//tasks` matched an id route with an empty id: no such
      // route. (A text parameter with a length rule, such as a settings key, keeps its VALIDATION_ERROR.)
      if ((params as Record<string, unknown> | undefined)?.[field] === '') return new AppError('NOT_FOUND', 'Route not found');
      return new AppError('INVALID_ID_FORMAT', `Path parameter "${field}" must be a UUID`, { field });
    }
    return new AppError('VALIDATION_ERROR', `Path parameter "${field}" ${e.message ?? 'is invalid'}`, { field });
  }
  // Spec part 7: "INVALID_ID_FORMAT: an id is not a UUID", wherever the id is (path above, query or body here).
  if (e.keyword === 'format' && e.params.format === 'uuid' && (where === 'querystring' || where === 'body')) {
    return new AppError('INVALID_ID_FORMAT', `${where === 'querystring' ? 'Query parameter' : 'Field'} "${field}" must be a UUID`, { field });
  }
  if (where === 'querystring') {
    // The parameter's own description (what it is, its unit) follows the rule it broke: "must be integer" alone
    // does not say that `since` is epoch milliseconds.
    // Not after a list of the allowed values, which says it already.
    const about = e.keyword === 'enum' ? undefined : queryParameterDescription(req, field);
    const hint = about ? ` (${about})` : '';
    if (e.keyword === 'required') return new AppError('INVALID_PARAMETER', `Query parameter "${field}" is required${hint}`, { field, rule: e.keyword, ...e.params, reason: 'REQUIRED' });
    return new AppError('INVALID_PARAMETER', `Query parameter "${field}" ${e.message ?? 'is invalid'}${hint}`, { field, rule: e.keyword, ...e.params });
  }
  if (where === 'headers') {
    return new AppError('VALIDATION_ERROR', `Header "${field}" ${e.message ?? 'is invalid'}`, { field });
  }
  if (e.keyword === 'additionalProperties') {
    const key = String(e.params.additionalProperty);
    const msg = PLATFORM_ASSIGNED_FIELDS.has(key)
      ? `Field "${field}" is assigned by the platform and cannot be set`
      : `Unknown field "${field}"`;
    return new AppError('VALIDATION_ERROR', msg, { field, reason: PLATFORM_ASSIGNED_FIELDS.has(key) ? 'PLATFORM_ASSIGNED' : 'UNKNOWN_FIELD' });
  }
  if (e.keyword === 'required') {
    return new AppError('VALIDATION_ERROR', `Field "${field}" is required`, { field, reason: 'REQUIRED' });
  }
  if (e.keyword === 'minProperties' && !field) {
    // An update body whose fields are all optional (`minProperties: 1`): "must NOT have fewer than 1 properties" named
    // neither the rule nor the fields; the answer lists what may be sent. No `field`: no one field is at fault.
    const fields = Object.keys((routeSchemaOf(req, 'body') as { properties?: object } | undefined)?.properties ?? {});
    const limit = Number(e.params.limit);
    const some = limit === 1 ? 'one field' : `${limit} fields`;
    return new AppError('VALIDATION_ERROR', `Send at least ${some} to change${fields.length ? `: ${fields.join(', ')}` : ''}`, { rule: e.keyword, limit, fields });
  }
  const subject = field ? `Field "${field}"` : 'Request body';
  return new AppError('VALIDATION_ERROR', `${subject} ${e.message ?? 'is invalid'}`, { field, rule: e.keyword, ...e.params });
}

/**
 * A database error that is an answer to the request, not a server fault (REST and MCP alike): text PostgreSQL cannot
 * store (the NUL character in text or jsonb) is the caller's input; the others a concurrent request caused.
 */
export function databaseRefusal(err: pg.DatabaseError): AppError | null {
  // Cancelled by the request pool's statement_timeout (DB_STATEMENT_TIMEOUT_MS): more work than one request may take.
  if (err.code === '57014' && /statement timeout/.test(err.message)) {
    return new AppError('SERVICE_UNAVAILABLE', 'The database did not finish this request in the time one request may take; narrow it (a more specific search or filter, a smaller page) or retry later',
      { reason: 'STATEMENT_TIMEOUT' }, { headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) }, cause: `57014: ${err.message}` });
  }
  if (err.code === '22P05' || err.code === '22021') {
    return new AppError('VALIDATION_ERROR', 'A text value contains a character that cannot be stored (the NUL character, \\u0000)', { reason: 'UNSTORABLE_CHARACTER' });
  }
  return concurrentChange(err);
}

/**
 * Database errors a concurrent request causes, not a server fault: each service checks what a request refers to, but
 * another request may delete it between that check and the write (the key then refuses the write), or two requests
 * may lock the same rows in opposite orders. Answered as what the request would have got a moment later.
 */
function concurrentChange(err: pg.DatabaseError): AppError | null {
  // 23503 from an insert or update: a row this write refers to is gone (a delete of a row still referenced, the
  // other direction, is a server fault: deletes clean up what refers to them).
  if (err.code === '23503' && /^insert or update on table/.test(err.message)) {
    return new AppError('NOT_FOUND', 'A resource this request refers to was deleted meanwhile', { reason: 'DELETED_CONCURRENTLY' });
  }
  if (err.code === '40P01' || err.code === '40001') {
    return new AppError('CONFLICT', 'The request collided with a concurrent change of the same resources; retry it', { reason: 'CONCURRENT_CHANGE' });
  }
  return null;
}

/** Maps anything thrown to the envelope of spec part 7; 5xx messages never carry internals. */
export function toAppError(err: unknown, req: FastifyRequest): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) return fromValidation(fe as FastifyError & { validation: AjvError[] }, req);
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const maxBytes = req.routeOptions.bodyLimit ?? req.server.initialConfig.bodyLimit;
      // Spec part 7 names both details keys for 413: `maxBytes` and `limit` (here the same byte limit).
      return new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`, { maxBytes, limit: maxBytes });
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "${req.headers['content-type'] ?? ''}" is not accepted here; send ${
        ((req.routeOptions.config as { accepts?: string[] } | undefined)?.accepts ?? ['application/json']).join(' or ')}`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('INVALID_JSON', 'Request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('VALIDATION_ERROR', 'Content-Length does not match the body');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new AppError('NOT_FOUND', 'Route not found');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('VALIDATION_ERROR', 'A path parameter is too long');
  }
  if (fe.statusCode === 413) {
    const maxBytes = req.routeOptions.bodyLimit ?? req.server.initialConfig.bodyLimit;
    return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large', { maxBytes, limit: maxBytes });
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new AppError('VALIDATION_ERROR', fe.message);
  }
  // A database that cannot be reached (stopped, restarting, network cut) is an outage, not a fault of this request.
  const down = databaseUnavailableCause(err);
  if (down) return databaseUnavailable(down);
  const isDb = err instanceof pg.DatabaseError;
  const refusal = isDb ? databaseRefusal(err as pg.DatabaseError) : null;
  if (refusal) return refusal;
  return new AppError(isDb ? 'DATABASE_ERROR' : 'INTERNAL_ERROR',
    isDb ? 'A database error occurred; retry with backoff' : 'An unexpected error occurred; retry with backoff',
    { requestId: req.id });
}

function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const appErr = toAppError(err, req);
  // 501 is an answer the server means to give (a reserved route), not a fault: logged like a 4xx.
  // A database outage, or a statement over the time limit: one warning per request naming the cause, no stack (every
  // request fails the same way in an outage; a slow statement is the request's, and its URL says which).
  if (appErr.status === 503 && typeof appErr.cause === 'string') {
    const timedOut = appErr.details?.reason === 'STATEMENT_TIMEOUT';
    req.log.warn({ code: appErr.code, cause: appErr.cause }, timedOut ? 'request failed: statement timeout' : 'request failed: database unavailable');
  }
  else if (appErr.status >= 500 && appErr.code !== 'NOT_IMPLEMENTED') req.log.error({ err }, 'request failed');
  else req.log.info({ code: appErr.code }, appErr.message);
  if (appErr.headers) reply.headers(appErr.headers);
  const details = appErr.status >= 500 ? { ...(appErr.details ?? {}), requestId: req.id } : appErr.details;
  reply.code(appErr.status).type('application/json').send(JSON.stringify({
    success: false,
    error: { code: appErr.code, message: appErr.message, ...(details ? { details } : {}) },
  }));
}

/**
 * The row a request's path names (pathTargetOf) when the request is refused as bad input (400): a body, query or
 * header its schema refuses (a malformed id in the query or body, INVALID_ID_FORMAT, included), a body that is not
 * JSON, or a service's own VALIDATION_ERROR. A malformed path id names no row: pathTargetOf is null for it. Null for
 * anything else, and for a caller without a principal (a public route, or a refusal before the credential was
 * accepted: there is no organization to look in).
 */
function inputRefusedOnPathRow(err: AppError, req: FastifyRequest): PathTarget | null {
  if (err.status !== 400 || !req.principal) return null;
  return pathTargetOf((req.routeOptions.config as RouteNeeds | undefined)?.fixture, req.params);
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a badly encoded URL, an over-long path
 * parameter) get the same envelope and X-Request-Id as every other response.
 */
export function frameworkErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', req.id);
  // No onRequest hook (the guard) runs for these: an upgrade request answered here is closed here (upgrade-close.ts).
  if ((req.raw as { upgrade?: boolean }).upgrade) closeAfterAnswer(req, reply);
  let pending: void | Promise<void>;
  try { pending = rateLimitBeforeRouting(req, reply); } catch (limited) { return sendError(limited, req, reply); }
  if (pending) pending.then(() => sendError(err, req, reply), (limited) => sendError(limited, req, reply));
  else sendError(err, req, reply);
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply: FastifyReply) => {
    // (sendError maps `err` again: the original is what a 5xx logs, with its stack.)
    const target = inputRefusedOnPathRow(toAppError(err, req), req);
    if (!target) return sendError(err, req, reply);
    // ARCHITECTURE "Auth order": membership (404 for a row elsewhere) comes before validation (400). The schema
    // checks the body before the route looks the row up, so the row is looked up here, on this refusal path only.
    // Should the look-up itself fail, the request's own refusal is answered.
    return missingRow(req.server.platform.db, req.principal!, target).then(
      (missing) => { sendError(missing ?? err, req, reply); return reply; },
      () => { sendError(err, req, reply); return reply; });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).type('application/json').send(JSON.stringify({
      success: false, error: { code: 'NOT_FOUND', message: `Route ${req.method} ${req.url.split('?')[0]} not found` },
    }));
  });
}
