import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { AppError } from '../errors.js';
import { assertStorableText } from '../text.js';
import type { RouteNeeds } from './route-config.js';

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

/**
 * Whether JSON text may parse to a value assertStorableText refuses: a lone surrogate can only come from a
 * \uD800-\uDFFF escape, a NUL from \u0000 (JSON has no raw control characters in strings), Infinity from a number
 * past the double range. Only such texts need their parsed value walked (a walk of megabytes costs a second).
 */
export function mayHoldUnstorable(text: string): boolean {
  return NUL_ESCAPE.test(text) || LONE_SURROGATE_ESCAPE.test(text) || HUGE_NUMBER.test(text);
}

type ParserDone = (err: Error | null, body?: unknown) => void;

/** A \\u escape of a UTF-16 surrogate (D800-DFFF): the only way a JSON text can carry an unpaired one. */
const LONE_SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A \u0000 escape: the only way a JSON text can carry the NUL character, which PostgreSQL text and jsonb refuse. */
const NUL_ESCAPE = /\\u0000/;
/**
 * A number literal that may be past the double range, so may parse as Infinity: any with an exponent (`1` and 300
 * zeros then `e10` is past it with a short exponent), or 309 digits in a row. Bodies with one are walked.
 */
const HUGE_NUMBER = /[0-9][eE][+-]?[0-9]|[0-9]{309}/;

/**
 * The platform's JSON body parsing, as a content-type parser: an empty body is 400 INVALID_JSON on a route that
 * takes a body (unless it may be left out) and "no body" elsewhere; over-deep JSON is refused
 * before parsing (413 PAYLOAD_TOO_LARGE with details.limit); unparsable JSON is 400 INVALID_JSON; __proto__ keys are
 * refused. Also registered for JSON that arrives under another media type (CSP reports: application/csp-report).
 */
/**
 * The 413 of a body nested deeper than `maxDepth`: spec part 7 names `details.limit` (here the depth) and
 * `details.maxBytes` (the route's byte limit).
 */
export function tooDeep(req: FastifyRequest, maxDepth: number): AppError {
  const maxBytes = req.routeOptions.bodyLimit ?? req.server.initialConfig.bodyLimit;
  return new AppError('PAYLOAD_TOO_LARGE', `JSON nesting deeper than ${maxDepth} levels`, { limit: maxDepth, maxBytes });
}

/** A `charset` parameter of the Content-Type, if any: `utf-8` (any case), `"utf-8"` or another. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/**
 * The text of a JSON body (parsed as a Buffer): JSON is UTF-8 (RFC 8259), so another declared charset is
 * 415 UNSUPPORTED_MEDIA_TYPE, and bytes that are not UTF-8 are 400 INVALID_JSON. Decoding them anyway would replace
 * them with U+FFFD and store what the caller did not send.
 */
export function jsonBodyText(req: FastifyRequest, body: Buffer): string | AppError {
  const charset = CHARSET.exec(String(req.headers['content-type'] ?? ''))?.[1];
  // US-ASCII is a subset of UTF-8: such a body is checked as UTF-8 like any other.
  if (charset !== undefined && !/^(utf-?8|us-ascii|ascii)$/i.test(charset)) {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', `JSON bodies are UTF-8 (RFC 8259); "charset=${charset}" is not accepted: send the body in UTF-8 (charset=utf-8, or no charset)`);
  }
  if (!isUtf8(body)) return new AppError('INVALID_JSON', 'Request body is not valid UTF-8 (JSON text must be UTF-8, RFC 8259)');
  return body.toString('utf8');
}

/**
 * `notStored`: a body the route never stores (browsers' CSP reports, only logged), taken as sent: bytes that are not
 * UTF-8 are decoded with U+FFFD and NUL characters kept, since refusing a browser's report helps no one.
 */
export function jsonBodyParser(maxDepth: number, opts: { notStored?: boolean } = {}) {
  return (req: FastifyRequest, raw: string | Buffer, done: ParserDone): void => {
    const text = opts.notStored ? (raw as Buffer).toString('utf8') : jsonBodyText(req, raw as Buffer);
    if (text instanceof AppError) return done(text, undefined);
    if (text.trim() === '') {
      // An empty JSON body is not parseable JSON (spec part 7) where the route takes a body, unless the route says
      // the body may be left out (RouteNeeds.bodyOptional) or speaks a protocol that answers it itself (MCP).
      const needs = req.routeOptions.config as RouteNeeds | undefined;
      if (req.routeOptions.schema?.body && !needs?.bodyOptional && !needs?.protocol) {
        return done(new AppError('INVALID_JSON', 'Request body is empty; send a JSON object'), undefined);
      }
      return done(null, undefined);
    }
    if (jsonDepthExceeds(text, maxDepth)) return done(tooDeep(req, maxDepth), undefined);
    let value: unknown;
    try {
      value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (err) {
      const message = (err as Error).message;
      // Parseable JSON with a key that would reach an object's prototype: a field no body accepts, not bad JSON.
      if (/forbidden (prototype|constructor) property/.test(message)) {
        return done(new AppError('VALIDATION_ERROR', 'Fields named "__proto__" or "constructor.prototype" are not accepted', { reason: 'UNKNOWN_FIELD' }), undefined);
      }
      return done(new AppError('INVALID_JSON', invalidJsonMessage(message)), undefined);
    }
    // A lone surrogate can only come from a \uD800-\uDFFF escape and a NUL from \u0000 (JSON has no raw control
    // characters in strings), so only such bodies are walked: the refusal names the field, which the database's
    // refusal of the write could not.
    if (!opts.notStored && mayHoldUnstorable(text)) {
      try { assertStorableText(value, { nul: true }); } catch (err) { return done(err as Error, undefined); }
    }
    done(null, value);
  };
}

/**
 * The answer to unparsable JSON, from the parser's message without what it quotes of the body: for an unexpected
 * token V8 quotes the text around it (`Unexpected token 'H', ..."assword": Hunter2Sec"... is not valid JSON`), which
 * would put part of a password or token into the answer and the request's log line. Its other messages name only
 * what was expected and where ("Expected ':' after property name in JSON at position 5"): those are kept.
 */
export function invalidJsonMessage(parserMessage: string): string {
  if (/ in JSON at position \d+/.test(parserMessage) && !/^Unexpected token/.test(parserMessage) && !/"/.test(parserMessage)) {
    return `Request body is not valid JSON: ${parserMessage}`;
  }
  if (/^Unexpected end of JSON input/.test(parserMessage)) return 'Request body is not valid JSON: it ends too early';
  return 'Request body is not valid JSON: an unexpected character (strings are in double quotes; values are strings, numbers, true, false, null, objects or arrays)';
}

/** Replaces Fastify's JSON parser with jsonBodyParser. */
export function installJsonParser(app: FastifyInstance, maxDepth: number): void {
  app.removeContentTypeParser('application/json');
  // All bodies are JSON (spec part 1); other media types get 415. A route that takes another type
  // (CSV, iCalendar, binary) registers its own parser inside its plugin.
  app.removeContentTypeParser('text/plain');
  // Fastify tests the RegExp against the whole header, parameters included: `application/json; charset=utf-8` is JSON.
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json\s*(;.*)?$/i, { parseAs: 'buffer' }, jsonBodyParser(maxDepth));
}
