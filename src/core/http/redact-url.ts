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
