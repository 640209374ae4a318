import { SERVER_VERSION } from '../../core/version.js';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ok } from '../../core/http/envelope.js';
import { planTiers } from '../../core/pricing.js';
import { AppError } from '../../core/errors.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../core/db/unavailable.js';
import publicPlatformRoutes from './public.routes.js';

const startedAt = Date.now();
/** A draining node is not coming back: its check may be asked again soon, and fails until the node is gone. */
const DRAIN_RETRY_AFTER_SECONDS = 1;

/** Public platform endpoints (spec 4.1). */
export default async function platformArea(app: FastifyInstance) {
  app.get('/v1/health', {
    config: { auth: 'public' },
    schema: {
      summary: 'Liveness and database reachability',
      response: {
        200: Envelope(Type.Object({ status: Type.String(), database: Type.String(), uptime_seconds: Type.Integer(), version: Type.String() })),
      },
    },
  }, async () => {
    // 503 in both cases, so a load balancer's check needs nothing but the status; details say which (docs/decisions.md).
    if (app.platform.lifecycle.draining) {
      throw new AppError('SERVICE_UNAVAILABLE', 'The server is draining before it stops; send requests to another node', { status: 'draining' },
        { headers: { 'Retry-After': String(DRAIN_RETRY_AFTER_SECONDS) } });
    }
    if (!(await app.platform.db.ping())) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Database is unreachable', { database: 'unreachable' },
        { headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) } });
    }
    return ok({ status: 'ok', database: 'ok', uptime_seconds: Math.floor((Date.now() - startedAt) / 1000), version: SERVER_VERSION });
  });

  const Tier = Type.Object({
    tier: Type.String(), name: Type.String(), price_cents_monthly: Type.Union([Type.Integer(), Type.Null()]), currency: Type.String(),
    limits: Type.Object({ max_projects: Type.Union([Type.Integer(), Type.Null()]), max_members: Type.Union([Type.Integer(), Type.Null()]), credits_monthly: Type.Union([Type.Integer(), Type.Null()]) }),
    features: Type.Array(Type.String()),
  });
  app.get('/v1/pricing', { config: { auth: 'public', responseHeaders: { 'Cache-Control': 'public, max-age=300' } }, schema: { summary: 'Public plan tiers with their limits and features', response: { 200: Envelope(Type.Object({ currency: Type.String(), tiers: Type.Array(Tier) })) } } },
    async (_req, reply) => { reply.header('Cache-Control', 'public, max-age=300'); return ok({ currency: 'usd', tiers: planTiers() }); });

  await app.register(publicPlatformRoutes);
}
