// The bench's scenario table. bench/run.mjs measures each entry, in this order, once per database.
//
// Adding a scenario (see also bench/README.md): append an object to `scenarios`:
//
//   {
//     name: 'GET /v1/projects (API key)',   // unique; the row label and the key in bench/results/latest.json
//     target: 'platform',                    // 'platform' (default) | 'baseline' (hello world) | 'bare' (bare-server.mjs)
//     method: 'GET',                         // default GET
//     path: '/v1/projects?limit=20',         // a string, or (ctx, data) => string
//     headers: (ctx, data) => ({ authorization: `Bearer ${data.key}` }),   // object or function, optional
//     body: (ctx, data) => ({ ... }),        // object (sent as JSON) or function, optional
//     requests: [...],                       // optional: autocannon `requests` (sequences, per-request setupRequest)
//     setup: async (ctx) => ({ key: ... }),  // optional: seeds data once per database run; its value is `data` above
//     compareTo: 'bare',                     // 'baseline' (default): ratio to hello world; 'bare': also to the bare query
//     goal: { minRatio: 0.5, maxP99Ms: 25 }, // optional: PASS/FAIL line (minRatio against the hello-world baseline)
//     connections: 50, duration: 10,         // optional per-scenario overrides of BENCH_CONNECTIONS / BENCH_DURATION
//   }
//
// What `ctx` offers a setup (built in bench/run.mjs, one per database run):
//   ctx.api              JSON client of the platform: ctx.api.get(path, {token}), .post(path, body, {token, expect}), ...
//   ctx.rootKey          root API key (super-admin of the root organization, every scope)
//   ctx.tenant           a registered user and organization: { userId, orgId, email, accessToken, refreshToken, apiKey }
//                        (apiKey: an API key of that user created with POST /v1/api-keys)
//   ctx.newTenant(label) registers another user + organization; returns the same shape without apiKey
//   ctx.createApiKey(tenant, scopes)   a new API key of tenant's user (POST /v1/api-keys)
//   ctx.freshToken(tenant)             the tenant's access token, refreshed if older than 10 minutes (tokens last 15)
//   ctx.sql(text, params)  runs SQL on the bench database as its owner (no RLS): bulk seeding is much faster
//                          in SQL (INSERT ... SELECT generate_series) than through the API
//   ctx.database         { kind: 'embedded' | 'external', url }
//   ctx.state            an object shared by the setups of one database run (seed once, use in several scenarios)
//   ctx.log(msg)         progress line on stderr
//
// Seeded data stays for the rest of the run (later scenarios see it); each database run starts empty.

const bearer = (token) => ({ authorization: `Bearer ${token}` });

/** Authenticated GET /v1/me: the request path without a database query (the credential cache answers). */
const ME_GOAL = { minRatio: 0.5, maxP99Ms: 25 };

export const scenarios = [
  {
    name: 'hello-world baseline',
    target: 'baseline',
    path: '/',
  },
  {
    name: 'bare query baseline',
    target: 'bare',
    path: (ctx) => `/q/org/${ctx.tenant.orgId}`,
  },
  {
    name: 'GET /v1/health',
    path: '/v1/health',
    compareTo: 'bare', // one round trip (SELECT 1 on the owner pool)
  },
  {
    // Public, no database: Fastify + the core hooks (request id, CORS, rate limit, guard) + envelope and
    // response schema, without authentication. Between hello world and /v1/me in what it costs.
    name: 'GET /v1/pricing (public)',
    path: '/v1/pricing',
  },
  {
    name: 'GET /v1/me (API key)',
    path: '/v1/me',
    headers: (ctx) => bearer(ctx.tenant.apiKey),
    goal: ME_GOAL,
  },
  {
    name: 'GET /v1/me (JWT)',
    path: '/v1/me',
    setup: async (ctx) => ({ token: await ctx.freshToken(ctx.tenant) }),
    headers: (_ctx, data) => bearer(data.token),
    goal: ME_GOAL,
  },
];
