/**
 * The network error's code of a failed fetch, for a log line: fetch rejects with `TypeError: fetch failed` and keeps
 * the reason in `cause` (ECONNREFUSED, ENOTFOUND, ECONNRESET...; an AggregateError of each address when a host name
 * has several). NETWORK_ERROR when there is none to name.
 */
export function fetchFailureCode(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; errors?: Array<{ code?: unknown }> } } | null)?.cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  return typeof code === 'string' ? code : 'NETWORK_ERROR';
}
