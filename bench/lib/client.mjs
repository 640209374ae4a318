// A tiny JSON client for setup work against the platform (not used for measuring).
export function client(baseUrl) {
  async function call(method, path, { token, body, expect } = {}) {
    const headers = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json;
    try { json = text ? JSON.parse(text) : undefined; } catch { json = text; }
    const okStatus = expect ? (Array.isArray(expect) ? expect.includes(res.status) : res.status === expect) : res.ok;
    if (!okStatus) throw new Error(`${method} ${path} -> ${res.status}: ${text.slice(0, 500)}`);
    return json;
  }
  return {
    call,
    get: (path, opts) => call('GET', path, opts),
    post: (path, body, opts) => call('POST', path, { ...opts, body }),
    patch: (path, body, opts) => call('PATCH', path, { ...opts, body }),
    put: (path, body, opts) => call('PUT', path, { ...opts, body }),
    delete: (path, opts) => call('DELETE', path, opts),
  };
}
