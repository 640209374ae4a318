import Fastify from 'fastify';
import cors from '@fastify/cors';
import pino from 'pino';
import { uuidv7 } from '../dist/core/ids.js';
const v = new Set((process.env.VARIANT ?? '').split(',').filter(Boolean));
const perms = Array.from({ length: 34 }, (_, i) => `permission.name${i}`);
const big = { success: true, data: { user: { id: uuidv7(), email: 'x@example.com', name: 'X' }, organization: { id: uuidv7(), name: 'X', slug: 'x', plan_tier: 'pro', subscription_status: 'active', features: ['documents','chat','iam','compliance','proof-printout','rdp','containers','mail','calendar','saas-builder','vision','mcp'], is_root: false }, role: 'owner', permissions: perms, credential: { kind: 'api_key', legacy: false, api_key_id: uuidv7(), scopes: ['projects:read'] } } };
const small = { hello: 'world' };
const app = Fastify({ ...(v.has('logger') ? { loggerInstance: pino({ level: 'warn' }) } : { logger: false }), ...(v.has('reqid') ? { genReqId: () => uuidv7(), requestIdHeader: false } : {}) });
if (v.has('cors')) await app.register(cors, { origin: (o, cb) => cb(null, false), credentials: false, exposedHeaders: ['X-RateLimit-Limit'], maxAge: 600 });
if (v.has('hook')) {
  const m = new Map();
  app.addHook('onRequest', async (req, reply) => {
    req.ctx = { principal: null, requestId: req.id, ip: req.ip, userAgent: req.headers['user-agent'] ?? null };
    reply.header('X-Request-Id', req.id);
    const needs = req.routeOptions.config;
    const k = `${req.method} ${req.routeOptions.url}|k:abc`;
    let w = m.get(k); if (!w) { w = { count: 0, resetAtMs: Date.now() + 60000 }; m.set(k, w); } w.count++;
    const r = await Promise.resolve({ count: w.count, resetAtMs: w.resetAtMs });
    reply.header('X-RateLimit-Limit', 1e9).header('X-RateLimit-Remaining', 1e9 - r.count).header('X-RateLimit-Reset', Math.ceil(r.resetAtMs / 1000));
    void needs;
  });
}
const S = { type: 'string' }, A = { type: 'array', items: S };
const bigSchema = { type: 'object', properties: { success: { type: 'boolean' }, data: { type: 'object', properties: { user: { type: 'object', properties: { id: S, email: S, name: S } }, organization: { type: 'object', properties: { id: S, name: S, slug: S, plan_tier: S, subscription_status: S, features: A, is_root: { type: 'boolean' } } }, role: S, permissions: A, credential: { type: 'object', properties: { kind: S, legacy: { type: 'boolean' }, api_key_id: S, scopes: A } } } } } };
const schema = v.has('schema') ? { response: { 200: v.has('big') ? bigSchema : { type: 'object', properties: { hello: S } } } } : {};
app.get('/', { schema }, async () => (v.has('big') ? big : small));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('listening');
