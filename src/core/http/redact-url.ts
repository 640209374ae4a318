/** Query parameters that carry a credential: a session JWT or API key (`token`), a collaboration ticket, a URL signature. */
const SECRET_PARAMS = /([?&](?:token|ticket|sig|access_token)=)[^&#]*/gi;

/**
 * A request URL as it may be logged: credentials passed in the query (the sheet export's and the deprecated
 * collaboration socket's `token`, tickets, signed-URL signatures) are replaced by `[REDACTED]`, so log readers and
 * log shipping never hold a usable credential.
 */
export function redactUrl(url: string): string {
  return url.indexOf('?') < 0 ? url : url.replace(SECRET_PARAMS, '$1[REDACTED]');
}

/**
 * A JSON value as it may be logged, every string in it redacted like a URL: what a client sends about URLs (a CSP
 * report's `document-uri`, `blocked-uri`, `referrer`) carries their credentials too, e.g. a sheet export's session
 * token. Depth is bounded by the JSON parser (JSON_MAX_DEPTH).
 */
export function redactUrlsIn(value: unknown): unknown {
  if (typeof value === 'string') return redactUrl(value);
  if (Array.isArray(value)) return value.map(redactUrlsIn);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactUrlsIn(v)]));
  return value;
}
