import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { AppError } from '../errors.js';

/** Deepest nesting of arrays and objects in a JSON text, stopping early once past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped char
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) { if (++depth > limit) return true; }
    else if (c === 125 || c === 93) depth--;
  }
  return false;
}

type ParserDone = (err: Error | null, body?: unknown) => void;

/**
 * The platform's JSON body parsing, as a content-type parser: an empty body is "no body"; over-deep JSON is refused
 * before parsing (413 PAYLOAD_TOO_LARGE with details.limit); unparsable JSON is 400 INVALID_JSON; __proto__ keys are
 * refused. Also registered for JSON that arrives under another media type (CSP reports: application/csp-report).
 */
export function jsonBodyParser(maxDepth: number) {
  return (req: FastifyRequest, body: string | Buffer, done: ParserDone): void => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    if (jsonDepthExceeds(text, maxDepth)) {
      // Spec part 7: 413 carries `details.limit` (here the depth) and `details.maxBytes` (the route's byte limit).
      const maxBytes = req.routeOptions.bodyLimit ?? req.server.initialConfig.bodyLimit;
      return done(new AppError('PAYLOAD_TOO_LARGE', `JSON nesting deeper than ${maxDepth} levels`, { limit: maxDepth, maxBytes }), undefined);
    }
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (err) {
      done(new AppError('INVALID_JSON', `Request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  };
}

/** Replaces Fastify's JSON parser with jsonBodyParser. */
export function installJsonParser(app: FastifyInstance, maxDepth: number): void {
  app.removeContentTypeParser('application/json');
  // All bodies are JSON (spec part 1); other media types get 415. A route that takes another type
  // (CSV, iCalendar, binary) registers its own parser inside its plugin.
  app.removeContentTypeParser('text/plain');
  // Fastify tests the RegExp against the whole header, parameters included: `application/json; charset=utf-8` is JSON.
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json\s*(;.*)?$/i, { parseAs: 'string' }, jsonBodyParser(maxDepth));
}
