/** The part of an Ajv error that describing a failed union needs (Ajv's ErrorObject fits it). */
export interface UnionBranchError { keyword: string; params: Record<string, unknown> }

/**
 * The values a failed union of literals allows, from its branches' errors: TypeBox `Union([Literal...])` fails as one
 * `const` error per value (and a `type: null` error when the union is nullable), then `anyOf`. Null when a branch is
 * more than a literal, so the caller describes the failure some other way. Shared by the REST error mapping and the
 * MCP argument errors, so both say "must be one of: ..." the same way.
 */
export function allowedLiterals(branches: UnionBranchError[]): unknown[] | null {
  if (!branches.some((x) => x.keyword === 'const')) return null;
  if (!branches.every((x) => x.keyword === 'const' || (x.keyword === 'type' && x.params.type === 'null'))) return null;
  return branches.map((x) => (x.keyword === 'const' ? x.params.allowedValue : null));
}

export const oneOfMessage = (allowed: unknown[]): string => `must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;

/** An Ajv error with its path (Ajv's ErrorObject fits it). */
export interface PathError extends UnionBranchError { instancePath: string; message?: string }

/**
 * A union of literals fails as one `const` error per allowed value, then `anyOf`: one `enum` error saying "must be
 * one of: a, b, c" (with `params.allowedValues`) instead of the first branch's "must be equal to constant". Null when
 * the first error is not such a union's. Used by the REST error mapping and the CLI.
 */
export function asEnumError(errors: PathError[]): PathError | null {
  const first = errors[0];
  if (!first || first.keyword !== 'const') return null;
  const allowed = allowedLiterals(errors.filter((x) => x.keyword !== 'anyOf' && x.instancePath === first.instancePath));
  return allowed && { keyword: 'enum', instancePath: first.instancePath, message: oneOfMessage(allowed), params: { allowedValues: allowed } };
}
