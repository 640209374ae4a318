import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

function build(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false, // strict bodies reject unknown keys instead of dropping them
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-platform-assigned' });
  return ajv;
}

/**
 * Bodies are validated as sent (no type coercion: "5" is not a number); query strings and path
 * parameters arrive as text and are coerced to the schema's types.
 */
export function installValidators(app: FastifyInstance): void {
  const strict = build(false);
  const loose = build(true);
  const cache = new WeakMap<object, ValidateFunction>();
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : loose;
    const key = schema as object;
    let fn = httpPart === 'body' ? cache.get(key) : undefined;
    if (!fn) { fn = ajv.compile(schema); if (httpPart === 'body') cache.set(key, fn); }
    return fn;
  });
}
