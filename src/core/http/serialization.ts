import type { FastifyServerOptions } from 'fastify';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Schema = Record<string, unknown>;

const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/** Keywords that make a schema more than "a value of this type" for the serializer. */
const STRUCTURAL = ['properties', 'items', 'prefixItems', 'additionalProperties', 'patternProperties', 'anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref'];

/** The JSON type of a primitive member of an anyOf (`{type}` or a `const`), or null when it is more than that. */
function primitiveType(s: unknown): string | null {
  if (!s || typeof s !== 'object') return null;
  const schema = s as Schema;
  if (STRUCTURAL.some((k) => k in schema)) return null;
  if (typeof schema.type === 'string') return PRIMITIVE_TYPES.has(schema.type) ? schema.type : null;
  if ('const' in schema) {
    const v = schema.const;
    if (v === null) return 'null';
    if (typeof v === 'string' || typeof v === 'boolean') return typeof v;
    if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  }
  return null;
}

/**
 * A copy of a response schema in the form fast-json-stringify serializes fastest, with the same output.
 *
 * Why: for `anyOf` the serializer picks a branch by running a compiled validator on the value, one per branch
 * until one matches (for a nullable timestamp that includes the date-time format check). Our schemas use
 * `anyOf` for nullable fields (`X | null`) and for literal unions, so a page of 50 projects ran hundreds of
 * validations per response. An anyOf whose members are all plain values (a type, or a const) becomes one
 * multi-type schema (`type: ['string', 'null']`), and so does `object | null` / `array | null`; the serializer
 * handles those with a typeof check, and writes the value the same way. Everything else is copied as is (request validation and the OpenAPI document keep
 * the schemas as written; only the serializer sees this form).
 */
export function forSerialization(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forSerialization);
  if (!schema || typeof schema !== 'object') return schema;
  const s = schema as Schema;
  if (Array.isArray(s.anyOf) && s.anyOf.length > 0) {
    // `X | null` where X is an object or array schema: the same, with null allowed (a typeof check, no validator).
    const members = s.anyOf as Schema[];
    const nonNull = members.filter((m) => primitiveType(m) !== 'null');
    if (nonNull.length === 1 && members.length > 1 && (nonNull[0].type === 'object' || nonNull[0].type === 'array')
      && !nonNull[0].anyOf && !nonNull[0].oneOf && !nonNull[0].allOf && !nonNull[0].$ref) {
      const { anyOf: _anyOf, ...rest } = s;
      return { ...copy(rest), ...copy(nonNull[0]), type: [nonNull[0].type as string, 'null'] };
    }
    const types = s.anyOf.map(primitiveType);
    if (types.every((t) => t !== null)) {
      const { anyOf, ...rest } = s;
      const distinct = [...new Set(types as string[])];
      // integer and number together: number covers both
      const merged = distinct.includes('number') ? distinct.filter((t) => t !== 'integer') : distinct;
      // a date-time format is kept (the serializer writes Date objects as RFC 3339 for it)
      const formats = [...new Set((anyOf as Schema[]).map((m) => m.format).filter((f): f is string => typeof f === 'string'))];
      return { ...copy(rest), type: merged.length === 1 ? merged[0] : merged, ...(formats.length === 1 ? { format: formats[0] } : {}) };
    }
  }
  return copy(s);
}

function copy(s: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    // Values of `properties` / `patternProperties` / `$defs` are maps of schemas; `const`, `enum`, `default`,
    // `examples` are data and stay as they are.
    if (k === 'const' || k === 'enum' || k === 'default' || k === 'examples') out[k] = v;
    else if ((k === 'properties' || k === 'patternProperties' || k === '$defs' || k === 'definitions') && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v as Schema).map(([name, sub]) => [name, forSerialization(sub)]));
    } else out[k] = typeof v === 'object' && v !== null ? forSerialization(v) : v;
  }
  return out;
}

/** Fastify's default response serializer (fast-json-stringify), fed the forSerialization() form of each schema. */
export function serializerSchemaController(): NonNullable<FastifyServerOptions['schemaController']> {
  return {
    compilersFactory: {
      buildSerializer: (externalSchemas: unknown, serializerOpts: unknown) => {
        const compile = SerializerSelector()(externalSchemas as never, serializerOpts as never);
        return (route: { schema: unknown; method: string; url: string; httpStatus: string }) =>
          compile({ ...route, schema: forSerialization(route.schema) } as never);
      },
    },
  } as NonNullable<FastifyServerOptions['schemaController']>;
}
