import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from './cli.js';
import { buildTestApp, bearer, errorOf, uniqueEmail, STRONG_PASSWORD, type TestApp } from '../test/helpers.js';
import { API_KEY_RE } from './core/auth/api-key-format.js';
import { sha256Hex } from './core/crypto.js';
import { accountsRepo } from './areas/accounts/accounts.repo.js';
import { ensureRoot } from './areas/accounts/root.service.js';
import { migrate } from './core/db/migrate.js';
import { loadConfig } from './core/config.js';
import { startPlatform } from './core/platform.js';
import pg from 'pg';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t.close(); });

/** Runs the CLI in-process against the test database; returns exit code and output. */
async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string; json: any }> {
  return cliWith({}, ...argv);
}

/** cli() with other settings than the test database's: `encryptionKey`; `databaseUrl`; `dataDir` alone (no DATABASE_URL). */
async function cliWith(env: { encryptionKey?: string; dataDir?: string; databaseUrl?: string }, ...argv: string[]): Promise<{ code: number; out: string; err: string; json: any }> {
  const saved = { DATABASE_URL: process.env.DATABASE_URL, ENCRYPTION_KEY: process.env.ENCRYPTION_KEY, DATA_DIR: process.env.DATA_DIR, exitCode: process.exitCode };
  if (env.dataDir === undefined) process.env.DATABASE_URL = env.databaseUrl ?? inject('databaseUrl');
  else { delete process.env.DATABASE_URL; process.env.DATA_DIR = env.dataDir; }
  process.env.ENCRYPTION_KEY = env.encryptionKey ?? inject('encryptionKey');
  let out = '';
  let err = '';
  try {
    const code = await main(argv, { stdout: (s) => { out += s; }, stderr: (s) => { err += s; } });
    let json: unknown = null;
    try { json = JSON.parse(out); } catch { /* text output */ }
    return { code, out, err, json };
  } finally {
    for (const k of ['DATABASE_URL', 'ENCRYPTION_KEY', 'DATA_DIR'] as const) {
      if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
    }
    process.exitCode = saved.exitCode;
  }
}

const auditOf = (orgId: string, action: string) =>
  t.platform.db.sys.query<{ credential_kind: string; actor_user_id: string | null; request_id: string; target_id: string; details: Record<string, unknown> }>(
    `SELECT credential_kind, actor_user_id, request_id, target_id, details FROM audit_log WHERE org_id = $1 AND action = $2 ORDER BY id`, [orgId, action]);
/** A new database on the test server, migrated and started once as the server does (root organization and admin). */
async function freshPlatformDatabase(): Promise<{ url: string; query<T>(text: string): Promise<T[]>; drop(): Promise<void> }> {
  const url = new URL(inject('databaseUrl'));
  const name = `platform_cli_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  url.pathname = `/${name}`;
  const fresh = url.toString();
  await migrate(fresh);
  const config = loadConfig({ NODE_ENV: 'test' }, { databaseUrl: fresh, encryptionKey: inject('encryptionKey'), dataDir: inject('dataDir'), logLevel: 'silent' });
  const running = await startPlatform(config, { info() {}, warn() {}, error() {} });
  try { await ensureRoot(running.platform); } finally { await running.close(); }
  return {
    url: fresh,
    async query<T>(text: string) {
      const c = new pg.Client({ connectionString: fresh });
      await c.connect();
      try { return (await c.query(text)).rows as T[]; } finally { await c.end(); }
    },
    async drop() {
      const c = new pg.Client({ connectionString: inject('databaseUrl') });
      await c.connect();
      try { await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); } finally { await c.end(); }
    },
  };
}
const slug = (tag: string) => `${tag}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

describe('platform CLI: admin commands', () => {
  it('org create, user create, api-key create, scim-token create and entitlements set work end to end', async () => {
    const s = slug('cli-org');
    const org = await cli('org', 'create', '--name', 'CLI Org', '--slug', s, '--json');
    expect(org.code).toBe(0);
    expect(org.json).toMatchObject({ id: expect.any(String), name: 'CLI Org', slug: s, is_root: false, subscription_status: 'active' });
    expect(org.json.role).toBeUndefined();
    const orgId = org.json.id as string;
    const created = await auditOf(orgId, 'organization.created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ credential_kind: 'system', actor_user_id: null, request_id: expect.stringMatching(/^cli:/) });

    const email = uniqueEmail('cli-owner');
    const user = await cli('user', 'create', '--email', email, '--name', 'Cli Owner', '--org', s, '--role', 'owner', '--password', STRONG_PASSWORD, '--json');
    expect(user.code).toBe(0);
    expect(user.json).toMatchObject({ user_id: expect.any(String), email, name: 'Cli Owner', role: 'owner', organization_id: orgId, password_set: true });
    const login = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: STRONG_PASSWORD } });
    expect(login.statusCode).toBe(200);
    expect(login.json().data.organization).toMatchObject({ id: orgId, role: 'owner' });
    expect((await auditOf(orgId, 'user.created'))[0]).toMatchObject({ credential_kind: 'system', target_id: user.json.user_id, details: { email, invited: false } });
    expect((await auditOf(orgId, 'member.added'))[0]).toMatchObject({ credential_kind: 'system', details: { role: 'owner' } });

    // an invited member (no password) by organization id
    const invitee = uniqueEmail('cli-invitee');
    const inv = await cli('user', 'create', '--email', invitee, '--name', 'Invitee', '--org', orgId, '--json');
    expect(inv.json).toMatchObject({ role: 'member', password_set: false });
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: invitee, password: STRONG_PASSWORD } }), 401, 'AUTH_INVALID_CREDENTIALS');

    const key = await cli('api-key', 'create', '--org', s, '--user', email.toUpperCase(), '--name', 'deploy', '--scopes', 'projects:read, settings:write', '--expires-in-days', '30', '--json');
    expect(key.code).toBe(0);
    expect(key.json).toMatchObject({ id: expect.any(String), name: 'deploy', scopes: ['projects:read', 'settings:write'], created_by_user_id: user.json.user_id, revoked_at: null });
    expect(key.json.key).toMatch(API_KEY_RE);
    expect(Math.round((Date.parse(key.json.expires_at) - Date.now()) / 86_400_000)).toBe(30);
    const me = await t.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key.json.key) });
    expect(me.statusCode).toBe(200);
    expect(me.json().data).toMatchObject({ user: { email }, organization: { id: orgId }, role: 'owner', credential: { kind: 'api_key', scopes: ['projects:read', 'settings:write'] } });
    expect((await auditOf(orgId, 'api_key.created'))[0]).toMatchObject({ credential_kind: 'system', target_id: key.json.id, details: { acts_as_user_id: user.json.user_id } });

    const scim = await cli('scim-token', 'create', '--org', s, '--name', 'Okta', '--json');
    expect(scim.code).toBe(0);
    expect(scim.json).toMatchObject({ id: expect.any(String), name: 'Okta', token: expect.stringMatching(/^scim_/), organization_id: orgId });
    const row = await t.platform.db.sys.one<{ token_hash: string }>(`SELECT token_hash FROM scim_tokens WHERE id = $1`, [scim.json.id]);
    expect(row!.token_hash).toBe(sha256Hex(scim.json.token));
    expect(await auditOf(orgId, 'scim_token.created')).toHaveLength(1);

    const ent = await cli('entitlements', 'set', '--org', orgId, '--plan-tier', 'team', '--subscription-status', 'past_due', '--features', 'documents,mcp', '--json');
    expect(ent.code).toBe(0);
    expect(ent.json).toMatchObject({ id: orgId, plan_tier: 'team', subscription_status: 'past_due', features: ['documents', 'mcp'] });
    // another process changed it: this server sees it once its short credential cache turns over
    t.platform.credentials.invalidate();
    expect((await t.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key.json.key) })).json().data.organization).toMatchObject({ plan_tier: 'team', features: ['documents', 'mcp'] });
    expect((await auditOf(orgId, 'organization.entitlements_changed'))[0]).toMatchObject({ credential_kind: 'system', details: { plan_tier: 'team', subscription_status: 'past_due', features: ['documents', 'mcp'] } });
    const none = await cli('entitlements', 'set', '--org', s, '--features', '', '--json');
    expect(none.json.features).toEqual([]);
  });

  it('makes platform administrators: super_admin and admin-scoped keys in the root organization only', async () => {
    const rootOrg = (await t.platform.db.sys.one<{ id: string; slug: string }>(`SELECT id, slug FROM organizations WHERE is_root`))!;
    const email = uniqueEmail('cli-super');
    const u = await cli('user', 'create', '--email', email, '--name', 'Super', '--org', rootOrg.slug, '--role', 'super_admin', '--json');
    expect(u.json).toMatchObject({ role: 'super_admin', organization_id: rootOrg.id });
    const key = await cli('api-key', 'create', '--org', rootOrg.id, '--user', email, '--name', 'ops', '--scopes', 'admin', '--expires-in-days', '1', '--json');
    expect(key.code).toBe(0);
    const list = await t.app.inject({ method: 'GET', url: '/v1/admin/organizations', headers: bearer(key.json.key) });
    expect(list.statusCode).toBe(200);
  });

  it('prints readable text without --json', async () => {
    const s = slug('cli-text');
    const org = await cli('org', 'create', '--name', 'Text Org', '--slug', s);
    expect(org.code).toBe(0);
    expect(org.out).toContain(`slug ${s}`);
    await cli('user', 'create', '--email', uniqueEmail('t'), '--name', 'T', '--org', s, '--role', 'admin');
    const email = uniqueEmail('text');
    await cli('user', 'create', '--email', email, '--name', 'T', '--org', s);
    const key = await cli('api-key', 'create', '--org', s, '--user', email, '--name', 'k', '--scopes', 'projects:read', '--expires-in-days', '1');
    expect(key.out).toMatch(/svc_live_[A-Za-z0-9]{8}_/);
  });

  it('refuses bad input with the REST codes (exit 1, JSON error with --json)', async () => {
    const s = slug('cli-bad');
    expect((await cli('org', 'create', '--name', 'Bad', '--slug', s, '--json')).code).toBe(0);
    const email = uniqueEmail('bad');
    expect((await cli('user', 'create', '--email', email, '--name', 'B', '--org', s, '--password', STRONG_PASSWORD, '--json')).code).toBe(0);
    const cases: Array<[string[], string]> = [
      [['org', 'create', '--name', 'Dup', '--slug', s], 'CONFLICT'],
      [['org', 'create', '--name', 'X', '--slug', 'admin'], 'VALIDATION_ERROR'],
      [['org', 'create', '--name', '   '], 'VALIDATION_ERROR'],
      [['user', 'create', '--email', 'not-an-email', '--name', 'X', '--org', s], 'VALIDATION_ERROR'],
      [['user', 'create', '--email', uniqueEmail(), '--name', 'X', '--org', s, '--role', 'king'], 'VALIDATION_ERROR'],
      [['user', 'create', '--email', uniqueEmail(), '--name', 'X', '--org', s, '--role', 'super_admin'], 'VALIDATION_ERROR'],
      [['user', 'create', '--email', uniqueEmail(), '--name', 'X', '--org', s, '--password', 'aaaa1111aaaa'], 'VALIDATION_ERROR'],
      [['user', 'create', '--email', email, '--name', 'X', '--org', s], 'CONFLICT'],
      [['user', 'create', '--email', uniqueEmail(), '--name', 'X', '--org', 'no-such-org'], 'NOT_FOUND'],
      [['api-key', 'create', '--org', s, '--user', email, '--name', 'k', '--scopes', 'projects:read,bogus', '--expires-in-days', '5'], 'VALIDATION_ERROR'],
      [['api-key', 'create', '--org', s, '--user', email, '--name', 'k', '--scopes', 'admin', '--expires-in-days', '5'], 'FORBIDDEN'],
      [['api-key', 'create', '--org', s, '--user', email, '--name', 'k', '--scopes', 'projects:read', '--expires-in-days', '400'], 'VALIDATION_ERROR'],
      [['api-key', 'create', '--org', s, '--user', email, '--name', 'k', '--scopes', 'projects:read', '--expires-in-days', 'soon'], 'VALIDATION_ERROR'],
      [['api-key', 'create', '--org', s, '--user', uniqueEmail('nobody'), '--name', 'k', '--scopes', 'projects:read', '--expires-in-days', '5'], 'NOT_FOUND'],
      [['api-key', 'create', '--org', s, '--user', email, '--name', 'k', '--scopes', '', '--expires-in-days', '5'], 'VALIDATION_ERROR'],
      [['entitlements', 'set', '--org', s, '--plan-tier', 'gold'], 'VALIDATION_ERROR'],
      [['entitlements', 'set', '--org', s, '--features', 'documents,teleport'], 'VALIDATION_ERROR'],
      [['entitlements', 'set', '--org', '0190a000-0000-7000-8000-000000000000', '--plan-tier', 'pro'], 'NOT_FOUND'],
      [['scim-token', 'create', '--org', 'no-such-org', '--name', 'x'], 'NOT_FOUND'],
    ];
    for (const [argv, code] of cases) {
      const r = await cli(...argv, '--json');
      expect({ argv, exit: r.code, code: r.json?.error?.code }).toEqual({ argv, exit: 1, code });
      expect(r.err).toContain(code);
    }
    // A value outside a list names the allowed values, as the REST route does.
    const gold = await cli('entitlements', 'set', '--org', s, '--plan-tier', 'gold', '--json');
    expect(gold.json.error.message).toBe('--plan-tier must be one of: "academic_free", "pro", "team", "business", "enterprise"');
    expect(gold.json.error.details).toEqual({ field: 'plan-tier', allowedValues: ['academic_free', 'pro', 'team', 'business', 'enterprise'] });
    // a member of another organization is not a member here
    const other = slug('cli-other');
    await cli('org', 'create', '--name', 'Other', '--slug', other);
    const r = await cli('api-key', 'create', '--org', other, '--user', email, '--name', 'k', '--scopes', 'projects:read', '--expires-in-days', '5', '--json');
    expect(r.json.error.code).toBe('NOT_FOUND');
    // Messages say what to fix: the value not found, the flag to correct, the command to run first.
    expect(r.json.error.message).toBe('That account is not a member of the organization; add it first with "platform user create --org ..."');
    expect((await cli('user', 'create', '--email', uniqueEmail(), '--name', 'X', '--org', 'no-such-org', '--json')).json.error.message)
      .toBe('No organization with slug "no-such-org"');
    expect((await cli('api-key', 'create', '--org', s, '--user', 'nobody@example.test', '--name', 'k', '--scopes', 'projects:read', '--expires-in-days', '5', '--json')).json.error.message)
      .toBe('No account with the e-mail "nobody@example.test"; create it with "platform user create"');
    const short = await cli('user', 'create', '--email', uniqueEmail(), '--name', 'X', '--org', s, '--password', 'short', '--json');
    expect(short.json.error.message).toMatch(/^--password must /);
  });

  it('user create: --help states the password rule of docs/accounts.md, and --password applies it (12 to 256 characters, 5 different)', async () => {
    const help = await cli('user', 'create', '--help');
    expect(help.out).toContain('same rules as sign-up: 12 to 256 characters, at least 5 of them different\n');
    expect(help.out).not.toMatch(/common|repetitive/);
    const s = slug('cli-pwrule');
    await cli('org', 'create', '--name', 'Password Rule Org', '--slug', s);
    const create = (password: string) => cli('user', 'create', '--email', uniqueEmail('pwrule'), '--name', 'P', '--org', s, '--password', password, '--json');
    // a common word is no longer refused; a password of the maximum length is accepted
    expect((await create('Password123!')).code).toBe(0);
    expect((await create('abcde'.repeat(51) + 'f')).code).toBe(0);
    const long = await create('abcde'.repeat(51) + 'fg');
    expect(long.code).toBe(1);
    expect(long.json.error).toEqual({ code: 'VALIDATION_ERROR', message: '--password must be at most 256 characters', details: { field: 'password', reason: 'WEAK_PASSWORD' } });
    // Characters are code points, as on REST: 200 emoji are 200 characters (400 UTF-16 units), 6 are too few.
    const emoji = ['\u{1F600}', '\u{1F601}', '\u{1F602}', '\u{1F923}', '\u{1F603}'];
    expect((await create(Array.from({ length: 200 }, (_, i) => emoji[i % 5]).join(''))).code).toBe(0);
    expect((await create(Array.from({ length: 6 }, (_, i) => emoji[i % 5]).join(''))).json.error).toMatchObject({ details: { field: 'password', reason: 'WEAK_PASSWORD' } });
    const few = await create('abcdabcdabcd');
    expect(few.json.error).toEqual({ code: 'VALIDATION_ERROR', message: '--password is too weak: use at least 5 different characters', details: { field: 'password', reason: 'WEAK_PASSWORD' } });
  });

  it('user create --password gives an invited member of the organization its first password (membership unchanged); a second time is 409', async () => {
    const s = slug('cli-firstpw');
    const org = (await cli('org', 'create', '--name', 'First Password Org', '--slug', s, '--json')).json;
    const email = uniqueEmail('invitee');
    expect((await cli('user', 'create', '--email', email, '--name', 'Invitee', '--org', s, '--role', 'admin', '--json')).code).toBe(0);
    const set = await cli('user', 'create', '--email', email, '--name', 'Invitee', '--org', s, '--password', STRONG_PASSWORD, '--json');
    expect(set.code, set.err).toBe(0);
    expect(set.json).toMatchObject({ email, role: 'admin', organization_id: org.id, password_set: true });
    const login = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: STRONG_PASSWORD } });
    expect(login.statusCode).toBe(200);
    expect((await auditOf(org.id, 'user.password_set')).length).toBe(1);
    const again = await cli('user', 'create', '--email', email, '--name', 'Invitee', '--org', s, '--password', STRONG_PASSWORD, '--json');
    expect({ exit: again.code, code: again.json.error.code }).toEqual({ exit: 1, code: 'CONFLICT' });
  });

  it('user set-password-token: an operator hands an invited account a token that sets its first password', async () => {
    const s = slug('cli-pwtoken');
    const org = (await cli('org', 'create', '--name', 'Token Org', '--slug', s, '--json')).json;
    const email = uniqueEmail('invited');
    expect((await cli('user', 'create', '--email', email, '--name', 'Invited', '--org', s, '--json')).code).toBe(0);
    const first = await cli('user', 'set-password-token', '--email', email);
    expect(first.code).toBe(0);
    expect(first.out).toContain('POST /v1/auth/password-reset/confirm');
    const r = await cli('user', 'set-password-token', '--email', email.toUpperCase(), '--json');
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ user_id: expect.any(String), email, token: expect.stringMatching(/^pr_[A-Za-z0-9_-]{43}$/), expires_at: expect.any(String), confirm: 'POST /v1/auth/password-reset/confirm' });
    expect(Date.parse(r.json.expires_at) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(Date.parse(r.json.expires_at) - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    const confirm = (token: string) => t.app.inject({ method: 'POST', url: '/v1/auth/password-reset/confirm', payload: { token, password: STRONG_PASSWORD } });
    // The newer token replaced the one printed first.
    errorOf(await confirm(/pr_[A-Za-z0-9_-]{43}/.exec(first.out)![0]), 401, 'AUTH_TOKEN_INVALID');
    expect((await confirm(r.json.token)).statusCode).toBe(200);
    const login = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: STRONG_PASSWORD } });
    expect(login.statusCode).toBe(200);
    expect(await auditOf(org.id, 'user.password_reset_requested')).toEqual([
      expect.objectContaining({ credential_kind: 'system', target_id: r.json.user_id, details: { via: 'operator' } }),
      expect.objectContaining({ credential_kind: 'system', target_id: r.json.user_id, details: { via: 'operator' } }),
    ]);
    const unknown = await cli('user', 'set-password-token', '--email', uniqueEmail('nobody'), '--json');
    expect({ exit: unknown.code, code: unknown.json.error.code }).toEqual({ exit: 1, code: 'NOT_FOUND' });
    expect((await cli('user', 'set-password-token')).code).toBe(2);
  });

  it('user deactivate / activate: a deactivated account cannot sign in or use its key, its sessions end; reactivated, it signs in again', async () => {
    const s = slug('cli-deactivate');
    const org = (await cli('org', 'create', '--name', 'Deactivate Org', '--slug', s, '--json')).json;
    const email = uniqueEmail('leaver');
    expect((await cli('user', 'create', '--email', email, '--name', 'Leaver', '--org', s, '--password', STRONG_PASSWORD, '--json')).code).toBe(0);
    const key = (await cli('api-key', 'create', '--org', s, '--user', email, '--name', 'k', '--scopes', 'projects:read', '--expires-in-days', '5', '--json')).json.key as string;
    const login = () => t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: STRONG_PASSWORD } });
    const session = (await login()).json().data;
    expect((await t.app.inject({ url: '/v1/me', headers: bearer(session.access_token) })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/v1/me', headers: bearer(key) })).statusCode).toBe(200);

    const off = await cli('user', 'deactivate', '--email', email.toUpperCase(), '--json');
    expect({ code: off.code, data: off.json }).toEqual({ code: 0, data: { user_id: expect.any(String), email, is_active: false, changed: true } });
    errorOf(await login(), 401, 'AUTH_INVALID_CREDENTIALS');
    errorOf(await t.app.inject({ url: '/v1/me', headers: bearer(session.access_token) }), 401, 'AUTH_TOKEN_INVALID');
    expect(errorOf(await t.app.inject({ url: '/v1/me', headers: bearer(key) }), 401, 'INVALID_API_KEY').message).toBe('API key creator\'s account is deactivated');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: session.refresh_token } }), 401, 'AUTH_TOKEN_INVALID');
    expect((await cli('user', 'deactivate', '--email', email)).out).toContain('was deactivated already');
    expect(await auditOf(org.id, 'user.deactivated')).toEqual([expect.objectContaining({ credential_kind: 'system', target_id: off.json.user_id, details: { sessions_revoked: 1 } })]);

    const on = await cli('user', 'activate', '--email', email, '--json');
    expect(on.json).toEqual({ user_id: off.json.user_id, email, is_active: true, changed: true });
    expect((await login()).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/v1/me', headers: bearer(key) })).statusCode).toBe(200);
    // The sessions that ended stay ended.
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: session.refresh_token } }), 401, 'AUTH_TOKEN_INVALID');
    expect(await auditOf(org.id, 'user.reactivated')).toHaveLength(1);
    const unknown = await cli('user', 'deactivate', '--email', uniqueEmail('nobody'), '--json');
    expect({ exit: unknown.code, code: unknown.json.error.code }).toEqual({ exit: 1, code: 'NOT_FOUND' });
  });

  it('user deactivate spends the account\'s unused password tokens (reactivating brings none back); the last-root-super-admin rule', async () => {
    const s = slug('cli-deact-token');
    await cli('org', 'create', '--name', 'Deact Token Org', '--slug', s, '--json');
    const email = uniqueEmail('held-token');
    expect((await cli('user', 'create', '--email', email, '--name', 'Held', '--org', s, '--password', STRONG_PASSWORD, '--json')).code).toBe(0);
    const token = (await cli('user', 'set-password-token', '--email', email, '--json')).json.token as string;
    expect((await cli('user', 'deactivate', '--email', email)).code).toBe(0);
    expect((await cli('user', 'activate', '--email', email)).code).toBe(0);
    const confirm = await t.app.inject({ method: 'POST', url: '/v1/auth/password-reset/confirm', payload: { token, password: 'Another-Strong-Pass-42' } });
    errorOf(confirm, 401, 'AUTH_TOKEN_INVALID');
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: STRONG_PASSWORD } })).statusCode).toBe(200);

    // The root organization's super-admins: the last active one stays active.
    const root = await t.platform.db.sys.query<{ email: string; is_active: boolean }>(`SELECT u.email, u.is_active FROM memberships m JOIN organizations o ON o.id = m.org_id AND o.is_root
      JOIN users u ON u.id = m.user_id WHERE m.role = 'super_admin'`);
    const active = root.filter((r) => r.is_active);
    // Other test files may add root super-admins meanwhile: the rule itself is checked in a transaction rolled back.
    const first = active[0].email;
    await t.platform.db.systemTx(async (sql) => {
      const admin = (await sql.one<{ id: string }>('SELECT id FROM users WHERE email = $1', [first]))!;
      expect(await accountsRepo.isLastRootSuperAdmin(sql, admin.id)).toBe(active.length === 1);
      await sql.exec(`UPDATE users SET is_active = false WHERE id <> $1 AND id IN (SELECT m.user_id FROM memberships m JOIN organizations o ON o.id = m.org_id AND o.is_root WHERE m.role = 'super_admin')`, [admin.id]);
      expect(await accountsRepo.isLastRootSuperAdmin(sql, admin.id)).toBe(true);
      const member = (await sql.one<{ id: string }>('SELECT id FROM users WHERE email = $1', [email]))!;
      expect(await accountsRepo.isLastRootSuperAdmin(sql, member.id)).toBe(false);
      throw new Error('rollback');
    }).catch((err: Error) => { if (err.message !== 'rollback') throw err; });
  });

  it('user deactivate refuses the last active root super-admin (CONFLICT, exit 1) and takes one of two', async () => {
    // A platform of its own, so no other test file's root super-admins count: the server's first start made it.
    const fresh = await freshPlatformDatabase();
    try {
      const r = await cliWith({ databaseUrl: fresh.url }, 'user', 'deactivate', '--email', 'admin@localhost', '--json');
      expect({ exit: r.code, code: r.json.error.code }).toEqual({ exit: 1, code: 'CONFLICT' });
      const second = uniqueEmail('second-root');
      const rootSlug = (await fresh.query<{ slug: string }>('SELECT slug FROM organizations WHERE is_root'))[0].slug;
      expect((await cliWith({ databaseUrl: fresh.url }, 'user', 'create', '--email', second, '--name', 'Second', '--org', rootSlug, '--role', 'super_admin', '--json')).code).toBe(0);
      expect((await cliWith({ databaseUrl: fresh.url }, 'user', 'deactivate', '--email', 'admin@localhost', '--json')).code).toBe(0);
      const last = await cliWith({ databaseUrl: fresh.url }, 'user', 'deactivate', '--email', second, '--json');
      expect({ exit: last.code, code: last.json.error.code }).toEqual({ exit: 1, code: 'CONFLICT' });
      expect(await fresh.query('SELECT email, is_active FROM users ORDER BY email')).toEqual([
        { email: 'admin@localhost', is_active: false }, { email: second, is_active: true },
      ]);
    } finally {
      await fresh.drop();
    }
  });

  it('a database first used with another encryption key is a one-line refusal (exit 1, JSON error), not a stack trace', async () => {
    const r = await cliWith({ encryptionKey: 'ab'.repeat(32) }, 'org', 'create', '--name', 'Other key', '--json');
    expect(r.code).toBe(1);
    expect(r.json.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(r.json.error.message).toMatch(/^The token signing key stored in the database cannot be opened with this encryption key: use the ENCRYPTION_KEY, or the DATA_DIR/);
    expect(r.err).toMatch(/^org create: SERVICE_UNAVAILABLE: The token signing key/);
  });

  it('a DATA_DIR without platform data (a typo, or no server started there) is refused: nothing is created there', async () => {
    const dataDir = path.join(os.tmpdir(), `platform-cli-no-data-${process.pid}-${Date.now()}`);
    const message = `No platform data in DATA_DIR ${dataDir} (no embedded database there, and DATABASE_URL is not set). `
      + 'Run the command with the DATA_DIR of your server (or its DATABASE_URL), or start the server once with this DATA_DIR to create the platform there.';
    const r = await cliWith({ dataDir }, 'org', 'create', '--name', 'Oops', '--json');
    expect(r.code).toBe(1);
    expect(r.json).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message } });
    expect(r.err).toBe(`org create: SERVICE_UNAVAILABLE: ${message}\n`);
    expect(existsSync(dataDir)).toBe(false);
    // An existing directory without a cluster (made by hand, or another program's) is no platform either.
    mkdirSync(dataDir);
    try {
      const text = await cliWith({ dataDir }, 'user', 'deactivate', '--email', 'someone@example.com');
      expect(text.code).toBe(1);
      expect(text.out).toBe('');
      expect(text.err).toBe(`user deactivate: SERVICE_UNAVAILABLE: ${message}\n`);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally { rmSync(dataDir, { recursive: true, force: true }); }
  });

  it('admin commands and migrate refuse a bad setting with one line naming it (exit 1), not a stack trace', async () => {
    const saved = process.env.RATE_LIMIT_MAX;
    process.env.RATE_LIMIT_MAX = 'x';
    try {
      const message = 'RATE_LIMIT_MAX must be a whole number of 0 or more, got "x"';
      const org = await cli('org', 'create', '--name', 'Bad setting', '--json');
      expect(org.code).toBe(1);
      expect(org.json).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message } });
      expect(org.err).toBe(`org create: SERVICE_UNAVAILABLE: ${message}\n`);
      const migrate = await cli('migrate');
      expect({ code: migrate.code, out: migrate.out, err: migrate.err }).toEqual({ code: 1, out: '', err: `migrate: SERVICE_UNAVAILABLE: ${message}\n` });
    } finally {
      if (saved === undefined) delete process.env.RATE_LIMIT_MAX; else process.env.RATE_LIMIT_MAX = saved;
    }
  });

  it('usage errors exit 2: missing or unknown options, unknown commands', async () => {
    for (const argv of [['org', 'create'], ['org', 'create', '--name', 'x', '--colour', 'red'], ['user', 'create', '--email', 'a@b.c'], ['entitlements', 'set', '--org', 'x'], ['org', 'destroy'], ['frobnicate'], ['org']]) {
      const r = await cli(...argv);
      expect({ argv, code: r.code }).toEqual({ argv, code: 2 });
      expect(r.err + r.out).toMatch(/Usage: platform/);
    }
  });

  it('--help for every command', async () => {
    const top = await cli('--help');
    expect(top.code).toBe(0);
    for (const c of ['org create', 'user create', 'user set-password-token', 'user deactivate', 'user activate', 'api-key create', 'scim-token create', 'entitlements set']) {
      expect(top.out).toContain(c);
      const r = await cli(...c.split(' '), '--help');
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Usage: platform ${c}`);
    }
    expect((await cli('api-key', '--help')).out).toContain('platform api-key create');
  });

  it('serve and migrate: --help prints their usage (serve does not start a server); unknown options exit 2', async () => {
    for (const c of ['serve', 'migrate']) {
      const help = await cli(c, '--help');
      expect({ c, code: help.code, err: help.err }).toEqual({ c, code: 0, err: '' });
      expect(help.out).toContain(`Usage: platform ${c}`);
      const bad = await cli(c, '--colour', 'red');
      expect({ c, code: bad.code }).toEqual({ c, code: 2 });
      expect(bad.err).toContain(`Usage: platform ${c}`);
    }
  });
});

describe('platform CLI: the bin', () => {
  it('node bin/platform.mjs --help prints the usage', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const r = spawnSync(process.execPath, [path.join(root, 'bin', 'platform.mjs'), '--help'], { cwd: root, encoding: 'utf8', timeout: 170_000 });
    expect(r.stdout).toContain('Usage: platform <command>');
    expect(r.stdout).toContain('api-key create');
    expect(r.status).toBe(0);
  }, 180_000);

  it('a refused start closes the database connections it opened: the process exits right after its one line', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-cli-refused-'));
    // The idle connections of pools left open kept the process alive for the pools' 10 s idle timeout.
    const r = spawnSync(process.execPath, [path.join(root, 'bin', 'platform.mjs'), 'org', 'create', '--name', 'Other key', '--json'], {
      cwd: root, encoding: 'utf8', timeout: 8_000,
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), ENCRYPTION_KEY: 'ab'.repeat(32), DATA_DIR: dataDir },
    });
    rmSync(dataDir, { recursive: true, force: true });
    expect(r.signal, 'still running 8 s after its refusal').toBeNull();
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout).error.code).toBe('SERVICE_UNAVAILABLE');
  }, 30_000);

  it('serve --json prints the first start\'s root API key as one JSON line (a well-formed svc_live_ key)', async () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-serve-json-'));
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    delete env.ROOT_API_KEY;
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [path.join(root, 'bin', 'platform.mjs'), 'serve', '--json'], { cwd: root, env });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const found = out.split('\n').find((l) => l.includes('"root_api_key"'));
          if (found) resolve(found);
        });
        child.on('exit', (code) => reject(new Error(`serve exited (${code}) before printing the key: ${out}`)));
      });
      const printed = JSON.parse(line) as { root_api_key: string; shown_once: boolean };
      expect(printed.shown_once).toBe(true);
      expect(printed.root_api_key).toMatch(API_KEY_RE);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  it('serve refuses a bad setting with one line naming it and exit code 1, before touching the database', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const cases: Array<[Record<string, string>, string]> = [
      [{ DEFAULT_PLAN_TIER: 'gold' }, 'DEFAULT_PLAN_TIER must be one of academic_free, pro, team, business, enterprise, got "gold"'],
      [{ PORT: 'abc' }, 'PORT must be a whole number from 0 to 65535, got "abc"'],
      [{ ALLOW_SIGNUP: 'maybe' }, 'ALLOW_SIGNUP must be true or false (or 1/0, yes/no, on/off), got "maybe"'],
    ];
    for (const [setting, message] of cases) {
      const env = { ...process.env, DATA_DIR: path.join(root, 'no-such-data-dir'), PORT: '0', ...setting };
      const r = spawnSync(process.execPath, [path.join(root, 'bin', 'platform.mjs'), 'serve'], { cwd: root, env, encoding: 'utf8', timeout: 170_000 });
      expect({ setting, status: r.status }).toEqual({ setting, status: 1 });
      expect(r.stderr.replace(/^Building \(tsc\)\.\.\.\n/, '')).toBe(`platform: could not start: ${message}\n`);
    }
    expect(existsSync(path.join(root, 'no-such-data-dir'))).toBe(false);
  }, 180_000);
});
