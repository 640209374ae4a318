import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifyInstance } from 'fastify';
import { isUuid } from '../ids.js';
import { DOCUMENTED_AS } from './query-values.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

const rfc3339DateTime = fullFormats['date-time'] as { validate: (s: string) => boolean; compare: (a: string, b: string) => number | undefined };
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the instants RFC 3339 can name that PostgreSQL stores and reads back as such. */
const FIRST_MS = -62_135_596_800_000;
const LAST_MS = 253_402_300_799_999;

/**
 * RFC 3339 date-time (ajv-formats' full check) whose instant lies in years 1-9999 UTC: year 0000 passes RFC 3339
 * but PostgreSQL has no year 0 (the write failed with 500), and an offset can move 0001-01-01 into 1 BC.
 */
function storableDateTime(s: string): boolean {
  if (!rfc3339DateTime.validate(s)) return false;
  const ms = Date.parse(s);
  return ms >= FIRST_MS && ms <= LAST_MS;
}

/**
 * The platform's Ajv: formats (date-time limited as above, uuid as PostgreSQL reads it), the `x-platform-assigned` and `x-documented-as` annotations, defaults filled,
 * strict objects. `coerce` for query strings and path parameters (text arrives, the schema's types are wanted);
 * bodies and MCP tool arguments are validated as sent.
 */
export function newAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false, // strict bodies reject unknown keys instead of dropping them
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: storableDateTime, compare: rfc3339DateTime.compare });
  // ajv-formats' uuid also takes the `urn:uuid:` form, which PostgreSQL's uuid type refuses: such an id passed
  // validation and failed in the database (500 DATABASE_ERROR instead of 400 INVALID_ID_FORMAT).
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  ajv.addKeyword({ keyword: 'x-platform-assigned' });
  // What the OpenAPI document shows of a query value the handler checks (query-values.ts): not validated.
  ajv.addKeyword({ keyword: DOCUMENTED_AS });
  // Every validator this Ajv compiles also writes the UUIDs it accepted in lower case: PostgreSQL reads either case,
  // but an id echoed as sent (`DELETE` answers) or used as an in-process key (collaboration rooms) must be canonical.
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: object) => {
    const fn = compile(schema);
    const canonical = uuidCanonicalizer(schema);
    if (!canonical) return fn;
    const wrapped = ((data: unknown) => {
      // Before validating too, so that `uniqueItems` sees one id written in two cases as the same id.
      canonical(data);
      const valid = fn(data);
      wrapped.errors = fn.errors;
      if (valid) canonical(data); // what validation coerced (a query value made an array) is written in lower case too
      return valid;
    }) as ValidateFunction;
    return wrapped;
  }) as typeof ajv.compile;
  return ajv;
}

type Canonicalize = (value: unknown) => unknown;
type SchemaNode = { format?: string; properties?: Record<string, SchemaNode>; items?: SchemaNode; anyOf?: SchemaNode[]; oneOf?: SchemaNode[] };

/** A function that lower-cases, in place, every value of `format: uuid` the schema describes; null when it has none. */
function uuidCanonicalizer(schema: unknown): Canonicalize | null {
  const s = schema as SchemaNode | undefined;
  if (!s || typeof s !== 'object') return null;
  // Only a UUID: in a union with another string the value may be that other string.
  if (s.format === 'uuid') return (v) => (typeof v === 'string' && isUuid(v) ? v.toLowerCase() : v);
  const parts: Canonicalize[] = [];
  for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
    const c = uuidCanonicalizer(branch);
    if (c) parts.push(c);
  }
  const props = Object.entries(s.properties ?? {}).flatMap(([k, p]) => { const c = uuidCanonicalizer(p); return c ? [[k, c] as const] : []; });
  if (props.length) {
    parts.push((v) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        const o = v as Record<string, unknown>;
        for (const [k, c] of props) if (Object.hasOwn(o, k)) o[k] = c(o[k]);
      }
      return v;
    });
  }
  const item = s.items ? uuidCanonicalizer(s.items) : null;
  if (item) parts.push((v) => { if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = item(v[i]); return v; });
  if (!parts.length) return null;
  return (v) => parts.reduce((acc, c) => c(acc), v);
}

/**
 * Bodies are validated as sent (no type coercion: "5" is not a number); query strings and path
 * parameters arrive as text and are coerced to the schema's types.
 */
export function installValidators(app: FastifyInstance): void {
  const strict = newAjv(false);
  const loose = newAjv(true);
  const cache = new WeakMap<object, ValidateFunction>();
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : loose;
    const key = schema as object;
    let fn = httpPart === 'body' ? cache.get(key) : undefined;
    if (!fn) { fn = ajv.compile(schema); if (httpPart === 'body') cache.set(key, fn); }
    return httpPart === 'body' ? fn : integerTextOnly(schema, fn);
  });
}

/** Integer-typed properties of an object schema (`type: 'integer'`, alone or in an anyOf). */
function integerProperties(schema: unknown): string[] {
  const props = (schema as { properties?: Record<string, { type?: unknown; anyOf?: Array<{ type?: unknown }> }> })?.properties ?? {};
  return Object.entries(props).filter(([, p]) => p?.type === 'integer' || (Array.isArray(p?.type) && p.type.includes('integer'))
    || (p?.anyOf ?? []).some((m) => m?.type === 'integer')).map(([name]) => name);
}

const INTEGER_TEXT = /^-?\d+$/;

/**
 * Query and path integers must be written as integers: Ajv's coercion reads any JavaScript number, so `limit=1e2`
 * was 100 and `limit=0x10` 16. The text is checked before coercion; the error is the one Ajv gives for a wrong type.
 */
function integerTextOnly(schema: unknown, fn: ValidateFunction): ValidateFunction {
  const names = integerProperties(schema);
  if (!names.length) return fn;
  const guarded = ((data: Record<string, unknown> | undefined) => {
    for (const name of names) {
      const raw = data?.[name];
      const texts = Array.isArray(raw) ? raw : [raw];
      if (texts.some((t) => typeof t === 'string' && !INTEGER_TEXT.test(t))) {
        guarded.errors = [{ instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, keyword: 'type', params: { type: 'integer' }, message: 'must be integer' }];
        return false;
      }
    }
    const valid = fn(data);
    guarded.errors = fn.errors;
    return valid;
  }) as ValidateFunction;
  return guarded;
}
