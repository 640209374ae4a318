import { isIP } from 'node:net';
import path from 'node:path';
import { PLAN_TIERS, readPricingFile, type PlanTier } from './pricing.js';

/** Feature flags an organization can hold (design: accounts-and-tenancy). */
export const ALL_FEATURES = [
  'documents', 'chat', 'iam', 'compliance', 'proof-printout', 'rdp', 'containers',
  'mail', 'calendar', 'saas-builder', 'vision', 'mcp',
] as const;
export type Feature = (typeof ALL_FEATURES)[number];

export const SUBSCRIPTION_STATUSES = ['none', 'active', 'past_due', 'cancelled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** REDIS_URL: rate-limit counters and collaboration tickets shared by every node (redis:// or rediss://). */
  redisUrl: string | null;
  /** Optional login of the platform_app role on DATABASE_URL's server (closes RESET ROLE to the owner). */
  databaseAppUrl: string | null;
  /** Port of the embedded PostgreSQL server (0 = pick a free one). */
  embeddedPgPort: number;
  nodeEnv: string;
  logLevel: string;
  allowSignup: boolean;
  rootAdminEmail: string;
  rootApiKey: string | null;
  defaultFeatures: string[];
  defaultSubscriptionStatus: SubscriptionStatus;
  defaultPlanTier: PlanTier;
  corsOrigins: string[];
  bodyLimitBytes: number;
  jsonMaxDepth: number;
  rateLimit: { max: number; authMax: number; windowMs: number };
  credentialCacheTtlMs: number;
  encryptionKey: string | null;
  publicBaseUrl: string | null;
  dbPoolSize: number;
  /**
   * DB_STATEMENT_TIMEOUT_MS: the longest one statement of a request connection may run (PostgreSQL's
   * statement_timeout on the request pool; 0 = no limit). The owner pool (migrations, sign-in lookups, retention
   * purges) is not bounded.
   */
  dbStatementTimeoutMs: number;
  /** How often this node looks for due jobs; 0 disables the job runner on this node. */
  jobPollMs: number;
  /** SMTP relay for outgoing mail (smtp://user:pass@host:port or smtps://...); null = e-mail is not configured. */
  smtpUrl: string | null;
  /** From address of platform mail (password resets, invitations, alerts); required with smtpUrl. */
  smtpFrom: string | null;
  /**
   * Whether URLs tenants give (Slack webhooks of alert rules) may point at loopback, private or link-local hosts.
   * Off unless NODE_ENV is test: a tenant must not make the server call internal hosts (SSRF).
   */
  webhookAllowPrivateHosts: boolean;
  /**
   * Most bytes of uploaded document files one organization may store (FILE_STORAGE_QUOTA_BYTES, default 10 GiB): the
   * plan tiers publish no storage limit, and without one a single member could fill the disk the database shares.
   */
  fileStorageQuotaBytes: number;
  /** How long a graceful shutdown waits for requests in progress before cutting them (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number;
  /**
   * SHUTDOWN_DRAIN_MS: after a SIGTERM, how long this node keeps serving while /v1/health answers 503 "draining", so a
   * load balancer takes it out of rotation before its listener closes (0: close at once, as a single node wants).
   */
  shutdownDrainMs: number;
  /**
   * TRUST_PROXY: whose X-Forwarded-For is believed for the client's address: nobody (false), the N proxies in front
   * (a number; `true` is 1), or the proxies at these addresses (a comma-separated list of addresses and CIDRs).
   */
  trustProxy: false | number | string;
  /**
   * COLLAB_MAX_ROOMS_PER_ORG: documents of one organization open in collaboration rooms on this node at once (each
   * room holds its document's whole state in memory).
   */
  collabMaxRoomsPerOrg: number;
  /**
   * COLLAB_ROOMS_MAX_MB, in bytes: no new collaboration room opens on this node while its open rooms' states (as
   * loaded) add up to this much; sign-up makes organizations cheap, so the per-organization bound alone does not
   * bound the node.
   */
  collabRoomsMaxBytes: number;
  /**
   * WS_HEARTBEAT_MS: every WebSocket is pinged this often, and one that answered nothing since the previous ping is
   * dropped (a peer gone without closing its connection otherwise holds its room and sockets for ever).
   */
  wsHeartbeatMs: number;
  /**
   * WS_MAX_SOCKETS_PER_USER: WebSockets (collaboration, decks and sheets together) one user, or one API key, may have
   * open on this node at once; each costs memory whatever document it is on.
   */
  wsMaxSocketsPerUser: number;
}

type Env = NodeJS.ProcessEnv;

/**
 * A whole-number variable: unset or empty gives the default; anything else outside min..max stops the start with a
 * message naming the variable and what it accepts (a bare "Expected a number" left the operator guessing which).
 */
function int(env: Env, name: string, dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    const accepted = max === Number.MAX_SAFE_INTEGER ? `a whole number of ${min} or more` : `a whole number from ${min} to ${max}`;
    throw new Error(`${name} must be ${accepted}, got "${v}"`);
  }
  return n;
}

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/** A yes/no variable: only the documented spellings; any other (ALLOW_SIGNUP=maybe) stops the start, not a silent false. */
function bool(env: Env, name: string, dflt: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const word = v.trim().toLowerCase();
  if (TRUE.includes(word)) return true;
  if (FALSE.includes(word)) return false;
  throw new Error(`${name} must be true or false (or 1/0, yes/no, on/off), got "${v}"`);
}

/**
 * TRUST_PROXY. Believing every hop (Fastify's `true`) would let a client choose its own address: a load balancer
 * appends the address it saw to the X-Forwarded-For the client sent, so only the entries the trusted proxies added
 * are the client's. So `true` is one proxy in front, the usual load balancer.
 */
function trustedProxies(env: Env): false | number | string {
  const v = env.TRUST_PROXY;
  if (v === undefined || v.trim() === '') return false;
  const word = v.trim().toLowerCase();
  if (FALSE.includes(word)) return false;
  if (TRUE.includes(word)) return 1;
  if (/^\d+$/.test(word) && Number(word) >= 1 && Number(word) <= 10) return Number(word);
  const items = word.split(',').map((x) => x.trim()).filter(Boolean);
  const isProxy = (item: string) => {
    const [addr, bits, extra] = item.split('/');
    const family = isIP(addr);
    if (!family || extra !== undefined) return false;
    return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  };
  if (items.length > 0 && items.every(isProxy)) return items.join(',');
  throw new Error(`TRUST_PROXY must be false, true (one proxy in front), the number of proxies in front (1-10) or their addresses (e.g. 10.0.0.0/8,127.0.0.1), got "${v}"`);
}

function list(v: string | undefined): string[] | null {
  if (v === undefined) return null;
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** LOG_LEVEL: a pino level; another (a typo) stops the start with the list, rather than failing inside the logger. */
function logLevel(v: string | undefined, dflt: string): string {
  if (v === undefined || v === '') return dflt;
  if (!LOG_LEVELS.includes(v)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${v}"`);
  return v;
}

/**
 * A URL setting, checked at start: unset is null; one that does not parse, has another scheme or fails `ok` stops the
 * start with `${name} must ${what}` (a typo must not become broken links, or a node that silently counts alone).
 */
function urlSetting(name: string, v: string | undefined, schemes: string[], what: string, ok: (u: URL) => boolean = () => true): string | null {
  if (!v) return null;
  let u: URL | undefined;
  try { u = new URL(v); } catch { /* refused below */ }
  if (!u || !schemes.includes(u.protocol) || !ok(u)) throw new Error(`${name} must ${what}`);
  return v;
}

/** ROOT_ADMIN_EMAIL: the root super-admin's sign-in, an e-mail address (`admin@localhost` by default). */
function rootAdminEmail(v: string | undefined): string {
  if (v === undefined || v === '') return 'admin@localhost';
  if (!/^[^\s@]+@[^\s@]+$/.test(v) || v.length > 254) throw new Error(`ROOT_ADMIN_EMAIL must be an e-mail address, got "${v}"`);
  return v.toLowerCase();
}

/** HOST: an address (IPv4 or IPv6) or a host name (not all digits: `999.1.1.1` is no address and no name). */
function listenHost(v: string | undefined): string {
  if (v === undefined || v === '') return '0.0.0.0';
  if (isIP(v) || (v.length <= 253 && /^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(v))) return v;
  throw new Error(`HOST must be an IP address or a host name to listen on, such as 0.0.0.0, ::, 127.0.0.1 or localhost, got "${v}"`);
}

/** SHUTDOWN_DRAIN_MS's ceiling (10 minutes): load balancers notice a failing check within seconds; more is a typo. */
const MAX_DRAIN_MS = 600_000;

/**
 * SMTP_FROM: the From of platform mail, an address or `Name <address>` (nodemailer takes both); an address without
 * its domain or a stray comma would make every delivery fail at the relay.
 */
function smtpFrom(v: string | undefined): string | null {
  if (!v) return null;
  if (/^(?:[^\s@<>,]+@[^\s@<>,]+|[^<>@]*<[^\s@<>,]+@[^\s@<>,]+>)$/.test(v.trim())) return v;
  throw new Error(`SMTP_FROM must be an e-mail address, such as noreply@example.com or Platform <noreply@example.com>, got "${v}"`);
}

/** A URL-like value as a refusal may repeat it: a user name and password in it are not. */
const withoutUserinfo = (v: string) => v.replace(/^([^/]*\/\/)[^/@]*@/, '$1***@');

/**
 * CORS_ORIGINS: `*` or origins exactly as browsers send them in Origin (the allowlist is compared as text):
 * `https://App.example.com`, `https://app.example.com/` or `https://app.example.com:443` would never match, silently.
 */
function corsOrigins(v: string | undefined): string[] {
  const entries = list(v) ?? [];
  for (const e of entries) {
    let u: URL | undefined;
    try { u = new URL(e); } catch { /* refused below */ }
    if (e === '*' || (u && ['http:', 'https:'].includes(u.protocol) && u.origin === e)) continue;
    throw new Error(`CORS_ORIGINS must be * or origins separated by commas, each scheme://host[:port] in lower case without a path or trailing slash, such as https://app.example.com,http://localhost:3000, got "${withoutUserinfo(e)}"`);
  }
  return entries;
}

/**
 * A group of settings that only work together: some set without the rest would silently mean the fallback (local
 * disk for S3, no e-mail, the local moderation rules), so the start stops naming what is missing. `optional` members
 * are no use alone either, so they count as a start of the group.
 */
function together(env: Env, what: string, required: string[], optional: string[] = []): void {
  const given = [...required, ...optional].filter((n) => env[n]);
  const missing = required.filter((n) => !env[n]);
  if (given.length === 0 || missing.length === 0) return;
  const and = (names: string[]) => names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0];
  throw new Error(`${and(given)} ${given.length > 1 ? 'are' : 'is'} set without ${and(missing)}: ${what} needs ${and(required)} (or none of them)`);
}

const HTTP_SERVICE_URL = 'be an http or https URL without credentials, query or fragment';
const plainUrl = (u: URL) => !u.username && !u.password && !u.search && !u.hash;

/**
 * The outside services the areas make from the environment when they load (S3 in the documents area, the hosted
 * moderation API): checked now, with the rest of the configuration, so a typo stops the start.
 */
function checkServiceSettings(env: Env): void {
  together(env, 'e-mail', ['SMTP_URL', 'SMTP_FROM']);
  together(env, 'the S3 file store', ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'], ['S3_REGION']);
  urlSetting('S3_ENDPOINT', env.S3_ENDPOINT, ['http:', 'https:'], `${HTTP_SERVICE_URL}, such as https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000 (the bucket goes in S3_BUCKET)`, plainUrl);
  // Letters, digits, dots, hyphens and underscores (AWS's older names included); what is caught is a URL or a path.
  if (env.S3_BUCKET && !/^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/.test(env.S3_BUCKET)) {
    throw new Error(`S3_BUCKET must be a bucket name of 3 to 255 letters, digits, dots, hyphens or underscores, such as platform-files, got "${env.S3_BUCKET}"`);
  }
  // The region is part of every request's signature scope: a slash or a space breaks each signature.
  if (env.S3_REGION && !/^[A-Za-z0-9_-]{1,64}$/.test(env.S3_REGION)) throw new Error(`S3_REGION must be a region name such as us-east-1 (or auto), got "${env.S3_REGION}"`);
  together(env, 'the hosted moderation API', ['MODERATION_API_URL', 'MODERATION_API_KEY'], ['MODERATION_MODEL']);
  // The API is called at {base}/v1/moderations: a base ending in /v1 (the OpenAI SDKs' form) would call /v1/v1/....
  urlSetting('MODERATION_API_URL', env.MODERATION_API_URL, ['http:', 'https:'], `${HTTP_SERVICE_URL}, the base the API's /v1/moderations is under, such as https://api.openai.com`,
    (u) => plainUrl(u) && !/\/(v1|moderations)\/*$/.test(u.pathname));
}

const POSTGRES_SCHEMES = ['postgres:', 'postgresql:'];
const POSTGRES_URL = 'be a URL such as postgres://user:password@host:5432/database';

/** Reads the whole configuration from the environment once; everything else takes a Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const sub = (env.DEFAULT_SUBSCRIPTION_STATUS || (nodeEnv === 'production' ? 'none' : 'active')) as SubscriptionStatus;
  if (!SUBSCRIPTION_STATUSES.includes(sub)) throw new Error(`DEFAULT_SUBSCRIPTION_STATUS must be one of ${SUBSCRIPTION_STATUSES.join(', ')}, got "${sub}"`);
  // Checked here like the other defaults: an unknown tier would be stored on every new organization (spec 2.9 enum).
  if (env.PRICING_FILE) readPricingFile(env.PRICING_FILE); // checked now; pricing.ts reads it when first asked
  checkServiceSettings(env);
  const tier = (env.DEFAULT_PLAN_TIER || 'pro') as PlanTier;
  if (!PLAN_TIERS.includes(tier)) throw new Error(`DEFAULT_PLAN_TIER must be one of ${PLAN_TIERS.join(', ')}, got "${tier}"`);
  const cfg: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: listenHost(env.HOST),
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    databaseUrl: urlSetting('DATABASE_URL', env.DATABASE_URL, POSTGRES_SCHEMES, POSTGRES_URL),
    redisUrl: urlSetting('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:'], 'start with redis:// or rediss://, such as redis://host:6379 or rediss://user:password@host:6380/0'),
    databaseAppUrl: urlSetting('DATABASE_APP_URL', env.DATABASE_APP_URL, POSTGRES_SCHEMES, POSTGRES_URL),
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 0, 0, 65535),
    nodeEnv,
    logLevel: logLevel(env.LOG_LEVEL, nodeEnv === 'test' ? 'silent' : 'info'),
    allowSignup: bool(env, 'ALLOW_SIGNUP', true),
    rootAdminEmail: rootAdminEmail(env.ROOT_ADMIN_EMAIL),
    rootApiKey: env.ROOT_API_KEY || null,
    defaultFeatures: list(env.DEFAULT_FEATURES) ?? [...ALL_FEATURES],
    defaultSubscriptionStatus: sub,
    defaultPlanTier: tier,
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024),
    fileStorageQuotaBytes: int(env, 'FILE_STORAGE_QUOTA_BYTES', 10 * 1024 ** 3, 1),
    jsonMaxDepth: int(env, 'JSON_MAX_DEPTH', 32),
    rateLimit: {
      max: int(env, 'RATE_LIMIT_MAX', 3000),
      authMax: int(env, 'RATE_LIMIT_AUTH_MAX', 600),
      windowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1),
    },
    credentialCacheTtlMs: int(env, 'CREDENTIAL_CACHE_TTL_MS', 5000),
    encryptionKey: env.ENCRYPTION_KEY || null,
    publicBaseUrl: urlSetting('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL, ['http:', 'https:'],
      `be an http or https URL without query, fragment or credentials, such as https://api.example.com, got "${withoutUserinfo(env.PUBLIC_BASE_URL ?? '')}"`,
      plainUrl),
    dbPoolSize: int(env, 'DB_POOL_SIZE', 20, 1), // a pool of 0 would leave every request waiting for a connection
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 30_000),
    jobPollMs: int(env, 'JOB_POLL_MS', nodeEnv === 'test' ? 200 : 1000),
    smtpUrl: urlSetting('SMTP_URL', env.SMTP_URL, ['smtp:', 'smtps:'], 'be an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587', (u) => !!u.hostname && !u.hash),
    smtpFrom: smtpFrom(env.SMTP_FROM),
    webhookAllowPrivateHosts: bool(env, 'WEBHOOK_ALLOW_PRIVATE_HOSTS', nodeEnv === 'test'),
    trustProxy: trustedProxies(env),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 25_000),
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 0, 0, MAX_DRAIN_MS),
    collabMaxRoomsPerOrg: int(env, 'COLLAB_MAX_ROOMS_PER_ORG', 50, 1),
    collabRoomsMaxBytes: int(env, 'COLLAB_ROOMS_MAX_MB', 1024, 1) * 1024 * 1024,
    wsHeartbeatMs: int(env, 'WS_HEARTBEAT_MS', 30_000, 1),
    wsMaxSocketsPerUser: int(env, 'WS_MAX_SOCKETS_PER_USER', 100, 1),
  };
  const unknownFeatures = cfg.defaultFeatures.filter((f) => !(ALL_FEATURES as readonly string[]).includes(f));
  if (unknownFeatures.length) throw new Error(`DEFAULT_FEATURES has unknown features: ${unknownFeatures.join(', ')} (known: ${ALL_FEATURES.join(', ')})`);
  return { ...cfg, ...overrides };
}
