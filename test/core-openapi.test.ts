/** The interface description: OpenAPI 3.1 at GET /v1/openapi.json, covering every route, valid for a standard linter. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp, type TestApp } from './helpers.js';
import { SERVER_INFO } from '../src/transports/mcp/dispatcher.js';

type Doc = {
  openapi: string; info: { title: string; version: string };
  paths: Record<string, Record<string, {
    operationId?: string; summary?: string; security?: unknown[];
    parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: unknown }>;
    requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
    responses?: Record<string, { $ref?: string; description?: string; content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }>;
  }>>;
  components?: { securitySchemes?: Record<string, unknown>; responses?: Record<string, unknown> };
};

type Answer = { $ref?: string; description?: string; content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> };
let t: TestApp;
let doc: Doc;
/** A response, or the component a `$ref` names. */
const resolved = (res: Answer): Answer => res.$ref ? (doc.components?.responses?.[res.$ref.replace('#/components/responses/', '')] as Answer) : res;
let tmp: string;
const oasPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

beforeAll(async () => {
  t = await buildTestApp();
  const res = await t.app.inject({ url: '/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
});
afterAll(async () => { await t.close(); rmSync(tmp, { recursive: true, force: true }); });

describe('GET /v1/openapi.json', () => {
  it('is OpenAPI 3.1 describing version 1.0.0, public, with bearer security', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('the version is package.json\'s, the same in the document, /v1/health and the MCP serverInfo', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(doc.info.version).toBe(version);
    expect((await t.app.inject({ url: '/v1/health' })).json().data.version).toBe(version);
    expect(SERVER_INFO.version).toBe(version);
  });

  it('contains every registered route, with path parameters as {param}', () => {
    const missing = t.app.routeList
      .filter((r) => !(r.schema as { hide?: boolean } | undefined)?.hide) // only the document itself
      .filter((r) => !doc.paths[oasPath(r.url)]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    expect(Object.keys(doc.paths).filter((p) => p.includes(':'))).toEqual([]);
  });

  it('every operation has an operationId, a summary, its security and the error envelope for 4XX and 5XX', () => {
    const ids = new Set<string>();
    const problems: string[] = [];
    for (const r of t.app.routeList) {
      const op = doc.paths[oasPath(r.url)]?.[r.method.toLowerCase()];
      if (!op) continue;
      const name = `${r.method} ${r.url}`;
      if (!op.operationId) problems.push(`${name}: no operationId`);
      else if (ids.has(op.operationId)) problems.push(`${name}: duplicate operationId ${op.operationId}`);
      else ids.add(op.operationId);
      if (!op.summary) problems.push(`${name}: no summary`);
      const expected = r.config.auth !== 'public' ? [{ bearerAuth: [] }] : r.config.bearerInHandler ? [{ bearerAuth: [] }, {}] : [];
      if (JSON.stringify(op.security) !== JSON.stringify(expected)) problems.push(`${name}: security does not match auth`);
      for (const cls of ['4XX', '5XX']) {
        if (!op.responses?.[cls]?.content?.['application/json']?.schema) problems.push(`${name}: no ${cls} error envelope`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('each operation lists the error statuses its declarations make possible, with their codes (the rest stay under 4XX)', () => {
    expect(doc.paths['/v1/documents/{id}'].put.responses?.['404']).toEqual({ $ref: '#/components/responses/Error404' });
    expect(resolved(doc.paths['/v1/documents/{id}'].put.responses!['404']).content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    const statuses = (p: string, m: string) => Object.keys(doc.paths[p][m].responses ?? {}).filter((k) => /^\d+$/.test(k)).sort();
    expect(statuses('/v1/documents/{id}', 'put')).toEqual(['200', '400', '401', '403', '404', '413', '415', '429']);
    expect(statuses('/v1/health', 'get')).toEqual(['200', '429']);
    expect(statuses('/v1/documents/{id}/file', 'put')).toEqual(expect.arrayContaining(['413', '415']));
    const d = (p: string, m: string, status: string) => resolved(doc.paths[p][m].responses![status]).description;
    expect(d('/v1/documents/{id}/file', 'put', '415')).toBe('UNSUPPORTED_MEDIA_TYPE: send application/pdf or application/octet-stream');
    expect(d('/v1/documents/{id}', 'put', '403')).toBe('Not allowed: FORBIDDEN, PERMISSION_DENIED, FEATURE_DISABLED');
    expect(d('/v1/documents/{id}', 'put', '404')).toBe('NOT_FOUND: no such resource, or one of another organization');
    expect(d('/v1/mcp', 'post', '503')).toBe('SERVICE_UNAVAILABLE: the rate limiter cannot answer (fail closed)');
    // Only the document: the route itself keeps one envelope schema per class.
    const route = t.app.routeList.find((r) => r.url === '/v1/documents/:id' && r.method === 'PUT')!;
    expect(Object.keys((route.schema as { response: object }).response).sort()).toEqual(['200', '4XX', '5XX']);
  });

  it('request schemas: path, query and body as each route declares them', () => {
    const problems: string[] = [];
    for (const r of t.app.routeList) {
      const op = doc.paths[oasPath(r.url)]?.[r.method.toLowerCase()];
      if (!op) continue;
      const name = `${r.method} ${r.url}`;
      const params = op.parameters ?? [];
      for (const p of [...r.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1])) {
        const found = params.find((x) => x.in === 'path' && x.name === p);
        if (!found?.schema || !found.required) problems.push(`${name}: path parameter ${p} not described`);
      }
      const q = r.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
      for (const k of Object.keys(q?.properties ?? {})) {
        if (!params.some((x) => x.in === 'query' && x.name === k && x.schema)) problems.push(`${name}: query parameter ${k} not described`);
      }
      if (r.schema?.body && !Object.values(op.requestBody?.content ?? {}).some((c) => c.schema)) problems.push(`${name}: body not described`);
      // A body that may be left out is not required; every other body is.
      if (r.schema?.body && op.requestBody?.required !== !r.config.bodyOptional) problems.push(`${name}: requestBody.required is ${op.requestBody?.required}`);
    }
    expect(problems).toEqual([]);
    expect(t.app.routeList.filter((r) => r.config.bodyOptional).map((r) => `${r.method} ${r.url}`).sort())
      .toEqual(['POST /v1/collaboration/ticket', 'POST /v1/documents/:id/file/signed-url']);
  });

  it('binary routes name their media types: the PDF upload and download, the sheet export', () => {
    const file = doc.paths['/v1/documents/{id}/file'];
    // Both media types the upload takes (docs/documents.md, Files).
    expect(Object.keys(file.put.requestBody?.content ?? {})).toEqual(['application/pdf', 'application/octet-stream']);
    for (const type of ['application/pdf', 'application/octet-stream']) expect(file.put.requestBody?.content?.[type].schema).toEqual({ type: 'string', format: 'binary' });
    expect(Object.keys(file.get.responses?.['200'].content ?? {})).toEqual(['application/pdf']);
    // Bearer or the signed query: the credential is optional in the document, as in the handler.
    expect(file.get.security).toEqual([{ bearerAuth: [] }, {}]);
    expect(Object.keys(doc.paths['/v1/sheet/{documentId}/export'].get.responses?.['200'].content ?? {}).sort()).toEqual([
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv; charset=utf-8', 'text/tab-separated-values; charset=utf-8']);
    expect(doc.paths['/v1/openapi.json']?.get?.security).toEqual([]);
  });

  it('every operation describes a success (2XX) response, or 501 for the operations the spec reserves', () => {
    const declared = (r: { url: string; method: string }) => Object.keys(doc.paths[oasPath(r.url)]?.[r.method.toLowerCase()]?.responses ?? {});
    const without = t.app.routeList.filter((r) => doc.paths[oasPath(r.url)]?.[r.method.toLowerCase()] && !declared(r).some((c) => /^2(\d\d|XX)$/.test(c)))
      .map((r) => `${r.method} ${r.url}`);
    // A route that answers 204 declares it, e.g. `response: { 204: Type.Null() }`. Spec 4.6 reserves alert rule
    // update and delete: they always answer 501, which is what they declare.
    expect(without).toEqual(['PUT /v1/alert-rules/:alertRuleId', 'DELETE /v1/alert-rules/:alertRuleId']);
    for (const method of ['PUT', 'DELETE']) expect(declared({ method, url: '/v1/alert-rules/:alertRuleId' })).toContain('501');
  });

  it('deprecations are in the document (spec 9): the collaboration token parameter, the skills alias\'s headers, a legacy key\'s header', () => {
    for (const p of ['/v1/collaboration/ws', '/v1/collaboration/ws/{documentId}', '/v1/yjs/ws', '/v1/yjs/ws/{documentId}']) {
      const params = doc.paths[p].get.parameters ?? [];
      expect(params.filter((x) => x.in === 'query' && (x as { deprecated?: boolean }).deprecated).map((x) => x.name), p).toEqual(['token']);
    }
    const skills = doc.paths['/v1/settings/skills'].get;
    expect((skills as { deprecated?: boolean }).deprecated).toBe(true);
    for (const status of ['200', '4XX', '5XX']) {
      expect(Object.keys(skills.responses?.[status]?.headers ?? {}), status).toEqual(expect.arrayContaining(['Deprecation', 'Link']));
    }
    // Any route answers a legacy key with Deprecation; only the alias names a successor.
    expect((doc.paths['/v1/me'].get.responses?.['200']?.headers as Record<string, { description?: string }> | undefined)?.Deprecation?.description).toMatch(/legacy API key/);
    expect(Object.keys(doc.paths['/v1/me'].get.responses?.['200']?.headers ?? {})).not.toContain('Link');
  });

  it('every answer documents the request id and the rate-limit headers; errors Retry-After; routes their own headers', () => {
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, res] of Object.entries(op.responses ?? {})) {
          const names = Object.keys(resolved(res).headers ?? {});
          expect(names, `${method} ${p} ${status}`).toEqual(expect.arrayContaining(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
          if (/^[45]/.test(status)) expect(names, `${method} ${p} ${status}`).toContain('Retry-After');
        }
      }
    }
    const okHeaders = (p: string, method: string) => Object.keys(doc.paths[p][method].responses?.['200']?.headers ?? {});
    expect(okHeaders('/v1/bootstrap', 'get')).toEqual(expect.arrayContaining(['ETag', 'Cache-Control', 'Vary']));
    expect(okHeaders('/v1/slugs/availability', 'get')).toContain('Cache-Control');
    expect(okHeaders('/v1/sheet/{documentId}/export', 'get')).toEqual(expect.arrayContaining(['Content-Disposition', 'Cache-Control']));
    expect(okHeaders('/v1/documents/{id}/file', 'get')).toEqual(expect.arrayContaining(['Content-Disposition', 'Cache-Control']));
    expect(okHeaders('/v1/mcp', 'post')).toContain('MCP-Session-Id');
    expect(Object.keys(doc.paths['/v1/mcp'].post.responses?.['200']?.content ?? {}).sort()).toEqual(['application/json', 'text/event-stream']);
    // Checked by the handler after the credential, yet required: the document says so.
    const exportParams = doc.paths['/v1/sheet/{documentId}/export'].get.parameters ?? [];
    expect(exportParams.filter((x) => x.in === 'query' && x.required).map((x) => x.name).sort()).toEqual(['format', 'token']);
  });

  it('query values the handler checks itself show their real type and allowed values, not "string or array of strings"', () => {
    const query = (p: string) => Object.fromEntries((doc.paths[p].get.parameters ?? []).filter((x) => x.in === 'query')
      .map((x) => [x.name, { required: x.required, description: x.description, schema: x.schema }])) as Record<string, { required?: boolean; description?: string; schema?: unknown }>;
    const exportQuery = query('/v1/sheet/{documentId}/export');
    expect(Object.fromEntries(Object.entries(exportQuery).map(([k, v]) => [k, v.schema]))).toEqual({
      token: { type: 'string' },
      format: { type: 'string', enum: ['xlsx', 'csv', 'tsv'] },
      sheet_id: { type: 'integer', minimum: 0, maximum: 9999 },
      header_row: { type: 'boolean', default: true },
      value_mode: { type: 'string', enum: ['displayed', 'raw'], default: 'displayed' },
      filename: { type: 'string', minLength: 1, maxLength: 200 },
    });
    expect(exportQuery.format).toMatchObject({ required: true, description: 'xlsx | csv | tsv (required)' });
    const signed = query('/v1/documents/{id}/file');
    expect(Object.fromEntries(Object.entries(signed).map(([k, v]) => [k, [v.required, v.schema]]))).toEqual({
      org: [false, { type: 'string', format: 'uuid', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }],
      exp: [false, { type: 'integer', minimum: 1, maximum: 999_999_999_999 }],
      sig: [false, { type: 'string', pattern: '^[0-9a-f]{64}$' }],
    });
    // No query parameter anywhere is documented as the array the validated schema takes for a repeated one.
    const loose: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const x of op.parameters ?? []) if (x.in === 'query' && JSON.stringify(x.schema).includes('"type":"array"')) loose.push(`${method} ${p} ${x.name}`);
      }
    }
    expect(loose).toEqual([]);
    expect(JSON.stringify(doc)).not.toContain('x-documented-as');
  });

  it('WebSocket routes describe their query and path parameters; the path variants take the id only in the path', () => {
    const params = (p: string) => (doc.paths[p].get.parameters ?? []).map((x) => ({ in: x.in, name: x.name, required: x.required, described: typeof x.description === 'string' }));
    expect(params('/v1/sheet/ws')).toEqual([
      { in: 'query', name: 'token', required: true, described: true },
      { in: 'query', name: 'documentId', required: true, described: true },
    ]);
    for (const p of ['/v1/collaboration/ws/{documentId}', '/v1/yjs/ws/{documentId}']) {
      expect(params(p), p).toEqual([
        { in: 'query', name: 'ticket', required: false, described: true },
        { in: 'query', name: 'token', required: false, described: true },
        { in: 'path', name: 'documentId', required: true, described: true },
      ]);
    }
    for (const p of ['/v1/collaboration/ws', '/v1/yjs/ws']) {
      expect(params(p), p).toEqual([
        { in: 'query', name: 'ticket', required: false, described: true },
        { in: 'query', name: 'token', required: false, described: true },
        { in: 'query', name: 'documentId', required: false, described: true },
      ]);
    }
  });

  it('passes `redocly lint` (recommended rules; warnings allowed, errors not)', async () => {
    const file = path.join(tmp, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const bin = path.resolve('node_modules/.bin/redocly');
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(bin, ['lint', file, '--format', 'stylish'], {
        cwd: tmp, timeout: 110_000, maxBuffer: 32 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', CI: 'true' },
      }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}\n${stderr}` }));
    });
    const errors = out.split('\n').filter((l) => /\berror\b/i.test(l) && !/0 errors?/i.test(l));
    expect({ code, errors: code === 0 ? [] : errors.length ? errors : [out.slice(-4000)] }).toEqual({ code: 0, errors: [] });
  }, 120_000);
});

describe('GET /docs', () => {
  it('serves the interactive reference as HTML without a credential', async () => {
    const res = await t.app.inject({ url: '/docs' });
    const final = res.statusCode >= 300 && res.statusCode < 400 ? await t.app.inject({ url: new URL(String(res.headers.location), 'http://x/docs').pathname }) : res;
    expect(final.statusCode).toBe(200);
    expect(String(final.headers['content-type'])).toMatch(/text\/html/);
    expect(final.body).toMatch(/<html/i);
  });
});
