/** Core contracts: envelope shapes, the error table of spec part 7, Fastify's own errors, 5xx sanitizing, request ids. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { appWithCapturedLogs, bearer, buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from './helpers.js';
import { AppError, ERROR_STATUS, type ErrorCode } from '../src/core/errors.js';
import { installErrorHandler, toAppError } from '../src/core/http/error-handler.js';
import { installValidators } from '../src/core/http/validation.js';
import { installJsonParser } from '../src/core/http/json-parser.js';
import { loadConfig } from '../src/core/config.js';
import { FIXTURES } from './fixtures.js';

/** Spec part 7, transcribed: code -> HTTP status ('4xx' where the spec gives no number). */
const SPEC_ERRORS: Record<string, number | '4xx'> = {
  VALIDATION_ERROR: 400, INVALID_JSON: 400, INVALID_ID_FORMAT: 400, INVALID_PARAMETER: 400, INVALID_INPUT: 400,
  AUTH_REQUIRED: 401, AUTH_TOKEN_INVALID: 401, AUTH_TOKEN_EXPIRED: 401, AUTH_INVALID_CREDENTIALS: 401, INVALID_API_KEY: 401, UNAUTHORIZED: 401,
  BILLING_SUBSCRIPTION_REQUIRED: 402, BILLING_SUBSCRIPTION_PAST_DUE: 402, BILLING_SUBSCRIPTION_CANCELLED: 402,
  FORBIDDEN: 403, PERMISSION_DENIED: 403, FEATURE_DISABLED: 403, MFA_STEPUP_REQUIRED: 403, PROJECT_LIMIT_REACHED: 403, DOMAIN_ALREADY_CLAIMED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409, PROJECT_SLUG_EXISTS: 409, PUBKEY_MISMATCH: 409, OWNERSHIP_NOT_PROVEN: 409, NEEDS_PROVIDER_CONNECTION: 409, consent_already_decided: 409,
  session_ended: 410,
  PAYLOAD_TOO_LARGE: 413, FILE_SIZE_LIMIT_EXCEEDED: 413, RENAME_CORPUS_TOO_LARGE: '4xx',
  CONTENT_POLICY_VIOLATION: 422, DOMAIN_NOT_ON_CLOUDFLARE: 422,
  CRYPTO_FLOOR_VIOLATION: 426,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500, DATABASE_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
  PROCESSING_RESTRICTED: '4xx',
};

describe('error table (spec part 7)', () => {
  it('ERROR_STATUS has every code of the spec with its status', () => {
    for (const [code, status] of Object.entries(SPEC_ERRORS)) {
      const got = (ERROR_STATUS as Record<string, number>)[code];
      expect(got, code).toBeTypeOf('number');
      if (status === '4xx') expect(got >= 400 && got < 500, `${code} is ${got}`).toBe(true);
      else expect(got, code).toBe(status);
    }
  });

  it('AppError takes its status from the table; an explicit status and headers are kept', () => {
    expect(new AppError('NOT_FOUND', 'x').status).toBe(404);
    const e = new AppError('RATE_LIMIT_EXCEEDED', 'x', { limit: 1 }, { headers: { 'Retry-After': '3' } });
    expect([e.status, e.headers, e.details]).toEqual([429, { 'Retry-After': '3' }, { limit: 1 }]);
    expect(new AppError('CONFLICT', 'x', undefined, { status: 422 }).status).toBe(422);
  });

  describe('through the handler', () => {
    let app: FastifyInstance;
    beforeAll(async () => {
      app = Fastify({ logger: false });
      installValidators(app);
      installJsonParser(app, 32);
      installErrorHandler(app);
      app.get('/throw/:code', async (req) => {
        const code = (req.params as { code: string }).code as ErrorCode;
        throw new AppError(code, `message of ${code}`, { where: 'test' }, code === 'RATE_LIMIT_EXCEEDED' ? { headers: { 'Retry-After': '7' } } : undefined);
      });
      app.get('/boom', async () => { throw new Error('connection to 10.0.0.5 failed: password "hunter2" rejected'); });
      app.get('/pg', async () => { throw new pg.DatabaseError('relation "secret_table" does not exist', 100, 'error'); });
      app.get('/http-error', async () => { throw Object.assign(new Error('teapot internals'), { statusCode: 418 }); });
      await app.ready();
    });
    afterAll(async () => { await app.close(); });

    it('every code maps to its status in the error envelope', async () => {
      for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
        const res = await app.inject({ url: `/throw/${code}` });
        expect(res.statusCode, code).toBe(ERROR_STATUS[code]);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        const body = res.json();
        expect(body.success).toBe(false);
        expect(body.error.code).toBe(code);
        if (ERROR_STATUS[code] < 500) {
          expect(body.error).toEqual({ code, message: `message of ${code}`, details: { where: 'test' } });
        } else {
          // 5xx details always carry the request id, whatever the thrower gave.
          expect(typeof body.error.details.requestId).toBe('string');
          expect(Object.keys(body).sort()).toEqual(['error', 'success']);
        }
      }
    });

    it('headers of an AppError are sent (Retry-After on 429)', async () => {
      const res = await app.inject({ url: '/throw/RATE_LIMIT_EXCEEDED' });
      expect(res.headers['retry-after']).toBe('7');
    });

    it('an unexpected error is 500 INTERNAL_ERROR with a sanitized message and details.requestId', async () => {
      const res = await app.inject({ url: '/boom' });
      const err = errorOf(res, 500, 'INTERNAL_ERROR');
      expect(err.message).not.toMatch(/10\.0\.0\.5|hunter2|password/);
      expect(Object.keys(err.details ?? {})).toEqual(['requestId']);
      expect(typeof err.details?.requestId).toBe('string');
    });

    it('a PostgreSQL error is 500 DATABASE_ERROR without the server message', async () => {
      const res = await app.inject({ url: '/pg' });
      const err = errorOf(res, 500, 'DATABASE_ERROR');
      expect(err.message).not.toContain('secret_table');
      expect(typeof err.details?.requestId).toBe('string');
    });

    it('another 4xx error with a status becomes VALIDATION_ERROR, not a 500', async () => {
      errorOf(await app.inject({ url: '/http-error' }), 400, 'VALIDATION_ERROR');
    });
  });

  it('toAppError: pg errors are DATABASE_ERROR, others INTERNAL_ERROR, AppErrors unchanged', () => {
    const req = { id: 'r-1', routeOptions: {}, server: { initialConfig: { bodyLimit: 10 } }, headers: {} } as unknown as FastifyRequest;
    const db = toAppError(new pg.DatabaseError('duplicate key value violates unique constraint "users_email"', 10, 'error'), req);
    expect([db.code, db.status, db.details]).toEqual(['DATABASE_ERROR', 500, { requestId: 'r-1' }]);
    expect(db.message).not.toContain('users_email');
    const other = toAppError(new TypeError('x is undefined at /srv/app/secret.js:10'), req);
    expect([other.code, other.status]).toEqual(['INTERNAL_ERROR', 500]);
    expect(other.message).not.toContain('secret.js');
    const mine = new AppError('CONFLICT', 'dup');
    expect(toAppError(mine, req)).toBe(mine);
  });

  it('toAppError: what a concurrent request causes is answered as such: a referenced row deleted meanwhile 404, a deadlock or serialization failure 409', () => {
    const req = { id: 'r-2', routeOptions: {}, server: { initialConfig: { bodyLimit: 10 } }, headers: {} } as unknown as FastifyRequest;
    const dbError = (code: string, message: string) => Object.assign(new pg.DatabaseError(message, 10, 'error'), { code });
    const gone = toAppError(dbError('23503', 'insert or update on table "relationships" violates foreign key constraint "relationships_org_id_source_entity_id_fkey"'), req);
    expect([gone.code, gone.status, gone.details]).toEqual(['NOT_FOUND', 404, { reason: 'DELETED_CONCURRENTLY' }]);
    expect(gone.message).not.toContain('relationships');
    for (const code of ['40P01', '40001']) {
      const raced = toAppError(dbError(code, 'deadlock detected'), req);
      expect([raced.code, raced.status, raced.details]).toEqual(['CONFLICT', 409, { reason: 'CONCURRENT_CHANGE' }]);
    }
    // A delete refused because rows still refer to it is a server fault (deletes clean up what refers to them).
    const stillReferenced = toAppError(dbError('23503', 'update or delete on table "tasks" violates foreign key constraint "x" on table "y"'), req);
    expect([stillReferenced.code, stillReferenced.status]).toEqual(['DATABASE_ERROR', 500]);
  });
});

describe('on the app', () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => { t = await buildTestApp(); a = await newTenant(t.app); });
  afterAll(async () => { await t.close(); });

  it('success envelope: {success:true, data}', async () => {
    const res = await t.app.inject({ url: '/v1/me', headers: a.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'success']);
    expect(body.success).toBe(true);
  });

  it('a value outside a list of allowed values names them all', async () => {
    const body = errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x', visibility: 'secret' } }), 400, 'VALIDATION_ERROR');
    expect(body.message).toBe('Field "visibility" must be one of: "public", "private", "internal"');
    expect(body.details).toMatchObject({ field: 'visibility', rule: 'enum', allowedValues: ['public', 'private', 'internal'] });
    const query = errorOf(await t.app.inject({ url: '/v1/projects?status=gone', headers: a.auth }), 400, 'INVALID_PARAMETER');
    expect(query.details).toMatchObject({ field: 'status', allowedValues: ['active', 'archived', 'deleted', 'all'] });
  });

  it('an update body without any field names the fields it takes, on every route whose body needs one (minProperties)', async () => {
    // Rows of a's own: on another organization's row, or none, the answer is 404 first (ARCHITECTURE "Auth order").
    const { taskId } = await FIXTURES.task(t.app, a);
    const { projectId } = await FIXTURES.project(t.app, a);
    const notificationId = Object.values(await FIXTURES.notification(t.app, a))[0];
    const routes: Array<[string, Record<string, string>, string[]]> = [
      [`/v1/tasks/${taskId}`, a.auth, ['title', 'description', 'status', 'spec_id', 'priority', 'assignee_id', 'depends_on', 'parent_task_id', 'due_date']],
      [`/v1/projects/${projectId}`, a.auth, ['name', 'slug', 'description', 'visibility', 'is_active', 'settings']],
      [`/v1/notifications/${notificationId}`, a.auth, ['is_read', 'is_archived']],
      [`/v1/admin/organizations/${a.orgId}/entitlements`, bearer(t.rootKey), ['plan_tier', 'subscription_status', 'features']],
    ];
    for (const [url, headers, fields] of routes) {
      // No details.field: no one field is at fault (it was "", with "Request body must NOT have fewer than 1 properties").
      expect(errorOf(await t.app.inject({ method: 'PUT', url, headers, payload: {} }), 400, 'VALIDATION_ERROR'), url).toEqual({
        code: 'VALIDATION_ERROR', message: `Send at least one field to change: ${fields.join(', ')}`, details: { rule: 'minProperties', limit: 1, fields },
      });
    }
  });

  it('a whitespace-only name or title is 400 VALIDATION_ERROR with details.reason "BLANK" on every create route (docs/decisions.md), nothing created', async () => {
    const blank = '  \t ';
    const expires_at = new Date(Date.now() + 86_400_000).toISOString();
    const cases: Array<[string, string, Record<string, unknown>, string, Record<string, string>]> = [
      ['/v1/auth/register', 'name', { email: `blank-${randomUUID()}@example.test`, password: 'Correct-Horse-Battery-9', name: blank, organization_name: 'Org' }, 'name', {}],
      ['/v1/auth/register', 'organization_name', { email: `blank-${randomUUID()}@example.test`, password: 'Correct-Horse-Battery-9', name: 'N', organization_name: blank }, 'organization_name', {}],
      ['/v1/organizations', 'name', { name: blank }, 'name', a.auth],
      ['/v1/api-keys', 'name', { name: blank, scopes: ['projects:read'], expires_at }, 'name', a.auth],
      ['/v1/organizations/current/members', 'name', { email: `blank-${randomUUID()}@example.test`, role: 'member', name: blank }, 'name', a.auth],
      ['/v1/documents', 'title', { title: blank }, 'title', a.auth],
      ['/v1/entities', 'name', { name: blank, entity_type: 'thing' }, 'name', a.auth],
      ['/v1/projects', 'name', { name: blank }, 'name', a.auth],
      [`/v1/admin/organizations/${a.orgId}/scim-tokens`, 'name', { name: blank }, 'name', bearer(t.rootKey)],
    ];
    for (const [url, what, payload, field, headers] of cases) {
      const err = errorOf(await t.app.inject({ method: 'POST', url, headers, payload }), 400, 'VALIDATION_ERROR');
      expect({ url, what, message: err.message, details: err.details }).toEqual({ url, what, message: `${field} must not be blank`, details: { field, reason: 'BLANK' } });
    }
    const count = async (table: string) => Number((await t.platform.db.sys.one<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE org_id = $1`, [a.orgId]))!.n);
    expect({ documents: await count('documents'), entities: await count('entities'), scim: await count('scim_tokens') }).toEqual({ documents: 0, entities: 0, scim: 0 });
  });

  it('an offset beyond what a list can take is 400 INVALID_PARAMETER, not a database error', async () => {
    errorOf(await t.app.inject({ url: '/v1/projects?offset=100000000000000000000', headers: a.auth }), 400, 'INVALID_PARAMETER');
    expect((await t.app.inject({ url: '/v1/projects?offset=2147483647', headers: a.auth })).json().data).toEqual([]);
  });

  it('org_id in a query string is refused with 400 INVALID_PARAMETER (spec part 1), after authentication', async () => {
    const other = randomUUID();
    expect(errorOf(await t.app.inject({ url: `/v1/projects?org_id=${other}`, headers: a.auth }), 400, 'INVALID_PARAMETER').details).toMatchObject({ field: 'org_id' });
    errorOf(await t.app.inject({ url: `/v1/me?org_id=${a.orgId}`, headers: a.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ url: `/v1/pricing?org_id=${other}` }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ url: `/v1/projects?org_id=${other}` }), 401, 'AUTH_REQUIRED');
  });

  it('text PostgreSQL cannot store (NUL, in text or jsonb) is 400 VALIDATION_ERROR, and nothing is written', async () => {
    const before = (await t.app.inject({ url: '/v1/projects?status=all', headers: a.auth })).json().pagination.total;
    const text = errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'nul \u0000 name' } }), 400, 'VALIDATION_ERROR');
    // The refusal names the field to fix (found in the parsed body, before any write).
    expect(text.details).toEqual({ reason: 'UNSTORABLE_CHARACTER', field: 'name' });
    expect(text.message).toBe('Field "name" must not contain the NUL character (\\u0000), which cannot be stored');
    const json = errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'ok', settings: { k: 'nul \u0000' } } }), 400, 'VALIDATION_ERROR');
    expect(json.details).toEqual({ reason: 'UNSTORABLE_CHARACTER', field: 'settings.k' });
    expect((await t.app.inject({ url: '/v1/projects?status=all', headers: a.auth })).json().pagination.total).toBe(before);
  });

  it('a query value with the NUL character is 400 INVALID_PARAMETER naming the parameter, whatever the route', async () => {
    for (const url of ['/v1/documents?search=a%00b', '/v1/projects?search=x%00', '/v1/projects?sort_by=%00&sort_by=name']) {
      const field = new URL(url, 'http://x').searchParams.keys().next().value;
      const err = errorOf(await t.app.inject({ url, headers: a.auth }), 400, 'INVALID_PARAMETER');
      expect(err.details, url).toEqual({ field, reason: 'UNSTORABLE_CHARACTER' });
      expect(err.message).toBe(`Query parameter "${field}" must not contain the NUL character (\\u0000), which cannot be stored`);
    }
  });

  it('list envelope adds pagination {total, limit, offset, has_more}', async () => {
    const res = await t.app.inject({ url: '/v1/organizations/current/members?limit=1&offset=0', headers: a.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(Array.isArray(body.data)).toBe(true);
    expect(body.pagination).toEqual({ total: 1, limit: 1, offset: 0, has_more: false });
  });

  it('an unknown route is 404 NOT_FOUND in the envelope', async () => {
    const err = errorOf(await t.app.inject({ url: '/v1/no-such-route' }), 404, 'NOT_FOUND');
    expect(err.message).toContain('/v1/no-such-route');
    errorOf(await t.app.inject({ method: 'PATCH', url: '/v1/health' }), 404, 'NOT_FOUND');
    const bad = await t.app.inject({ url: '/v1/%E0%A4%A', headers: { 'x-request-id': 'bad-url-1' } });
    errorOf(bad, 404, 'NOT_FOUND');
    expect(bad.headers['x-request-id']).toBe('bad-url-1');
    // spec part 8: every response carries the rate-limit headers, errors raised before routing included
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(bad.headers[h]).toBeDefined();
    const long = await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${'a'.repeat(600)}`, headers: a.auth });
    errorOf(long, 400, 'INVALID_ID_FORMAT'); // the route's own rule: the router sets no shorter limit
    expect(long.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('application/json with parameters (charset) is JSON, not 415', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON']) {
      const res = await t.app.inject({ method: 'PUT', url: '/v1/organizations/current', headers: { ...a.auth, 'content-type': type }, payload: JSON.stringify({ name: 'Charset Org' }) });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(200);
      expect(res.json().data.name).toBe('Charset Org');
    }
    errorOf(await t.app.inject({ method: 'PUT', url: '/v1/organizations/current', headers: { ...a.auth, 'content-type': 'application/jsonx' }, payload: '{}' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('an unsupported media type is 415 UNSUPPORTED_MEDIA_TYPE in the envelope', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: { ...a.auth, 'content-type': 'text/plain' }, payload: 'name=x' });
    errorOf(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('invalid JSON is 400 INVALID_JSON; a __proto__ key is refused as a field (400 VALIDATION_ERROR)', async () => {
    const h = { ...a.auth, 'content-type': 'application/json' };
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: h, payload: '{"name": "x",' }), 400, 'INVALID_JSON');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: h, payload: '{"name":"x","__proto__":{"isAdmin":true}}' }), 400, 'VALIDATION_ERROR');
  });

  it('JSON is UTF-8: bytes that are not are 400 INVALID_JSON, another declared charset 415; nothing is stored', async () => {
    const count = async () => (await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE org_id = $1`, [a.orgId]))!.n;
    const before = await count();
    const post = (body: Buffer, type = 'application/json') => t.app.inject({ method: 'POST', url: '/v1/projects', headers: { ...a.auth, 'content-type': type }, payload: body });
    const bad = Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from([0xed, 0xa0, 0x80, 0xff, 0xfe]), Buffer.from('end"}')]);
    expect(errorOf(await post(bad), 400, 'INVALID_JSON').message).toMatch(/not valid UTF-8/);
    const latin1 = Buffer.from('{"name":"caf\xe9"}', 'latin1');
    errorOf(await post(latin1), 400, 'INVALID_JSON');
    expect(errorOf(await post(latin1, 'application/json; charset=iso-8859-1'), 415, 'UNSUPPORTED_MEDIA_TYPE').message).toMatch(/UTF-8/);
    expect(await count()).toBe(before);
    for (const type of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=utf8', 'application/json; charset=us-ascii']) {
      const ok = await post(Buffer.from(JSON.stringify({ name: `Caf\u00e9 ${type.length}` })), type);
      expect(ok.statusCode, type).toBe(201);
    }
  });

  it('validation errors name the field; no body is VALIDATION_ERROR, an empty JSON body INVALID_JSON', async () => {
    const err = errorOf(await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth, payload: {} }), 400, 'VALIDATION_ERROR');
    expect(err.message).toContain('name');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: a.auth }), 400, 'VALIDATION_ERROR');
    for (const payload of ['', '  \n']) {
      errorOf(await t.app.inject({ method: 'POST', url: '/v1/organizations', headers: { ...a.auth, 'content-type': 'application/json' }, payload }), 400, 'INVALID_JSON');
    }
    // A route whose body is optional takes an empty JSON body as no body (here: {}, a default ticket).
    const optional = await t.app.inject({ method: 'POST', url: '/v1/collaboration/ticket', headers: { ...a.auth, 'content-type': 'application/json' }, payload: '' });
    expect(optional.statusCode).toBe(200);
    // So does a route without a body.
    const leaving = await newTenant(t.app);
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: { ...leaving.auth, 'content-type': 'application/json' }, payload: '' })).statusCode).toBe(204);
  });

  it('a malformed id is 400 INVALID_ID_FORMAT wherever it is: path, query string, body field or array item', async () => {
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Ids everywhere' } })).json().data.id;
    expect(errorOf(await t.app.inject({ url: '/v1/projects/nope', headers: a.auth }), 400, 'INVALID_ID_FORMAT').details).toEqual({ field: 'projectId' });
    expect(errorOf(await t.app.inject({ url: `/v1/projects/${project}/tasks?assignee_id=bob`, headers: a.auth }), 400, 'INVALID_ID_FORMAT').details).toEqual({ field: 'assignee_id' });
    expect(errorOf(await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/tasks`, headers: a.auth, payload: { title: 'x', spec_id: 'nope' } }), 400, 'INVALID_ID_FORMAT').message)
      .toBe('Field "spec_id" must be a UUID');
    expect(errorOf(await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/tasks`, headers: a.auth, payload: { title: 'x', depends_on: ['nope'] } }), 400, 'INVALID_ID_FORMAT').details)
      .toEqual({ field: 'depends_on.0' });
    // However long the id: no router limit answers before the route's own rule.
    expect(errorOf(await t.app.inject({ url: `/v1/projects/${'a'.repeat(600)}`, headers: a.auth }), 400, 'INVALID_ID_FORMAT').details).toEqual({ field: 'projectId' });
    // An upper-case id is a UUID: accepted, and used and echoed in canonical lower case (path, body and answers).
    const upper = project.toUpperCase();
    expect((await t.app.inject({ url: `/v1/projects/${upper}`, headers: a.auth })).json().data.id).toBe(project);
    const first = (await t.app.inject({ method: 'POST', url: `/v1/projects/${upper}/tasks`, headers: a.auth, payload: { title: 'first' } })).json().data as string;
    const second = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/tasks`, headers: a.auth, payload: { title: 'second', depends_on: [first.toUpperCase()] } })).json().data as string;
    expect((await t.app.inject({ url: `/v1/tasks/${second}`, headers: a.auth })).json().data.depends_on).toEqual([first]);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/tasks/${second.toUpperCase()}`, headers: a.auth })).json().data).toEqual({ id: second, deleted: true });
    // The URN form passes common UUID validators (ajv-formats' among them) and then failed in PostgreSQL with a 500.
    const urn = `urn:uuid:${project}`;
    expect(errorOf(await t.app.inject({ url: `/v1/projects/${urn}`, headers: a.auth }), 400, 'INVALID_ID_FORMAT').details).toEqual({ field: 'projectId' });
    expect(errorOf(await t.app.inject({ url: `/v1/projects/${project}/tasks?assignee_id=${urn}`, headers: a.auth }), 400, 'INVALID_ID_FORMAT').details).toEqual({ field: 'assignee_id' });
    expect(errorOf(await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/tasks`, headers: a.auth, payload: { title: 'x', depends_on: [urn] } }), 400, 'INVALID_ID_FORMAT').details)
      .toEqual({ field: 'depends_on.0' });
  });

  it('a missing required query parameter is 400 INVALID_PARAMETER saying it is required', async () => {
    const e = errorOf(await t.app.inject({ url: '/v1/slugs/availability?slug=acme', headers: a.auth }), 400, 'INVALID_PARAMETER');
    expect(e.message).toMatch(/^Query parameter "kind" is required/);
    expect(e.details).toMatchObject({ field: 'kind', reason: 'REQUIRED' });
  });

  it('a bad query value\'s message carries the parameter\'s description (what it is, its unit)', async () => {
    const e = errorOf(await t.app.inject({ url: '/v1/sync/documents?since=yesterday', headers: a.auth }), 400, 'INVALID_PARAMETER');
    expect(e.message).toBe('Query parameter "since" must be integer (epoch milliseconds; omit for a bulk download)');
  });

  it('a bad query value is 400 INVALID_PARAMETER', async () => {
    errorOf(await t.app.inject({ url: '/v1/organizations/current/members?limit=0', headers: a.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ url: '/v1/organizations/current/members?limit=abc', headers: a.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ url: '/v1/organizations/current/members?offset=-1', headers: a.auth }), 400, 'INVALID_PARAMETER');
    // Integers are written as integers: no exponent, hex, fraction, sign or blanks (Ajv alone read 1e2 as 100).
    for (const v of ['1e2', '0x10', '10.0', '+5', ' 5', '5 ', '']) {
      expect(errorOf(await t.app.inject({ url: `/v1/organizations/current/members?limit=${encodeURIComponent(v)}`, headers: a.auth }), 400, 'INVALID_PARAMETER').message, v).toContain('limit');
    }
    expect((await t.app.inject({ url: '/v1/organizations/current/members?limit=10&offset=0', headers: a.auth })).statusCode).toBe(200);
  });

  it('a bad query value on a row of another organization, or on no row, is 404 NOT_FOUND before the 400 (ARCHITECTURE "Auth order": membership, then validation)', async () => {
    const b = await newTenant(t.app);
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Query order' } })).json().data.id;
    // spec_id=nope: a malformed id in the query (INVALID_ID_FORMAT) is bad input like any other; only a malformed *path*
    // id names no row.
    for (const q of ['limit=0', 'status=nope', `org_id=${a.orgId}`, 'spec_id=nope']) {
      errorOf(await t.app.inject({ url: `/v1/projects/${project}/tasks?${q}`, headers: b.auth }), 404, 'NOT_FOUND');
      errorOf(await t.app.inject({ url: `/v1/projects/${randomUUID()}/tasks?${q}`, headers: a.auth }), 404, 'NOT_FOUND');
    }
    errorOf(await t.app.inject({ url: `/v1/projects/${project}/tasks?limit=0`, headers: a.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ url: `/v1/projects/${project}/tasks?spec_id=nope`, headers: a.auth }), 400, 'INVALID_ID_FORMAT');
    // The same for a malformed id in the body.
    const task = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/tasks`, headers: a.auth, payload: { title: 'Order' } })).json().data;
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/tasks/${task}`, headers: b.auth, payload: { assignee_id: 'nope' } }), 404, 'NOT_FOUND');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/tasks/${task}`, headers: a.auth, payload: { assignee_id: 'nope' } }), 400, 'INVALID_ID_FORMAT');
    // A malformed id names no row: it stays 400 INVALID_ID_FORMAT.
    errorOf(await t.app.inject({ url: '/v1/projects/not-a-uuid/tasks?limit=0', headers: b.auth }), 400, 'INVALID_ID_FORMAT');
  });

  it('when the row cannot be looked up (the database fails), a refused body is answered with its own 400', async () => {
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Lookup fails' } })).json().data.id;
    const db = t.platform.db;
    const tenant = db.tenant;
    db.tenant = (async () => { throw new Error('connection lost'); }) as typeof db.tenant;
    try {
      const err = errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${project}`, headers: a.auth, payload: { zz_unknown: 1 } }), 400, 'VALIDATION_ERROR');
      expect(err.message).toContain('zz_unknown');
    } finally { db.tenant = tenant; }
  });

  it('an organization without the feature asking for another organization\'s row, or none, gets 404 NOT_FOUND; its own row 403 FEATURE_DISABLED (membership before entitlements)', async () => {
    const b = await newTenant(t.app);
    const doc = async (who: Tenant) => (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: { title: 'Feature order' } })).json().data.id as string;
    const [theirs, own] = [await doc(a), await doc(b)];
    const off = await t.app.inject({ method: 'PUT', url: `/v1/admin/organizations/${b.orgId}/entitlements`, headers: bearer(t.rootKey), payload: { features: ['mcp'] } });
    expect(off.statusCode).toBe(200);
    for (const id of [theirs, randomUUID()]) {
      errorOf(await t.app.inject({ url: `/v1/documents/${id}`, headers: b.auth }), 404, 'NOT_FOUND');
      errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: b.auth, payload: { title: 'x' } }), 404, 'NOT_FOUND');
    }
    expect(errorOf(await t.app.inject({ url: `/v1/documents/${own}`, headers: b.auth }), 403, 'FEATURE_DISABLED').details).toEqual({ feature: 'documents' });
  });

  describe('request id', () => {
    it('every response carries X-Request-Id (a UUIDv7 when none was sent), errors included', async () => {
      const ok = await t.app.inject({ url: '/v1/health' });
      expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const e401 = await t.app.inject({ url: '/v1/me' });
      expect(e401.headers['x-request-id']).toBeTruthy();
      const e404 = await t.app.inject({ url: '/v1/nothing-here' });
      expect(e404.headers['x-request-id']).toBeTruthy();
      expect(e404.headers['x-request-id']).not.toBe(e401.headers['x-request-id']);
    });

    it('an incoming X-Request-Id is used and echoed; an unsafe one is replaced', async () => {
      const res = await t.app.inject({ url: '/v1/health', headers: { 'x-request-id': 'client-abc_123.4:5' } });
      expect(res.headers['x-request-id']).toBe('client-abc_123.4:5');
      const bad = await t.app.inject({ url: '/v1/health', headers: { 'x-request-id': 'has spaces <script>' } });
      expect(bad.headers['x-request-id']).not.toContain('script');
      const long = await t.app.inject({ url: '/v1/health', headers: { 'x-request-id': 'a'.repeat(300) } });
      expect(String(long.headers['x-request-id']).length).toBeLessThanOrEqual(128);
    });

    it('the request id reaches the audit log', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: { ...a.auth, 'x-request-id': `audit-${a.orgId}` }, payload: { name: 'k', scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() } });
      expect(res.statusCode).toBe(201);
      const row = await t.platform.db.sys.one<{ request_id: string }>(`SELECT request_id FROM audit_log WHERE org_id = $1 AND action = 'api_key.created'`, [a.orgId]);
      expect(row?.request_id).toBe(`audit-${a.orgId}`);
    });
  });

  describe('audit rows', () => {
    const createKey = (tn: Tenant, extra: { remoteAddress?: string; headers?: Record<string, string> } = {}) => t.app.inject({
      method: 'POST', url: '/v1/api-keys', headers: { ...tn.auth, ...(extra.headers ?? {}) }, ...(extra.remoteAddress ? { remoteAddress: extra.remoteAddress } : {}),
      payload: { name: 'audited', scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() },
    });
    const rowsOf = (orgId: string) => t.platform.db.sys.query<{ ip: string | null; created_at: Date; request_id: string | null }>(
      `SELECT ip, created_at, request_id FROM audit_log WHERE org_id = $1 AND action = 'api_key.created' ORDER BY id`, [orgId]);

    it('record the client address (ip) and a created_at close to now, besides the request id', async () => {
      const tn = await newTenant(t.app, { name: 'audit-ip' });
      const before = Date.now();
      const res = await createKey(tn, { remoteAddress: '203.0.113.77', headers: { 'x-request-id': `audit-ip-${tn.orgId}` } });
      const after = Date.now();
      expect(res.statusCode, res.body).toBe(201);
      const rows = await rowsOf(tn.orgId);
      expect(rows).toHaveLength(1);
      expect(rows[0].ip).toBe('203.0.113.77');
      expect(rows[0].request_id).toBe(`audit-ip-${tn.orgId}`);
      const at = new Date(rows[0].created_at).getTime();
      // Same host for the database and the test: a second of slack each way covers rounding, not a stale or default value.
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(after + 1000);
    });

    it('the address is the connection\'s (127.0.0.1 with inject by default); X-Forwarded-For is not trusted without TRUST_PROXY', async () => {
      const tn = await newTenant(t.app, { name: 'audit-ip-default' });
      expect((await createKey(tn)).statusCode).toBe(201);
      expect((await createKey(tn, { headers: { 'x-forwarded-for': '198.51.100.23' } })).statusCode).toBe(201);
      const rows = await rowsOf(tn.orgId);
      expect(t.platform.config.trustProxy).toBe(false);
      expect(rows.map((r) => r.ip)).toEqual(['127.0.0.1', '127.0.0.1']);
    });

    it('behind trusted proxies the address is the one the last of them appended, whatever the client put in front of it', async () => {
      // A load balancer appends the address it saw to the X-Forwarded-For the client sent: only that entry is the client's.
      for (const trustProxy of [loadConfig({ TRUST_PROXY: 'true' }).trustProxy, loadConfig({ TRUST_PROXY: '127.0.0.1' }).trustProxy]) {
        const proxied = await buildTestApp({ trustProxy });
        try {
          const tn = await newTenant(proxied.app, { name: `audit-ip-proxied-${typeof trustProxy}` });
          const r = await proxied.app.inject({ method: 'POST', url: '/v1/api-keys', headers: { ...tn.auth, 'x-forwarded-for': '10.66.66.66, 203.0.113.5' },
            payload: { name: 'k', scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() } });
          expect(r.statusCode).toBe(201);
          const rows = await proxied.platform.db.sys.query<{ ip: string }>(`SELECT ip FROM audit_log WHERE org_id = $1 AND action = 'api_key.created'`, [tn.orgId]);
          expect({ trustProxy, ips: rows.map((x) => x.ip) }).toEqual({ trustProxy, ips: ['203.0.113.5'] });
        } finally {
          await proxied.close();
        }
      }
    });
  });
});

describe('logs of a 5xx', () => {
  let t: TestApp;
  beforeAll(async () => { t = await buildTestApp(); });
  afterAll(async () => { await t.close(); });

  it('the "request failed" error line carries the request id (given or generated) and the error; the response names the same id', async () => {
    const { app, lines } = await appWithCapturedLogs(t);
    app.get('/v1/zz-test-boom', { config: { auth: 'public' } }, async () => { throw new Error('boom inside the handler'); });
    try {
      await app.ready();
      const given = await app.inject({ url: '/v1/zz-test-boom', headers: { 'x-request-id': 'log-500-given-0001' } });
      const generated = await app.inject({ url: '/v1/zz-test-boom' });
      for (const [res, id] of [[given, 'log-500-given-0001'], [generated, String(generated.headers['x-request-id'])]] as const) {
        expect(errorOf(res, 500, 'INTERNAL_ERROR').details?.requestId).toBe(id);
        expect(res.headers['x-request-id']).toBe(id);
        const failed = lines.filter((l) => l.msg === 'request failed' && l.reqId === id);
        expect(failed, JSON.stringify(lines)).toHaveLength(1);
        expect(failed[0].level).toBe(50); // pino's "error"
        expect((failed[0].err as { message?: string } | undefined)?.message).toBe('boom inside the handler');
      }
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
      // Every "request failed" line names its request: none without an id.
      expect(lines.filter((l) => l.msg === 'request failed' && !l.reqId)).toEqual([]);
    } finally { await app.close(); }
  });

  it('the request line never holds a credential passed in the query (token, ticket, sig)', async () => {
    const { app, lines } = await appWithCapturedLogs(t);
    try {
      await app.ready();
      await app.inject({ url: '/v1/documents/0190a5b4-0000-7000-8000-000000000000/file?org=o&exp=1&sig=feedface&token=svc_live_secret' });
      const line = lines.find((l) => l.msg === 'request completed');
      expect(line?.url).toBe('/v1/documents/0190a5b4-0000-7000-8000-000000000000/file?org=o&exp=1&sig=[REDACTED]&token=[REDACTED]');
      expect(JSON.stringify(lines)).not.toContain('svc_live_secret');
      expect(JSON.stringify(lines)).not.toContain('feedface');
    } finally { await app.close(); }
  });
});

describe('database unreachable', () => {
  let t: TestApp;
  let a: Tenant;
  beforeAll(async () => {
    t = await buildTestApp({ credentialCacheTtlMs: 0 });
    a = await newTenant(t.app);
    await t.platform.db.close();
  });
  afterAll(async () => { await t.close(); });

  it('health answers 503 SERVICE_UNAVAILABLE with details.requestId', async () => {
    const res = await t.app.inject({ url: '/v1/health', headers: { 'x-request-id': 'health-down' } });
    const err = errorOf(res, 503, 'SERVICE_UNAVAILABLE');
    expect(err.details?.requestId).toBe('health-down');
    expect(res.headers['x-request-id']).toBe('health-down');
  });

  it('an authenticated route answers 5xx with a sanitized message and details.requestId', async () => {
    const res = await t.app.inject({ url: '/v1/me', headers: { ...a.auth, 'x-request-id': 'me-down' } });
    expect(res.statusCode).toBeGreaterThanOrEqual(500);
    const body = res.json();
    expect(body.success).toBe(false);
    expect(['INTERNAL_ERROR', 'DATABASE_ERROR', 'SERVICE_UNAVAILABLE']).toContain(body.error.code);
    expect(body.error.message).not.toMatch(/pool|ECONNREFUSED|postgres|end on/i);
    expect(body.error.details.requestId).toBe('me-down');
  });
});
