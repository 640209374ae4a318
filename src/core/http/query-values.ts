import { Type, type TSchema } from 'typebox';

/** The key under which a handler-checked query value keeps the schema the OpenAPI document shows (openapi.ts). */
export const DOCUMENTED_AS = 'x-documented-as';

/**
 * A query parameter its handler checks itself: the schema takes a string or an array of strings, so that a repeated
 * parameter (`?sig=a&sig=b` arrives as an array) gets the route's own answer (a signed link's 401, the export's
 * VALIDATION_ERROR) rather than the schema's 400. The OpenAPI document shows `documented` in its place, the one value
 * the handler takes (type, enum, pattern): "string or array of strings" gives generated clients no type and no enum.
 * `documented` is never validated, so the handler's checks must say the same; its description is the parameter's.
 */
export function HandlerCheckedQuery(documented: TSchema) {
  const { description } = documented as { description?: string };
  return Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description, [DOCUMENTED_AS]: documented }));
}

/** A querystring schema as the OpenAPI document shows it: each handler-checked value by its documented schema. */
export function documentedQuery(querystring: Record<string, unknown>): Record<string, unknown> {
  const props = querystring.properties as Record<string, Record<string, unknown>> | undefined;
  if (!props || !Object.values(props).some((p) => p?.[DOCUMENTED_AS])) return querystring;
  return { ...querystring, properties: Object.fromEntries(Object.entries(props).map(([k, p]) => [k, (p?.[DOCUMENTED_AS] as Record<string, unknown> | undefined) ?? p])) };
}
