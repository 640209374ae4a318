import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ValidateFunction } from 'ajv';
import { asEnumError } from './core/http/literal-unions.js';
import { newAjv } from './core/http/validation.js';
import type { TSchema } from 'typebox';
import { loadConfig, type Config } from './core/config.js';
import { migrate } from './core/db/migrate.js';
import { hasCluster, runningPostmaster, startEmbeddedPostgres } from './core/db/embedded.js';
import { startPlatform } from './core/platform.js';
import { AppError } from './core/errors.js';
import type { ServiceContext } from './core/context.js';
import { systemContext } from './areas/accounts/system.js';
import * as S from './areas/accounts/accounts.schemas.js';
import { createOrganization, addMember } from './areas/accounts/organizations.service.js';
import { createApiKey } from './areas/accounts/api-keys.service.js';
import { issueResetTokenFor } from './areas/accounts/password-reset.service.js';
import { PASSWORD_RULE } from './areas/accounts/passwords.js';
import { createScimToken, resolveOrganization, resolveUserByEmail, setEntitlements, setUserActive } from './areas/accounts/admin.service.js';

export const USAGE = `Usage: platform <command> [options]

Commands:
  serve                         Start the API server (PORT, DATA_DIR, DATABASE_URL...)
  migrate                       Apply database migrations and exit
  org create                    Create an organization
  user create                   Create a user (or take an existing one) and add them to an organization
  user set-password-token       Issue a one-hour token that sets a user's password (reset or first password)
  user deactivate               Stop an account from signing in or using its keys (its sessions end)
  user activate                 Let a deactivated account sign in again
  api-key create                Create an API key acting as a member of an organization
  scim-token create             Create a SCIM bearer token for an organization
  entitlements set              Set an organization's plan tier, subscription status and features
  --help                        Show this help; "platform <command> --help" shows a command's options

Admin commands work offline against the database: the embedded one under DATA_DIR (default ./data),
or DATABASE_URL; a DATA_DIR without a database is refused (a server's first start there creates it).
They call the same services as the REST API and write the same audit rows (credential kind "system",
request id "cli:<uuid>").
Every command accepts --json for machine-readable output. Exit codes: 0 ok, 1 refused, 2 usage error.
`;

interface Io { stdout(s: string): void; stderr(s: string): void }
const defaultIo: Io = { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) };

type Opt = { type: 'string' | 'boolean'; short?: string };
interface Command {
  usage: string;
  options: Record<string, Opt>;
  required: string[];
  run(ctx: ServiceContext, v: Record<string, string | boolean | undefined>): Promise<{ data: unknown; text: string }>;
}

class UsageError extends Error {}

const ajv = newAjv(false);
const compiled = new WeakMap<object, ValidateFunction>();

/** The REST body schema checks CLI input too, so both refuse the same bad input with VALIDATION_ERROR. */
function checkBody<T>(schema: TSchema, body: Record<string, unknown>, flagOf: Record<string, string>): T {
  let fn = compiled.get(schema);
  if (!fn) { fn = ajv.compile(schema); compiled.set(schema, fn); }
  if (!fn(body)) {
    const e = asEnumError(fn.errors!) ?? fn.errors![0];
    const field = (e.keyword === 'required' ? String(e.params.missingProperty) : e.instancePath.replace(/^\//, '').split('/')[0]) || '';
    const flag = flagOf[field] ?? field;
    throw new AppError('VALIDATION_ERROR', `${flag ? `--${flag}` : 'input'} ${e.message ?? 'is invalid'}`,
      { field: flag || undefined, ...(e.keyword === 'enum' ? { allowedValues: e.params.allowedValues } : {}) });
  }
  return body as T;
}

const list = (v: string | boolean | undefined): string[] | undefined =>
  typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

function readPasswordFromStdin(): string {
  const text = readFileSync(0, 'utf8');
  return text.split(/\r?\n/)[0];
}

const COMMANDS: Record<string, Command> = {
  'org create': {
    usage: `Usage: platform org create --name <name> [--slug <slug>] [--json]

Creates an organization with the platform's default plan, subscription status and features.
It has no member yet: add an owner with "platform user create --org <slug> --role owner".
`,
    options: { name: { type: 'string' }, slug: { type: 'string' } },
    required: ['name'],
    async run(ctx, v) {
      const input = checkBody<S.CreateOrgInput>(S.CreateOrgBody, { name: v.name, ...(v.slug !== undefined ? { slug: v.slug } : {}) }, {});
      const org = await createOrganization(ctx, input);
      return { data: org, text: `Created organization ${org.name} (id ${org.id}, slug ${org.slug}).\n` };
    },
  },

  'user create': {
    usage: `Usage: platform user create --email <email> --name <name> --org <id|slug> [--role <role>]
                            [--password <password> | --password-stdin] [--json]

Adds the user with this e-mail to the organization, creating the account when it does not exist.
  --role            owner | admin | member | viewer (default member); super_admin in the root organization only
  --password        sets the password of a new account (or of an invited one without a password);
                    same rules as sign-up: ${PASSWORD_RULE}
  --password-stdin  reads the password from the first line of standard input (keeps it out of "ps")
Without a password the account is an invited one: it cannot sign in until a password is set.
`,
    options: { email: { type: 'string' }, name: { type: 'string' }, org: { type: 'string' }, role: { type: 'string' }, password: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    required: ['email', 'name', 'org'],
    async run(ctx, v) {
      if (v.password !== undefined && v['password-stdin']) throw new UsageError('Give either --password or --password-stdin, not both');
      const input = checkBody<S.AddMemberInput>(S.AddMemberBody, { email: v.email, role: v.role ?? 'member', name: v.name }, {});
      const password = v['password-stdin'] ? readPasswordFromStdin() : str(v.password);
      const org = await resolveOrganization(ctx, String(v.org));
      const member = await addMember(ctx, input, { orgId: org.id, password });
      const data = { ...member, organization_id: org.id, organization_slug: org.slug, password_set: password !== undefined };
      return { data, text: `User ${member.email} (id ${member.user_id}) is now ${member.role} of ${org.slug}${password !== undefined ? '' : ' (no password set)'}.\n` };
    },
  },

  'user set-password-token': {
    usage: `Usage: platform user set-password-token --email <email> [--json]

Issues a token that sets the password of this account, valid for 60 minutes and usable once, for you to hand
to its owner (no e-mail is sent, so it works without SMTP_URL). They choose the password with
POST /v1/auth/password-reset/confirm {"token", "password"}; every session of the account then ends.
An earlier unused reset token of the account stops working. Works for invited accounts without a password too.
`,
    options: { email: { type: 'string' } },
    required: ['email'],
    async run(ctx, v) {
      const issued = await issueResetTokenFor(ctx, String(v.email));
      return { data: issued, text: `Password token for ${issued.email} (id ${issued.user_id}), valid until ${issued.expires_at}, usable once.\nHand it over by a safe channel; it is used with ${issued.confirm}:\n\n  ${issued.token}\n\n` };
    },
  },

  'user deactivate': {
    usage: `Usage: platform user deactivate --email <email> [--json]

Deactivates the account: it can no longer sign in, refresh a session, reset its password or use its API keys, and
every live session of it ends, in every organization, on every running server at once. Its memberships, API keys and
data stay; "platform user activate" lets it sign in again (old sessions stay ended).
`,
    options: { email: { type: 'string' } },
    required: ['email'],
    async run(ctx, v) {
      const r = await setUserActive(ctx, String(v.email), false);
      return { data: r, text: r.changed ? `${r.email} (id ${r.user_id}) is deactivated; its sessions have ended.\n` : `${r.email} (id ${r.user_id}) was deactivated already.\n` };
    },
  },

  'user activate': {
    usage: `Usage: platform user activate --email <email> [--json]

Reactivates a deactivated account: it can sign in and use its API keys again.
`,
    options: { email: { type: 'string' } },
    required: ['email'],
    async run(ctx, v) {
      const r = await setUserActive(ctx, String(v.email), true);
      return { data: r, text: r.changed ? `${r.email} (id ${r.user_id}) is active again.\n` : `${r.email} (id ${r.user_id}) was active already.\n` };
    },
  },

  'api-key create': {
    usage: `Usage: platform api-key create --org <id|slug> --user <email> --name <name> --scopes <a,b,...>
                               --expires-in-days <days> [--json]

Creates an API key acting as that member of the organization (its power: the member's role
intersected with the scopes). The key is printed once; only its hash is stored.
  --scopes           comma-separated, e.g. projects:read,documents:write,mcp:* (admin: root super-admins only)
  --expires-in-days  1 to 365
`,
    options: { org: { type: 'string' }, user: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'expires-in-days': { type: 'string' } },
    required: ['org', 'user', 'name', 'scopes', 'expires-in-days'],
    async run(ctx, v) {
      const daysText = String(v['expires-in-days']);
      const days = Number(daysText);
      if (!/^\d+$/.test(daysText) || days < 1 || days > 365) throw new AppError('VALIDATION_ERROR', '--expires-in-days must be a whole number from 1 to 365', { field: 'expires-in-days' });
      const input = checkBody<S.CreateApiKeyInput>(S.CreateApiKeyBody,
        { name: v.name, scopes: list(v.scopes) ?? [], expires_at: new Date(Date.now() + days * 86_400_000).toISOString() }, { expires_at: 'expires-in-days' });
      const org = await resolveOrganization(ctx, String(v.org));
      const user = await resolveUserByEmail(ctx, String(v.user));
      const key = await createApiKey(ctx, input, { orgId: org.id, userId: user.id });
      return { data: { ...key, organization_id: org.id }, text: `API key "${key.name}" (id ${key.id}) for ${user.email} in ${org.slug}, expires ${key.expires_at}.\nShown once; store it now:\n\n  ${key.key}\n\n` };
    },
  },

  'scim-token create': {
    usage: `Usage: platform scim-token create --org <id|slug> --name <name> [--json]

Creates a SCIM 2.0 bearer token for the organization. The token is printed once; only its hash is stored.
`,
    options: { org: { type: 'string' }, name: { type: 'string' } },
    required: ['org', 'name'],
    async run(ctx, v) {
      const input = checkBody<{ name: string }>(S.ScimTokenBody, { name: v.name }, {});
      const org = await resolveOrganization(ctx, String(v.org));
      const token = await createScimToken(ctx, org.id, input.name.trim());
      return { data: { ...token, organization_id: org.id }, text: `SCIM token "${token.name}" (id ${token.id}) for ${org.slug}.\nShown once; store it now:\n\n  ${token.token}\n\n` };
    },
  },

  'entitlements set': {
    usage: `Usage: platform entitlements set --org <id|slug> [--plan-tier <tier>] [--subscription-status <status>]
                                 [--features <a,b,...>] [--json]

Sets what the organization may use; running servers see the change within CREDENTIAL_CACHE_TTL_MS.
  --plan-tier            academic_free | pro | team | business | enterprise
  --subscription-status  none | active | past_due | cancelled
  --features             the complete list (replaces the current one; "" for none): documents, chat, iam,
                         compliance, proof-printout, rdp, containers, mail, calendar, saas-builder, vision, mcp
At least one of them is required.
`,
    options: { org: { type: 'string' }, 'plan-tier': { type: 'string' }, 'subscription-status': { type: 'string' }, features: { type: 'string' } },
    required: ['org'],
    async run(ctx, v) {
      const body: Record<string, unknown> = {};
      if (v['plan-tier'] !== undefined) body.plan_tier = v['plan-tier'];
      if (v['subscription-status'] !== undefined) body.subscription_status = v['subscription-status'];
      if (v.features !== undefined) body.features = list(v.features);
      if (Object.keys(body).length === 0) throw new UsageError('Give at least one of --plan-tier, --subscription-status, --features');
      const input = checkBody<S.EntitlementsInput>(S.EntitlementsBody, body, { plan_tier: 'plan-tier', subscription_status: 'subscription-status' });
      const org = await resolveOrganization(ctx, String(v.org));
      const updated = await setEntitlements(ctx, org.id, input);
      return { data: updated, text: `${updated.slug}: plan ${updated.plan_tier}, subscription ${updated.subscription_status}, features ${updated.features.join(', ') || '(none)'}.\n` };
    },
  },
};

/**
 * With the embedded database, a server already running on DATA_DIR owns the cluster: connect to it rather than
 * starting a second postmaster (whose start-up would stop the running one as a stale leftover).
 */
function runningEmbeddedUrl(config: Config): string | null {
  const pwFile = path.join(config.dataDir, 'pg-password');
  // A stale pid file whose number now belongs to another program (another PostgreSQL too) is not a running server.
  const running = runningPostmaster(path.join(config.dataDir, 'pg'));
  if (!running || !(running.port > 0) || !existsSync(pwFile)) return null;
  const port = running.port;
  const password = readFileSync(pwFile, 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

function noPlatformData(dataDir: string): string {
  return `No platform data in DATA_DIR ${dataDir} (no embedded database there, and DATABASE_URL is not set). `
    + 'Run the command with the DATA_DIR of your server (or its DATABASE_URL), or start the server once with this DATA_DIR to create the platform there.';
}

async function runAdminCommand(name: string, cmd: Command, args: string[], io: Io): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options: { ...cmd.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: false, strict: true }));
  } catch (err) {
    io.stderr(`${(err as Error).message}\n\n${cmd.usage}`);
    return 2;
  }
  if (values.help) { io.stdout(cmd.usage); return 0; }
  const json = values.json === true;
  const missing = cmd.required.filter((k) => values[k] === undefined);
  if (missing.length) {
    io.stderr(`Missing ${missing.map((m) => `--${m}`).join(', ')}\n\n${cmd.usage}`);
    return 2;
  }
  let base: Config;
  // A bad setting (PORT=abc, ...) is refused like a database this configuration cannot use: one line, no stack trace.
  try { base = loadConfig(process.env, { logLevel: 'silent' }); } catch (err) {
    return refusal(io, name, json, { code: 'SERVICE_UNAVAILABLE', message: (err as Error).message });
  }
  // A mistyped or forgotten DATA_DIR must not become a new, empty platform that the command then changes "successfully".
  if (!base.databaseUrl && !hasCluster(base.dataDir)) return refusal(io, name, json, { code: 'SERVICE_UNAVAILABLE', message: noPlatformData(base.dataDir) });
  const config = base.databaseUrl ? base : { ...base, databaseUrl: runningEmbeddedUrl(base) };
  const quiet = { info() {}, warn: (o: unknown, m?: string) => io.stderr(`warning: ${m ?? JSON.stringify(o)}\n`), error: (o: unknown, m?: string) => io.stderr(`error: ${m ?? JSON.stringify(o)}\n`) };
  let running: Awaited<ReturnType<typeof startPlatform>>;
  try { running = await startPlatform(config, quiet); } catch (err) {
    // No database, or one this configuration cannot use: said once, as a refusal, not as a stack trace.
    return refusal(io, name, json, { code: 'SERVICE_UNAVAILABLE', message: (err as Error).message });
  }
  try {
    const { data, text } = await cmd.run(systemContext(running.platform, 'cli'), values);
    io.stdout(json ? JSON.stringify(data) + '\n' : text);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) { io.stderr(`${err.message}\n\n${cmd.usage}`); return 2; }
    if (!(err instanceof AppError)) throw err;
    return refusal(io, name, json, { code: err.code, message: flagWording(err, cmd), ...(err.details ? { details: err.details } : {}) });
  } finally {
    await running.close();
  }
}

/** A refused command: one line on stderr, the error as JSON on stdout with --json; exit code 1. */
function refusal(io: Io, name: string, json: boolean, error: { code: string; message: string; details?: unknown }): number {
  if (json) io.stdout(JSON.stringify({ error }) + '\n');
  io.stderr(`${name}: ${error.code}: ${error.message}\n`);
  return 1;
}

/**
 * A service's message names the body field (`Field "password" must be ...`); on the command line the caller typed a
 * flag, so a field that is one of the command's flags is named as the flag (`--password must be ...`).
 */
function flagWording(err: AppError, cmd: Command): string {
  const field = (err.details as { field?: unknown } | undefined)?.field;
  if (typeof field !== 'string') return err.message;
  const flag = field.replace(/_/g, '-');
  if (!Object.hasOwn(cmd.options, flag)) return err.message;
  return err.message.replace(`Field "${field}"`, `--${flag}`);
}

/** Entry point of the `platform` command (bin/platform.mjs). Returns the exit code and sets process.exitCode. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const code = await dispatch(argv, io);
  if (code !== 0) process.exitCode = code;
  return code;
}

const SERVE_USAGE = 'Usage: platform serve [--json]\n\nStarts the API server (what `npm start` runs). Configuration comes from the environment: PORT, DATA_DIR,\nDATABASE_URL and the other variables of the README. Log lines are JSON; with --json the root API key of a first\nstart is printed as one JSON line too ({"root_api_key": ..., "shown_once": true}).\n';
const MIGRATE_USAGE = 'Usage: platform migrate [--json]\n\nApplies pending migrations to DATABASE_URL or the embedded database under DATA_DIR.\n';

/** The flags of a command without options of its own (`--json`, `--help`); a usage error gives exit code 2. */
function flagsOf(args: string[], usage: string, io: Io): { json?: boolean; help?: boolean } | number {
  try {
    return parseArgs({ args, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: false, strict: true }).values;
  } catch (err) { io.stderr(`${(err as Error).message}\n\n${usage}`); return 2; }
}

async function dispatch(argv: string[], io: Io): Promise<number> {
  const [command, sub] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') { io.stdout(USAGE); return 0; }
  if (command === 'serve') {
    // `serve --help` must print the usage, not start a server (and a mistyped option must not be ignored).
    const values = flagsOf(argv.slice(1), SERVE_USAGE, io);
    if (typeof values === 'number') return values;
    if (values.help) { io.stdout(SERVE_USAGE); return 0; }
    const { serve } = await import('./server.js'); await serve({ json: values.json === true }); return 0;
  }
  if (command === 'migrate') {
    const values = flagsOf(argv.slice(1), MIGRATE_USAGE, io);
    if (typeof values === 'number') return values;
    if (values.help) { io.stdout(MIGRATE_USAGE); return 0; }
    let config: Config;
    try { config = loadConfig(); } catch (err) {
      return refusal(io, 'migrate', values.json === true, { code: 'SERVICE_UNAVAILABLE', message: (err as Error).message });
    }
    const running = config.databaseUrl ? null : runningEmbeddedUrl(config);
    const embedded = config.databaseUrl || running ? null : await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort });
    try {
      const applied = await migrate(config.databaseUrl ?? running ?? embedded!.url);
      io.stdout(values.json ? JSON.stringify({ applied }) + '\n' : applied.length ? `Applied: ${applied.join(', ')}\n` : 'Database is up to date.\n');
    } finally { await embedded?.stop(); }
    return 0;
  }
  const groupCommands = Object.keys(COMMANDS).filter((k) => k.startsWith(`${command} `));
  if (groupCommands.length) {
    const name = `${command} ${sub ?? ''}`;
    const cmd = COMMANDS[name];
    if (cmd) return runAdminCommand(name, cmd, argv.slice(2), io);
    const help = `Usage: ${groupCommands.map((c) => `platform ${c} ...`).join('\n       ')}\n\nRun "platform ${groupCommands[0]} --help" for its options.\n`;
    if (!sub || sub === '--help' || sub === '-h') { io.stdout(help); return sub ? 0 : 2; }
    io.stderr(`Unknown command "${name.trim()}".\n\n${help}`);
    return 2;
  }
  io.stderr(`Unknown command "${command}".\n\n${USAGE}`);
  return 2;
}
