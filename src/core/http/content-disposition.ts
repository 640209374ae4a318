/**
 * A Content-Disposition header value for a download named `filename` (already made safe: core safeFilename): an
 * ASCII `filename` for old clients (every other character, and `"` and `\`, as `_`) and the exact name as RFC 5987
 * `filename*`, which browsers and curl prefer, so a title in any script keeps its name.
 */
export function contentDisposition(type: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/gu, '_');
  // RFC 5987 attr-char leaves out ' ( ) * that encodeURIComponent keeps.
  const exact = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${type}; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
