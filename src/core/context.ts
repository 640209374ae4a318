import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { CredentialResolver } from './auth/credentials.js';
import type { TokenSigner } from './auth/jwt.js';
import type { Principal } from './auth/principal.js';
import type { SecretBox } from './crypto.js';
import type { EventBus } from './events.js';
import type { RateLimitStore } from './rate-limit.js';
import type { JobRunner } from './jobs.js';
import { AppError } from './errors.js';
import type { RedisConnection } from '../adapters/redis/client.js';
import type { Fanout } from './fanout.js';

/** Long-lived runtime shared by every request, job, CLI command and transport. */
export interface Platform {
  config: Config;
  db: Database;
  signer: TokenSigner;
  credentials: CredentialResolver;
  box: SecretBox;
  rateLimitStore: RateLimitStore;
  /** The shared Redis of a deployment of several nodes (REDIS_URL), null on one node: rate limits and tickets use it. */
  redis: RedisConnection | null;
  /** Messages to the other nodes for what sockets hold in memory (collaboration rooms, sheet sockets): Redis or none. */
  fanout: Fanout;
  events: EventBus;
  /** Durable background jobs; areas register handlers at start (platform.jobs.register). */
  jobs: JobRunner;
  /**
   * Set by the server when a SIGTERM starts the drain (SHUTDOWN_DRAIN_MS): /v1/health then answers 503 "draining", so a
   * load balancer stops sending requests here, while the requests that still come are served as usual.
   */
  lifecycle: { draining: boolean };
  log: { info(o: unknown, m?: string): void; warn(o: unknown, m?: string): void; error(o: unknown, m?: string): void };
}

/** What a service function receives: no HTTP types, so REST, MCP and the CLI call the same code. */
export interface ServiceContext {
  platform: Platform;
  principal: Principal | null;
  requestId: string;
  ip: string | null;
  userAgent?: string | null;
}

/** The caller, for services that need one (routes declare auth; this guards direct calls from MCP or CLI). */
export function actor(ctx: ServiceContext): Principal {
  if (!ctx.principal) throw new AppError('AUTH_REQUIRED', 'A credential is required');
  return ctx.principal;
}

export function requirePermission(ctx: ServiceContext, permission: string): Principal {
  const p = actor(ctx);
  if (!p.permissions.has(permission)) throw new AppError('PERMISSION_DENIED', `This action needs the "${permission}" permission`, { permission });
  return p;
}
