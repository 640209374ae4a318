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
