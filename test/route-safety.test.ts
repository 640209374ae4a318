/**
 * Route-wide safety tests: every route in `app.routeList` gets these for free.
 *  (a) credentials: 401 codes without a credential and with bad, foreign-signed, unsigned, malformed, revoked and expired ones
 *      (a revoked API key, and the access token of a session ended with POST /v1/auth/logout);
 *  (b) path ids: a route with a `:param` names a fixture; another organization gets the same 404 as for a random id;
 *      a non-UUID id is 400 INVALID_ID_FORMAT;
 *  (c) strict bodies: unknown keys, platform-assigned fields, wrong types, invalid JSON, oversize and over-deep bodies
 *      are refused with the spec's codes, and nothing is written.
 * Sample bodies are built from each route's own schema, so new areas need nothing but a fixture for their path ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { SignJWT, generateKeyPair, decodeJwt } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, newTenant, bearer, type TestApp, type Tenant } from './helpers.js';
import { FIXTURES } from './fixtures.js';
import { memberOf } from '../src/areas/projects/projects.fixtures.js';
import type { RegisteredRoute } from '../src/core/http/openapi.js';
import { takesNoBody } from '../src/core/http/body-hooks.js';
import { ROLE_PERMISSIONS, ALL_SCOPES } from '../src/core/auth/permissions.js';
import type { RateLimitStore } from '../src/core/rate-limit.js';
import { MCP_PATH } from '../src/transports/mcp/mcp.routes.js';

type Json = Record<string, unknown>;
type Schema = Record<string, unknown>;

const t: TestApp = await buildTestApp();
const routes: RegisteredRoute[] = [...t.app.routeList].sort((x, y) => (x.url + x.method).localeCompare(y.url + y.method));
const RUN = randomBytes(3).toString('hex');
/** Every string the strict-body tests send contains this, so a final scan can prove none was stored. */
const MARK = `zzsafety${RUN}`;

// ---------------------------------------------------------------------------------------------------------------
// Sample values from JSON Schema (TypeBox output), checked with an Ajv configured like the app's body validator.
// ---------------------------------------------------------------------------------------------------------------
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: false });
addFormats(ajv);
ajv.addKeyword({ keyword: 'x-platform-assigned' });
const shared = t.app.getSchemas() as Record<string, Schema>;
for (const [id, s] of Object.entries(shared)) { try { ajv.addSchema(s, id); } catch { /* already added or invalid: ignore */ } }
const compiled = new WeakMap<object, ValidateFunction>();
function valid(schema: Schema, value: unknown): boolean {
  let fn = compiled.get(schema);
  if (!fn) {
    try { fn = ajv.compile(schema); } catch { return true; }
    compiled.set(schema, fn);
  }
  return fn(value) as boolean;
}

function deref(schema: Schema): Schema {
  const ref = schema.$ref as string | undefined;
  if (!ref) return schema;
  const id = ref.replace(/#$/, '');
  return shared[id] ?? schema;
}

const futureIso = () => new Date(Date.now() + 86_400_000).toISOString();
const FORMAT_SAMPLES: Record<string, (tag: string) => unknown> = {
  uuid: () => randomUUID(),
  email: (tag) => `${tag}@example.test`,
  'date-time': () => futureIso(),
  date: () => futureIso().slice(0, 10),
  time: () => '12:00:00Z',
  uri: (tag) => `https://example.test/${tag}`,
  url: (tag) => `https://example.test/${tag}`,
  'uri-reference': (tag) => `/${tag}`,
  iri: (tag) => `https://example.test/${tag}`,
  hostname: (tag) => `${tag}.example.test`,
  'idn-hostname': (tag) => `${tag}.example.test`,
  ipv4: () => '192.0.2.10',
  ipv6: () => '2001:db8::10',
  byte: () => Buffer.from('sample').toString('base64'),
  regex: () => '^a$',
  duration: () => 'P1D',
  'json-pointer': () => '/a',
  'uri-template': () => 'https://example.test/{id}',
};
const STRING_CANDIDATES = (tag: string) => [
  tag, 'sample', 'abc', 'a', 'abc-def', 'a1', 'A', 'ABC', '123456', '1', '0', 'abc_def', 'sample.value', 'v1', '1.0.0',
  'a'.repeat(64), '0'.repeat(64), 'f'.repeat(32), 'AAAA', '#ffffff', '#fff', 'en', 'en-US', 'UTC', 'Europe/Berlin',
  '+15555550123', 'US', 'USD', 'usd', 'GET', 'x', 'key', 'sample:value', 'abc123',
];

/** Distinct candidate values for a schema, most useful first; callers keep those the schema accepts. */
function candidates(schemaIn: Schema, tag: string, depth = 0): unknown[] {
  const schema = deref(schemaIn);
  if (depth > 8) return [];
  if ('const' in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  if ('default' in schema && schema.default !== undefined && depth > 0) {
    // Defaults are valid by construction, but keep going: required fields still need a value.
  }
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[k])) {
      const branches = (schema[k] as Schema[]).map(deref);
      const nonNull = branches.filter((b) => b.type !== 'null');
      return [...nonNull, ...branches.filter((b) => b.type === 'null')].flatMap((b) => candidates(b, tag, depth + 1));
    }
  }
  if (Array.isArray(schema.allOf)) return (schema.allOf as Schema[]).flatMap((b) => candidates(b, tag, depth + 1));
  const types = Array.isArray(schema.type) ? schema.type as string[] : schema.type ? [schema.type as string] : schema.properties ? ['object'] : [];
  const out: unknown[] = [];
  for (const ty of types) {
    if (ty === 'string') {
      const format = schema.format as string | undefined;
      if (format && FORMAT_SAMPLES[format]) out.push(FORMAT_SAMPLES[format](tag));
      const min = (schema.minLength as number | undefined) ?? 0;
      const max = (schema.maxLength as number | undefined) ?? Infinity;
      for (const c of STRING_CANDIDATES(tag)) {
        let s = c;
        if (s.length < min) s = s + 'x'.repeat(min - s.length);
        if (s.length > max) s = s.slice(0, max);
        out.push(s);
      }
    } else if (ty === 'integer' || ty === 'number') {
      const exMin = schema.exclusiveMinimum as number | undefined;
      const exMax = schema.exclusiveMaximum as number | undefined;
      let lo = (schema.minimum as number | undefined) ?? (exMin !== undefined ? (ty === 'integer' ? Math.floor(exMin) + 1 : exMin + 0.5) : 1);
      const hi = (schema.maximum as number | undefined) ?? (exMax !== undefined ? exMax - (ty === 'integer' ? 1 : 0.5) : Infinity);
      if (lo > hi) lo = hi;
      const mult = schema.multipleOf as number | undefined;
      if (mult) lo = Math.ceil(lo / mult) * mult;
      out.push(lo, 1, 0, Number.isFinite(hi) ? hi : 10);
    } else if (ty === 'boolean') out.push(true, false);
    else if (ty === 'null') out.push(null);
    else if (ty === 'array') {
      const items = deref((schema.items as Schema | undefined) ?? {});
      const n = (schema.minItems as number | undefined) ?? 0;
      const pool = uniq(candidates(items, tag, depth + 1).filter((v) => valid(items, v)));
      const picks: unknown[] = [];
      for (let i = 0; picks.length < n && i < n * 4 + pool.length; i++) {
        const base = pool[i % Math.max(1, pool.length)];
        const v = typeof base === 'string' && i >= pool.length ? `${base}${i}` : base;
        if (v === undefined) break;
        if (schema.uniqueItems && picks.some((p) => JSON.stringify(p) === JSON.stringify(v))) continue;
        picks.push(v);
      }
      out.push(picks);
      if (n === 0 && pool.length) out.push([pool[0]]);
    } else if (ty === 'object') out.push(sampleObject(schema, tag, depth + 1));
  }
  if (!types.length && !out.length) out.push(tag);
  return out;
}

function uniq(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => { const k = JSON.stringify(v); if (seen.has(k)) return false; seen.add(k); return true; });
}

function sample(schema: Schema, tag: string, depth = 0): unknown {
  const cs = candidates(schema, tag, depth);
  return cs.find((v) => valid(deref(schema), v)) ?? cs[0];
}

/** The smallest valid object: required properties, plus optional ones when minProperties asks for more. */
function sampleObject(schemaIn: Schema, tag: string, depth = 0): Json {
  const schema = deref(schemaIn);
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  const obj: Json = {};
  for (const k of required) if (props[k]) obj[k] = sample(props[k], `${tag}`, depth);
  const minProps = (schema.minProperties as number | undefined) ?? 0;
  for (const k of Object.keys(props)) {
    if (Object.keys(obj).length >= minProps) break;
    if (!(k in obj)) obj[k] = sample(props[k], tag, depth);
  }
  return obj;
}

/** A value of a JSON type the property does not accept. */
function wrongTypeFor(prop: Schema): unknown | undefined {
  const s = deref(prop);
  const ty = Array.isArray(s.type) ? s.type[0] : s.type;
  const order: unknown[] = ty === 'string' ? [12345] : ty === 'integer' || ty === 'number' ? ['not-a-number'] : ty === 'boolean' ? ['yes']
    : ty === 'array' ? ['not-an-array'] : ty === 'object' ? ['not-an-object'] : [];
  for (const v of [...order, 12345, 'not-a-value', true, [12345], { zz: 1 }, null]) if (!valid(s, v)) return v;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Routes, credentials and tenants
// ---------------------------------------------------------------------------------------------------------------
const paramNames = (url: string) => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
const isPublic = (r: RegisteredRoute) => r.config.auth === 'public';
const paramsSchema = (r: RegisteredRoute) => r.schema?.params as Schema | undefined;
const paramSchema = (r: RegisteredRoute, name: string) => (paramsSchema(r)?.properties as Record<string, Schema> | undefined)?.[name];
const isUuidParam = (r: RegisteredRoute, name: string) => deref(paramSchema(r, name) ?? {}).format === 'uuid';
const bodySchema = (r: RegisteredRoute) => (r.schema?.body ? deref(r.schema.body as Schema) : undefined);
const isStrictBody = (r: RegisteredRoute) => { const b = bodySchema(r); return !!b && b.type === 'object' && b.additionalProperties === false; };
const label = (r: RegisteredRoute) => `${r.method} ${r.url}`;

function fillPath(r: RegisteredRoute, given: Record<string, string> = {}): string {
  return r.url
    .replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => encodeURIComponent(given[name] ?? randomParam(r, name)))
    .replace(/\*/g, 'x');
}
/**
 * The route's path with rows of A's own when it names rows (its fixture): a request refused for its body or query
 * reaches that refusal only for a row of the caller's organization (ARCHITECTURE "Auth order": 404 for a row
 * elsewhere, or none, comes first). Random ids for a route without a fixture.
 */
async function ownPath(r: RegisteredRoute): Promise<string> {
  const fixture = r.config.fixture && !isPublic(r) ? FIXTURES[r.config.fixture] : undefined;
  return fillPath(r, fixture ? await fixture(t.app, A) : {});
}
function randomParam(r: RegisteredRoute, name: string): string {
  const s = paramSchema(r, name);
  if (!s || isUuidParam(r, name)) return randomUUID();
  return String(sample(s, `zzrandom${randomBytes(4).toString('hex')}`));
}
function queryFor(r: RegisteredRoute): string {
  const q = r.schema?.querystring as Schema | undefined;
  if (!q) return '';
  const obj = sampleObject(q, MARK);
  const parts = Object.entries(obj).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(Array.isArray(v) ? v.join(',') : String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

interface SafetyTenant extends Tenant { sessionId: string; fullKey?: string }
let A: SafetyTenant; // owns fixtures
let B: SafetyTenant; // the other organization
/** Credentials of B refused by role (a viewer) or by scope (a key with an unrelated scope) on most write routes. */
let refusedInB: Record<string, Record<string, string>>;
let creds: { otherKey: string; unsignedJwt: string; expiredJwt: string; revokedKey: string; expiredKey: string; loggedOutJwt: string };
let orgTables: string[] = [];
let allTables: string[] = [];

async function safetyTenant(name: string): Promise<SafetyTenant> {
  const tn = await newTenant(t.app, { name });
  return { ...tn, sessionId: String(decodeJwt(tn.token).sid) };
}

async function fullKey(tn: SafetyTenant): Promise<string> {
  tn.fullKey ??= await tn.apiKey(ALL_SCOPES.filter((s) => s !== 'admin'));
  return tn.fullKey;
}

/** A credential holding every need of the route: owner session (stepped up when asked), full-scope key, or the root key. */
async function credentialFor(r: RegisteredRoute, tn: SafetyTenant): Promise<Record<string, string>> {
  const needs = r.config;
  if (isPublic(r)) return {};
  const ownerLacks = needs.permission && !ROLE_PERMISSIONS.owner.has(needs.permission);
  if (needs.rootOnly || ownerLacks) return bearer(t.rootKey);
  if (needs.credentials && !needs.credentials.includes('user')) return bearer(await fullKey(tn));
  if (needs.stepUp) {
    await t.platform.db.sys.exec(`UPDATE sessions SET mfa_at = now() WHERE id = $1`, [tn.sessionId]);
    t.platform.credentials.invalidate();
  }
  return tn.auth;
}

async function call(r: RegisteredRoute, url: string, headers: Record<string, string>, payload?: unknown, raw?: string): Promise<LightMyRequestResponse> {
  if (raw !== undefined) {
    return t.app.inject({ method: r.method as 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: raw });
  }
  return t.app.inject({ method: r.method as 'POST', url, headers, ...(payload !== undefined ? { payload: payload as Json } : {}) });
}

function expectError(res: LightMyRequestResponse, status: number, code: string): { code: string; message: string; details?: Json } {
  let body: { success?: boolean; error?: { code: string; message: string; details?: Json } };
  try { body = res.json(); } catch { throw new Error(`expected ${status} ${code}, got ${res.statusCode} non-JSON: ${res.body.slice(0, 300)}`); }
  if (res.statusCode !== status || body?.error?.code !== code) throw new Error(`expected ${status} ${code}, got ${res.statusCode} ${res.body.slice(0, 500)}`);
  expect(body.success).toBe(false);
  expect(typeof body.error!.message).toBe('string');
  return body.error!;
}

async function tenantRowCounts(): Promise<Record<string, number>> {
  const orgs = [A.orgId, B.orgId];
  const parts = orgTables.map((tb) => `SELECT '${tb}' AS t, count(*)::int AS n FROM "${tb}" WHERE org_id::text = ANY($1::text[])`);
  parts.push(`SELECT 'organizations#id' AS t, count(*)::int AS n FROM organizations WHERE id::text = ANY($1::text[])`);
  const rows = await t.platform.db.sys.query<{ t: string; n: number }>(parts.join(' UNION ALL '), [orgs]);
  return Object.fromEntries(rows.map((x) => [x.t, x.n]));
}

beforeAll(async () => {
  // Budgets are the core tests' subject; here they would only turn many requests into 429s.
  const unlimited: RateLimitStore = { async hit(_key, windowMs) { return { count: 0, resetAtMs: Date.now() + windowMs }; }, undo() {}, close() {} };
  t.platform.rateLimitStore = unlimited;
  [A, B] = await Promise.all([safetyTenant('safety-a'), safetyTenant('safety-b')]);

  const claims = decodeJwt(A.token);
  const kid = t.platform.signer.jwks().keys[0].kid!;
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const foreignJwt = await new SignJWT({ typ: 'access', org: claims.org, sid: claims.sid, ver: claims.ver })
    .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' }).setSubject(String(claims.sub)).setIssuer('platform-api')
    .setIssuedAt().setExpirationTime('10m').sign(privateKey);
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 })}.`;
  const expiredJwt = await t.platform.signer.sign({ typ: 'access', org: claims.org, sid: claims.sid, ver: claims.ver }, String(claims.sub), -10);

  const revokedKey = await A.apiKey(['projects:read']);
  const keyList = (await t.app.inject({ method: 'GET', url: '/v1/api-keys?limit=100', headers: A.auth })).json().data as Array<{ id: string; prefix: string }>;
  const revokedId = keyList.find((k) => revokedKey.includes(`_${k.prefix}_`))!.id;
  expect((await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${revokedId}`, headers: A.auth })).statusCode).toBe(200);
  const expiredKey = await A.apiKey(['projects:read']);
  const prefix = expiredKey.split('_')[2];
  await t.platform.db.sys.exec(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE prefix = $1`, [prefix]);
  t.platform.credentials.invalidate();
  // A second session of A's owner, signed out: its access token is still unexpired and correctly signed.
  const login = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: A.email, password: A.password } });
  expect(login.statusCode, login.body).toBe(200);
  const loggedOutJwt = login.json().data.access_token as string;
  expect(decodeJwt(loggedOutJwt).sid).not.toBe(A.sessionId);
  expect((await t.app.inject({ url: '/v1/me', headers: bearer(loggedOutJwt) })).statusCode).toBe(200);
  expect((await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: bearer(loggedOutJwt) })).statusCode).toBe(204);
  refusedInB = { viewer: (await memberOf(t.app, B, 'viewer')).auth, 'key scoped "vision"': bearer(await B.apiKey(['vision'])) };
  creds = { otherKey: foreignJwt, unsignedJwt: unsigned, expiredJwt, revokedKey, expiredKey, loggedOutJwt };

  const cols = await t.platform.db.sys.query<{ table_name: string; has_org: boolean }>(
    `SELECT c.relname AS table_name, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped) AS has_org
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`);
  allTables = cols.map((c) => c.table_name);
  orgTables = cols.filter((c) => c.has_org).map((c) => c.table_name);
});

afterAll(async () => { await t.close(); });

// ---------------------------------------------------------------------------------------------------------------
// (b) registry check: every path parameter is covered by a fixture
// ---------------------------------------------------------------------------------------------------------------
/** A parameter from a closed list (enum, const, union of literals) names a kind of thing, not one organization's resource. */
function isEnumerated(schema: Schema | undefined): boolean {
  if (!schema) return false;
  const s = deref(schema);
  if ('const' in s || Array.isArray(s.enum)) return true;
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  return Array.isArray(branches) && branches.length > 0 && branches.every((b) => isEnumerated(b));
}
/**
 * Every path parameter that addresses a resource needs a fixture. Exempt: root-only routes (the root organization
 * reaches every organization by design; others get 403 there) and routes whose parameters are all enumerated.
 */
const needsFixture = (r: RegisteredRoute) => !r.config.rootOnly && paramNames(r.url).some((p) => !isEnumerated(paramSchema(r, p)));

describe('route registry', () => {
  it('has routes', () => { expect(routes.length).toBeGreaterThan(5); });

  it('every route addressing a resource by a path parameter names a fixture of test/fixtures.ts', () => {
    const missing = routes.filter((r) => needsFixture(r) && !r.config.fixture).map(label);
    const unknown = routes.filter((r) => r.config.fixture && !FIXTURES[r.config.fixture]).map((r) => `${label(r)} (fixture "${r.config.fixture}")`);
    expect({ missingFixture: missing, unknownFixture: unknown }).toEqual({ missingFixture: [], unknownFixture: [] });
  });

  it('every path parameter has a schema', () => {
    const undeclared = routes.flatMap((r) => paramNames(r.url).filter((p) => !paramSchema(r, p)).map((p) => `${label(r)} :${p}`));
    expect(undeclared).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Per route
// ---------------------------------------------------------------------------------------------------------------
for (const r of routes) {
  const bChecks = paramNames(r.url).length > 0 && ((!!r.config.fixture && !r.config.rootOnly && !isPublic(r)) || paramNames(r.url).some((p) => isUuidParam(r, p)));
  if (isPublic(r) && !bChecks && !isStrictBody(r)) continue; // nothing here applies (e.g. GET /v1/health)
  describe(label(r), () => {
    if (!isPublic(r)) {
      describe('(a) credentials', () => {
        const url = () => fillPath(r) + queryFor(r);
        it('no credential: 401 AUTH_REQUIRED', async () => { expectError(await call(r, url(), {}), 401, 'AUTH_REQUIRED'); });
        // Spec 4.2: the MCP endpoint's 401s are AUTH_REQUIRED or INVALID_API_KEY, so a credential that is no JWT is a bad key there.
        const garbageCode = r.url === MCP_PATH ? 'INVALID_API_KEY' : 'AUTH_TOKEN_INVALID';
        it(`garbage bearer: 401 ${garbageCode}`, async () => {
          expectError(await call(r, url(), bearer('garbage-token')), 401, garbageCode);
          expectError(await call(r, url(), { authorization: 'Basic dXNlcjpwYXNz' }), 401, garbageCode);
        });
        it('JWT signed by another Ed25519 key: 401 AUTH_TOKEN_INVALID', async () => { expectError(await call(r, url(), bearer(creds.otherKey)), 401, 'AUTH_TOKEN_INVALID'); });
        it('alg:none JWT: 401 AUTH_TOKEN_INVALID', async () => { expectError(await call(r, url(), bearer(creds.unsignedJwt)), 401, 'AUTH_TOKEN_INVALID'); });
        it('expired JWT: 401 AUTH_TOKEN_EXPIRED', async () => { expectError(await call(r, url(), bearer(creds.expiredJwt)), 401, 'AUTH_TOKEN_EXPIRED'); });
        it('malformed API key: 401 INVALID_API_KEY', async () => { expectError(await call(r, url(), bearer('svc_live_x')), 401, 'INVALID_API_KEY'); });
        it('revoked API key: 401 INVALID_API_KEY', async () => { expectError(await call(r, url(), bearer(creds.revokedKey)), 401, 'INVALID_API_KEY'); });
        it('JWT of a signed-out session: 401 AUTH_TOKEN_INVALID', async () => { expectError(await call(r, url(), bearer(creds.loggedOutJwt)), 401, 'AUTH_TOKEN_INVALID'); });
        it('expired API key: 401 AUTH_TOKEN_EXPIRED', async () => { expectError(await call(r, url(), bearer(creds.expiredKey)), 401, 'AUTH_TOKEN_EXPIRED'); });
      });
    }

    const params = paramNames(r.url);
    const fixture = r.config.fixture ? FIXTURES[r.config.fixture] : undefined;
    const crossOrg = !!fixture && !r.config.rootOnly && !isPublic(r);
    const uuidParams = params.filter((p) => isUuidParam(r, p));
    if (params.length && (crossOrg || uuidParams.length)) {
      describe('(b) path ids', () => {
        const body = () => (bodySchema(r) ? sampleObject(bodySchema(r)!, `zzfixture${RUN}`) : undefined);
        // Echoing the caller's own input is no leak, nor is the request id; anything else must be identical.
        const norm = (res: LightMyRequestResponse, used: Record<string, string>) => {
          const text = Object.values(used).reduce((s, v) => s.split(v).join('<param>'), res.body);
          let parsed: { error?: { details?: Json } } | string | null;
          try { parsed = text ? JSON.parse(text) : null; } catch { parsed = text; }
          if (parsed && typeof parsed === 'object' && parsed.error?.details) delete parsed.error.details.requestId;
          return { status: res.statusCode, body: parsed };
        };
        const refusable = !r.config.rootOnly && !(r.config.permission && !ROLE_PERMISSIONS.owner.has(r.config.permission)) && !r.config.stepUp;
        // Path ids that are rows (UUIDs); a settings key names no row of another organization.
        if (crossOrg && refusable && uuidParams.length) {
          it("refused by role or scope (a viewer, a key without the scope): another organization's resource is 404, as a random id, never 403", async () => {
            const ids = await fixture!(t.app, A);
            const q = queryFor(r);
            const randomIds = Object.fromEntries(params.map((p) => [p, randomParam(r, p)]));
            for (const [who, headers] of Object.entries(refusedInB)) {
              const real = await call(r, fillPath(r, ids) + q, headers, body());
              const rand = await call(r, fillPath(r, randomIds) + q, headers, body());
              expect(norm(real, ids), who).toEqual(norm(rand, randomIds));
              if (real.statusCode === 501) continue; // reserved operations (spec 4.6): 501 for every id
              expect(`${who}: ${real.statusCode} ${real.body.slice(0, 200)}`).toBe(`${who}: 404 ${real.body.slice(0, 200)}`);
              expectError(real, 404, 'NOT_FOUND');
            }
          });
        }
        if (crossOrg) {
          it("another organization's resource: 404 NOT_FOUND, same body as a random id", async () => {
            const ids = await fixture!(t.app, A);
            for (const p of params) {
              if (typeof ids[p] !== 'string' || !ids[p]) throw new Error(`fixture "${r.config.fixture}" returned no "${p}" (got ${JSON.stringify(ids)})`);
            }
            const headers = await credentialFor(r, B);
            const q = queryFor(r);
            const randomIds = Object.fromEntries(params.map((p) => [p, randomParam(r, p)]));
            let real = await call(r, fillPath(r, ids) + q, headers, body());
            let rand = await call(r, fillPath(r, randomIds) + q, headers, body());
            let send = (path: string, h: Record<string, string>) => call(r, path, h, body());
            if (real.statusCode === 415 && !bodySchema(r)) {
              // A raw-body route (upload): send bytes so the request reaches the resource lookup.
              for (const type of ['application/octet-stream', 'application/pdf']) {
                send = (path, h) => t.app.inject({ method: r.method as 'PUT', url: path, headers: { ...h, 'content-type': type }, payload: Buffer.from('%PDF-1.4\n%%EOF\n') });
                real = await send(fillPath(r, ids) + q, headers);
                rand = await send(fillPath(r, randomIds) + q, headers);
                if (real.statusCode !== 415) break;
              }
            }
            expect(norm(real, ids)).toEqual(norm(rand, randomIds));
            // The spec reserves some operations (501 for every id); otherwise the answer is 404.
            if (real.statusCode === 501) return;
            expectError(real, 404, 'NOT_FOUND');
            // Control: the owner does reach the resource, so the 404 above is about visibility, not a broken fixture.
            // (Skipped when the ids are the owner's own organization or user: acting on them could end the tenant.)
            if (Object.values(ids).some((v) => v === A.orgId || v === A.userId)) return;
            const own = await send(fillPath(r, ids) + q, await credentialFor(r, A));
            expect(norm(own, ids), `the owner gets the same answer as a stranger: ${own.body.slice(0, 300)}`).not.toEqual(norm(rand, randomIds));
          });
        }
        const refusedBody = isStrictBody(r) ? () => ({ ...body(), [`zz_unknown_${RUN}`]: MARK })
          : takesNoBody([r.method], r.schema, r.config) && !(r.schema?.response as Json | undefined)?.['501'] ? () => ({ [`zz_${RUN}`]: MARK }) : null;
        if (crossOrg && refusedBody && uuidParams.length === 1 && params.length === 1) {
          it("another organization's resource with a body the route refuses (an unknown key): 404 NOT_FOUND as a random id, before validation (ARCHITECTURE \"Auth order\"); the owner gets the 400", async () => {
            const ids = await fixture!(t.app, A);
            const q = queryFor(r);
            const randomIds = Object.fromEntries(params.map((p) => [p, randomParam(r, p)]));
            const real = await call(r, fillPath(r, ids) + q, await credentialFor(r, B), refusedBody());
            const rand = await call(r, fillPath(r, randomIds) + q, await credentialFor(r, B), refusedBody());
            expect(norm(real, ids)).toEqual(norm(rand, randomIds));
            expectError(real, 404, 'NOT_FOUND');
            expectError(await call(r, fillPath(r, ids) + q, await credentialFor(r, A), refusedBody()), 400, 'VALIDATION_ERROR');
          });
        }
        if (uuidParams.length) {
          it('a non-UUID id: 400 INVALID_ID_FORMAT', async () => {
            const headers = await credentialFor(r, A);
            // `urn:uuid:<uuid>` is a UUID to some validators but not to PostgreSQL's uuid type.
            for (const bad of ['not-a-uuid', `urn:uuid:${randomUUID()}`]) {
              for (const p of uuidParams) {
                const res = await call(r, fillPath(r, { [p]: bad }) + queryFor(r), headers, body());
                const err = expectError(res, 400, 'INVALID_ID_FORMAT');
                expect(err.message).toContain(p);
              }
            }
          });
        }
      });
    }

    // Reserved routes (alert-rule PUT/DELETE) answer 501 whatever they are sent (spec 4.6), body included.
    if (takesNoBody([r.method], r.schema, r.config) && !(r.schema?.response as Json | undefined)?.['501']) {
      describe('(d) no body', () => {
        it('a field: 400 VALIDATION_ERROR UNKNOWN_FIELD naming it, before anything is done', async () => {
          const err = expectError(await call(r, await ownPath(r) + queryFor(r), await credentialFor(r, A), { [`zz_${RUN}`]: MARK }), 400, 'VALIDATION_ERROR');
          expect(err.details).toMatchObject({ field: `zz_${RUN}`, reason: 'UNKNOWN_FIELD' });
        });
      });
    }

    if (isStrictBody(r)) {
      describe('(c) strict body', () => {
        const schema = bodySchema(r)!;
        const props = (schema.properties ?? {}) as Record<string, Schema>;
        const base = () => sampleObject(schema, MARK);
        let path = '';
        const url = () => path + queryFor(r);
        const limit = r.bodyLimit ?? t.app.initialConfig.bodyLimit!;
        let before: Record<string, number>;
        // Event handlers of earlier requests (notifications, alert deliveries) write after their request was answered:
        // counted once they are done, so only this block's requests can change the counts.
        beforeAll(async () => { path = await ownPath(r); await t.platform.events.settled(); before = await tenantRowCounts(); });

        it('the sample base body is valid for the schema (sanity of the generator)', () => {
          const b = base();
          if (!valid(schema, b)) {
            // Not fatal for the mutations below (required keys are present), but say why so the generator can learn.
            console.warn(`[route-safety] ${label(r)}: could not build a valid base body: ${JSON.stringify(b).slice(0, 300)}`);
          }
        });
        it('an unknown key: 400 VALIDATION_ERROR naming the key', async () => {
          const key = `zz_unknown_${RUN}`;
          const err = expectError(await call(r, url(), await credentialFor(r, A), { ...base(), [key]: MARK }), 400, 'VALIDATION_ERROR');
          expect(err.message).toContain(key);
        });
        for (const field of ['id', 'org_id', 'created_at', 'updated_at']) {
          if (field in props) continue;
          it(`platform-assigned "${field}": 400 VALIDATION_ERROR naming it`, async () => {
            const value = field.endsWith('_at') ? new Date().toISOString() : field === 'org_id' ? B.orgId : randomUUID();
            const err = expectError(await call(r, url(), await credentialFor(r, A), { ...base(), [field]: value }), 400, 'VALIDATION_ERROR');
            expect(err.message).toContain(field);
          });
        }
        const required = (schema.required ?? []) as string[];
        const target = [...required, ...Object.keys(props)].find((k) => props[k] && wrongTypeFor(props[k]) !== undefined);
        if (target) {
          it(`a wrong type for "${target}": 400 VALIDATION_ERROR`, async () => {
            const err = expectError(await call(r, url(), await credentialFor(r, A), { ...base(), [target]: wrongTypeFor(props[target]) }), 400, 'VALIDATION_ERROR');
            expect(err.message).toContain(target);
          });
        }
        it('invalid JSON: 400 INVALID_JSON', async () => {
          expectError(await call(r, url(), await credentialFor(r, A), undefined, `{"${MARK}": `), 400, 'INVALID_JSON');
        });
        if (!r.config.bodyOptional) {
          it('an empty JSON body: 400 INVALID_JSON (not parseable JSON, even when every field is optional)', async () => {
            for (const raw of ['', '  \n']) expectError(await call(r, url(), await credentialFor(r, A), undefined, raw), 400, 'INVALID_JSON');
          });
        }
        it(`a body over ${limit} bytes: 413 PAYLOAD_TOO_LARGE with details.maxBytes`, async () => {
          const raw = `{"${MARK}":"${'a'.repeat(limit)}"}`;
          const err = expectError(await call(r, url(), await credentialFor(r, A), undefined, raw), 413, 'PAYLOAD_TOO_LARGE');
          expect(err.details?.maxBytes).toBe(limit);
        });
        it('1000 levels of nesting: 413 PAYLOAD_TOO_LARGE with details.limit', async () => {
          const raw = `{"${MARK}":${'['.repeat(999)}${']'.repeat(999)}}`;
          const err = expectError(await call(r, url(), await credentialFor(r, A), undefined, raw), 413, 'PAYLOAD_TOO_LARGE');
          expect(err.details?.limit).toBe(t.platform.config.jsonMaxDepth);
        });
        it('nothing was written', async () => {
          await t.platform.events.settled();
          expect(await tenantRowCounts()).toEqual(before);
        });
      });
    }
  });
}

describe('strict-body rejections', () => {
  it('stored none of the values they carried (scan of every table)', async () => {
    const found: string[] = [];
    for (const tb of allTables) {
      const row = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM "${tb}" x WHERE x::text LIKE $1`, [`%${MARK}%`]);
      if (row && row.n > 0) found.push(`${tb}: ${row.n}`);
    }
    expect(found).toEqual([]);
  });
});
