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
//                                            // baseline; or the name of a target:'bare' scenario (its own bare counterpart,
//                                            // which then runs, just before it, whenever this scenario is selected)
//     goal: { minRatio: 0.5, maxP99Ms: 25 }, // optional: PASS/FAIL line (minRatio against the hello-world baseline,
//                                            // minBareRatio against the compareTo bare route, maxP99Ms)
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

// ---------------------------------------------------------------- projects and tasks (issue 3)
//
// Seed (once per database run, shared by the scenarios below), in SQL as the owner (bulk; an API call per row would
// take minutes), writing the columns the services write:
//   - 100 organizations: the bench tenant's (registered through the API) and 99 more (inserted in SQL; the
//     organizations trigger gives each its default task statuses, as registration does).
//   - "An organization with 10,000 projects among 100 organizations": the listed organization holds 10,000 active
//     projects; each of the other 99 holds 100 (9,900), so the projects table has 19,900 rows of 100 tenants and the
//     listing must find its organization's rows by index, not by being the only tenant.
//   - 100,000 tasks in the listed organization: 10,000 in one project (the "large project" scenario) and 1,000 in
//     each of 90 more (the default tasks scenario lists one of those). Statuses are the organization's own
//     task_statuses rows (cycled), priorities cycled, every 10th task assigned to the tenant's user, every 7th with a
//     due date; created_by the user. Each project has its owner row in project_members, as POST /v1/projects makes.
//     (No task_activity rows: the list routes do not read them.)
//   - VACUUM ANALYZE afterwards, as autovacuum would eventually.
// POST /v1/projects/{id}/tasks writes into a project of the same organization that was seeded without tasks.

const PROJECT_GOAL = { minBareRatio: 0.8, maxP99Ms: 50 };
const CREATE_GOAL = { minBareRatio: 0.7, maxP99Ms: 50 };

async function seedProjects(ctx) {
  if (ctx.state.projects) return ctx.state.projects;
  const t0 = Date.now();
  const { orgId, userId } = ctx.tenant;
  const others = await ctx.sql(`INSERT INTO organizations (id, name, slug)
    SELECT app_uuidv7(), 'Bench org ' || g, 'bench-org-' || g || '-' || substr(md5(random()::text), 1, 8) FROM generate_series(1, 99) g RETURNING id`);
  await ctx.sql(`INSERT INTO projects (org_id, id, name, slug, visibility, created_by_user_id)
    SELECT o.id, app_uuidv7(), 'Project ' || g, 'project-' || g, 'private', NULL FROM unnest($1::uuid[]) AS o(id), generate_series(1, 100) g`,
  [others.map((o) => o.id)]);
  await ctx.sql(`INSERT INTO projects (org_id, id, name, slug, description, visibility, created_by_user_id)
    SELECT $1, app_uuidv7(), 'Project ' || g, 'project-' || g, CASE WHEN g % 3 = 0 THEN 'Description of project ' || g END, 'private', $2
    FROM generate_series(1, 10000) g`, [orgId, userId]);
  await ctx.sql(`INSERT INTO project_members (org_id, project_id, user_id, role) SELECT org_id, id, created_by_user_id, 'owner' FROM projects
    WHERE org_id = $1 AND created_by_user_id = $2`, [orgId, userId]);
  // The 92 newest projects (the first page of the listing holds 50 of them): #1 gets 10,000 tasks, #2-#91 1,000 each, #92 none.
  const picked = (await ctx.sql(`SELECT id FROM projects WHERE org_id = $1 ORDER BY id DESC LIMIT 92`, [orgId])).map((r) => r.id);
  await ctx.sql(`INSERT INTO tasks (org_id, id, project_id, title, description, status_id, priority, assigned_to, due_date, created_by)
    SELECT $1, app_uuidv7(), p.id, 'Task ' || g, CASE WHEN g % 4 = 0 THEN 'Details of task ' || g END,
      st.ids[1 + g % array_length(st.ids, 1)], (ARRAY['critical', 'high', 'medium', 'low'])[1 + g % 4],
      CASE WHEN g % 10 = 0 THEN $2::uuid END, CASE WHEN g % 7 = 0 THEN now() + g * interval '1 hour' END, $2
    FROM (SELECT array_agg(id ORDER BY sort_order) AS ids FROM task_statuses WHERE org_id = $1 AND project_id IS NULL) st,
      unnest($3::uuid[]) WITH ORDINALITY AS p(id, n), generate_series(1, CASE WHEN p.n = 1 THEN 10000 ELSE 1000 END) g`,
  [orgId, userId, picked.slice(0, 91)]);
  // The steady state of a live database (autovacuum would get there on its own, at a time of its choosing):
  // statistics for the planner and a visibility map, so counts can be answered from an index alone.
  for (const table of ['organizations', 'projects', 'project_members', 'task_statuses', 'tasks']) await ctx.sql(`VACUUM ANALYZE ${table}`);
  const [{ id: statusId }] = await ctx.sql(`SELECT id FROM task_statuses WHERE org_id = $1 AND project_id IS NULL AND key = 'todo'`, [orgId]);
  const [{ n }] = await ctx.sql(`SELECT count(*)::int AS n FROM tasks WHERE org_id = $1`, [orgId]);
  ctx.log(`seeded 100 organizations, 19,900 projects, ${n} tasks in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  ctx.state.projects = {
    orgId, userId, statusId,
    largeProjectId: picked[0], projectId: picked[1], emptyProjectId: picked[91],
    readKey: await ctx.createApiKey(ctx.tenant, ['projects:read']),
    writeKey: await ctx.createApiKey(ctx.tenant, ['projects:write']),
  };
  return ctx.state.projects;
}

scenarios.push(
  {
    name: 'bare: projects list',
    target: 'bare',
    setup: seedProjects,
    path: (_ctx, s) => `/q/projects/${s.orgId}`,
  },
  {
    name: 'GET /v1/projects (API key, 10,000 projects)',
    path: '/v1/projects',
    setup: seedProjects,
    headers: (_ctx, s) => bearer(s.readKey),
    compareTo: 'bare: projects list',
    goal: PROJECT_GOAL,
  },
  {
    name: 'bare: tasks list',
    target: 'bare',
    setup: seedProjects,
    path: (_ctx, s) => `/q/tasks/${s.orgId}/${s.projectId}`,
  },
  {
    name: 'GET /v1/projects/{id}/tasks (API key, 1,000 of 100,000)',
    path: (_ctx, s) => `/v1/projects/${s.projectId}/tasks`,
    setup: seedProjects,
    headers: (_ctx, s) => bearer(s.readKey),
    compareTo: 'bare: tasks list',
    goal: PROJECT_GOAL,
  },
  {
    name: 'bare: tasks list, large project',
    target: 'bare',
    setup: seedProjects,
    path: (_ctx, s) => `/q/tasks/${s.orgId}/${s.largeProjectId}`,
  },
  {
    // The same route on the project holding 10,000 tasks: the page's total (count(*) OVER ()) reads all of them.
    name: 'GET /v1/projects/{id}/tasks (API key, large project: 10,000 tasks)',
    path: (_ctx, s) => `/v1/projects/${s.largeProjectId}/tasks`,
    setup: seedProjects,
    headers: (_ctx, s) => bearer(s.readKey),
    compareTo: 'bare: tasks list, large project',
    goal: PROJECT_GOAL,
  },
  {
    name: 'bare: task insert',
    target: 'bare',
    method: 'POST',
    setup: seedProjects,
    path: (_ctx, s) => `/q/task/${s.orgId}/${s.emptyProjectId}/${s.statusId}/${s.userId}`,
    body: { title: 'Benchmark task' },
  },
  {
    name: 'POST /v1/projects/{id}/tasks (API key)',
    method: 'POST',
    path: (_ctx, s) => `/v1/projects/${s.emptyProjectId}/tasks`,
    setup: seedProjects,
    headers: (_ctx, s) => bearer(s.writeKey),
    body: { title: 'Benchmark task' },
    compareTo: 'bare: task insert',
    goal: CREATE_GOAL,
  },
);

// ---------------------------------------------------------------- documents: search and offline sync (issue 4)
//
// Seed (once per database run): 100,000 documents in the bench tenant's organization, inserted in SQL already
// indexed, with the search vector built exactly as the `documents.index` job builds it
// (src/areas/documents/documents.repo.ts indexDocument: title weight A, content weight B, in the document's
// language, english by default), is_indexed true and indexed_at set. Text: a vocabulary of 5,000 made-up words
// (three syllables each), titles of 4 and contents of 60 words drawn with a skew (index = 5000 * random()^2), so a
// few words are in most documents and most words in a few hundred to a few thousand: a mix of broad and narrow
// searches, like real text. The search scenario rotates over 100 words drawn uniformly from the vocabulary (after the
// first pass, answers come from the search cache: src/areas/documents/search-cache.ts); the next scenario searches each
// word once more in another order, which the cache cannot answer.
// The documents table's sync trigger fills sync_changes as the API would, so the same rows serve the sync scenario.

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'shi', 'vo', 'ber', 'dan', 'el', 'fin', 'gor', 'hal', 'ost', 'jun', 'kel', 'mar', 'nor', 'pel'];
const VOCABULARY = [];
for (const a of SYLLABLES) for (const b of SYLLABLES) for (const c of SYLLABLES) if (VOCABULARY.length < 5000) VOCABULARY.push(a + b + c);
const SEARCH_TERMS = Array.from({ length: 100 }, (_, i) => VOCABULARY[(i * 2654435761) % VOCABULARY.length]);
const DOCUMENT_COUNT = 100_000;

async function seedDocuments(ctx) {
  if (ctx.state.documents) return ctx.state.documents;
  const t0 = Date.now();
  const { orgId, userId } = ctx.tenant;
  for (let done = 0; done < DOCUMENT_COUNT; done += 20_000) {
    await ctx.sql(`INSERT INTO documents (org_id, id, title, content, content_type, language, search, is_indexed, indexed_at, created_by)
      SELECT $1, app_uuidv7(), d.title, d.content, 'markdown', 'english',
        setweight(to_tsvector('english'::regconfig, d.title), 'A') || setweight(to_tsvector('english'::regconfig, d.content), 'B'), true, now(), $2
      FROM (SELECT g,
              (SELECT string_agg(($3::text[])[1 + floor(5000 * random() ^ 2)::int], ' ') FROM generate_series(1, 4 + 0 * g)) AS title,
              (SELECT string_agg(($3::text[])[1 + floor(5000 * random() ^ 2)::int], ' ') FROM generate_series(1, 60 + 0 * g)) AS content
            FROM generate_series(1, 20000) g) d`, [orgId, userId, VOCABULARY]);
  }
  await ctx.sql('VACUUM ANALYZE documents');
  await ctx.sql('VACUUM ANALYZE sync_changes');
  ctx.log(`seeded ${DOCUMENT_COUNT} indexed documents in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  ctx.state.documents = { readKey: await ctx.createApiKey(ctx.tenant, ['documents:read']) };
  return ctx.state.documents;
}

/** Each of the 100 words searched once with `sort_by`, `concurrency` at a time: latencies of searches the cache cannot answer. */
async function firstSearches(baseUrl, key, sortBy, concurrency) {
  const latencies = [];
  let non2xx = 0;
  const queue = SEARCH_TERMS.map((term) => `/v1/documents?search=${term}&sort_by=${sortBy}`);
  const worker = async () => {
    for (let path = queue.shift(); path; path = queue.shift()) {
      const t = performance.now();
      const res = await fetch(baseUrl + path, { headers: bearer(key) });
      await res.arrayBuffer();
      latencies.push(performance.now() - t);
      if (res.status !== 200) non2xx++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  latencies.sort((a, b) => a - b);
  const q = (p) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 10) / 10;
  return {
    requests: latencies.length, non2xx, connections: concurrency, url: `/v1/documents?search=<word>&sort_by=${sortBy}`,
    latencyMs: { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: q(1) },
    note: `${latencies.length} first searches, ${concurrency} at a time: p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${q(1)} ms`,
  };
}

scenarios.push(
  {
    // Repeated searches: the setup searches each of the 100 words once, so what is measured is the steady state of a
    // search people repeat or page through (answered from the search cache while the documents do not change). The
    // next scenario measures first searches.
    name: 'GET /v1/documents?search= repeated (API key, 100,000 documents)',
    setup: async (ctx) => {
      const s = await seedDocuments(ctx);
      if (!s.warm) {
        for (const term of SEARCH_TERMS) await ctx.api.get(`/v1/documents?search=${term}`, { token: s.readKey });
        s.warm = true;
      }
      return s;
    },
    path: `/v1/documents?search=${SEARCH_TERMS[0]}`,
    headers: (_ctx, s) => bearer(s.readKey),
    requests: () => {
      let i = 0;
      return [{ setupRequest: (req) => ({ ...req, path: `/v1/documents?search=${SEARCH_TERMS[i++ % SEARCH_TERMS.length]}` }) }];
    },
    goal: { maxP99Ms: 100 },
  },
  {
    // The same 100 words, each searched once for the first time (sort_by=updated_at: queries the search scenario above
    // did not make, so none is in the search cache), 50 at a time: what a search costs when it has to rank.
    name: 'GET /v1/documents?search= first search of each query (ranked, not cached)',
    setup: seedDocuments,
    goal: { maxP99Ms: 100 },
    run: (_ctx, s, baseUrl) => firstSearches(baseUrl, s.readKey, 'updated_at', 50),
  },
  {
    // The same 100 words once more, one search at a time (sort_by=created_at, so again none is cached): the latency of
    // a first search that waits for no other, beside the burst above, where 50 share two cores. Informative, no goal.
    name: 'GET /v1/documents?search= first search of each query, one at a time',
    setup: seedDocuments,
    run: (_ctx, s, baseUrl) => firstSearches(baseUrl, s.readKey, 'created_at', 1),
  },
  {
    // One client pulling every change since 0 (delta mode), 500 per page, following next_cursor to the end:
    // rows/s, and the server's peak RSS against its RSS before (it must not grow with the row count).
    name: 'GET /v1/sync/documents full delta sync (100,000 rows, pages of 500)',
    setup: seedDocuments,
    run: async (_ctx, s, baseUrl, server) => {
      const latencies = [];
      const rssAt = []; // the server's RSS after every 20,000 rows: flat, or growing with the row count?
      let rows = 0;
      let pages = 0;
      let non2xx = 0;
      let cursor = null;
      let bytes = 0;
      do {
        const t = performance.now();
        const res = await fetch(`${baseUrl}/v1/sync/documents?since=0&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: bearer(s.readKey) });
        const text = await res.text();
        latencies.push(performance.now() - t);
        bytes += text.length;
        pages++;
        if (res.status !== 200) { non2xx++; break; }
        const { data } = JSON.parse(text);
        const before = rows;
        rows += data.items.length + data.deleted.length;
        if (Math.floor(rows / 20_000) > Math.floor(before / 20_000)) rssAt.push(server.rssMb());
        cursor = data.has_more ? data.next_cursor : null;
      } while (cursor);
      latencies.sort((a, b) => a - b);
      const q = (p) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 10) / 10;
      return {
        requests: pages, non2xx, url: '/v1/sync/documents?since=0&limit=500',
        latencyMs: { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: q(1) },
        extra: { rows, pages, bytes, rssMbEvery20000Rows: rssAt },
        note: `${rows.toLocaleString('en-US')} rows in ${pages} pages (${(bytes / 1048576).toFixed(1)} MB of JSON); server RSS after every 20,000 rows: ${rssAt.join(', ')} MB`,
      };
    },
  },
);

// ---------------------------------------------------------------- collaboration fan-out (issue 4)
//
// 51 stock y-websocket clients (the `y-websocket` WebsocketProvider, as a browser editor uses it) on one document
// through /v1/collaboration/ws/{documentId}?ticket=...: one writer appends to the Y.Text `content` 200 times, one
// update at a time; each update's latency is the time from the writer's local change to its arrival in each of
// the 50 other clients (50 samples per update, 10,000 in all). Goal: p99 < 50 ms.
const FANOUT_CLIENTS = 50;
const FANOUT_UPDATES = 200;

scenarios.push({
  name: 'collaboration fan-out (1 update -> 50 y-websocket clients)',
  setup: async (ctx) => {
    const token = await ctx.freshToken(ctx.tenant);
    const doc = await ctx.api.post('/v1/documents', { title: 'Fan-out', content: 'Start.' }, { token, expect: 201 });
    return { token, documentId: doc.data.id };
  },
  goal: { maxP99Ms: 50 },
  run: async (ctx, s, baseUrl) => {
    const [{ WebsocketProvider }, Y, { default: WebSocket }] = await Promise.all([import('y-websocket'), import('yjs'), import('ws')]);
    const wsBase = baseUrl.replace(/^http/, 'ws');
    // Each WebsocketProvider adds a process 'exit' listener (removed by destroy()): 51 clients in this one process
    // are not a leak, and Node's default of 10 printed a MaxListenersExceededWarning in the middle of the table.
    process.setMaxListeners(Math.max(process.getMaxListeners(), FANOUT_CLIENTS + 10));
    const token = await ctx.freshToken(ctx.tenant);
    const ticket = async (scope) => (await ctx.api.post('/v1/collaboration/ticket', { scope }, { token })).data.ticket;
    const open = async (scope) => {
      const doc = new Y.Doc();
      const provider = new WebsocketProvider(`${wsBase}/v1/collaboration/ws`, s.documentId, doc,
        { WebSocketPolyfill: WebSocket, params: { ticket: await ticket(scope) }, disableBc: true, maxBackoffTime: 500 });
      return { doc, provider, text: doc.getText('content') };
    };
    const writer = await open('write');
    const readers = [];
    for (let i = 0; i < FANOUT_CLIENTS; i++) readers.push(await open('read'));
    const all = [writer, ...readers];
    const deadline = Date.now() + 30_000;
    while (!all.every((c) => c.provider.synced)) {
      if (Date.now() > deadline) throw new Error('the clients did not all sync within 30 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    const latencies = [];
    let lost = 0;
    try {
      for (let u = 0; u < FANOUT_UPDATES; u++) {
        const marker = ` u${u}`;
        const pending = readers.map((c) => new Promise((resolve) => {
          let observing = false;
          let timer = null;
          const done = (t) => { if (observing) c.text.unobserve(check); observing = false; clearTimeout(timer); resolve(t); };
          function check() { if (c.text.toString().endsWith(marker)) { done(performance.now()); return true; } return false; }
          if (!check()) { c.text.observe(check); observing = true; timer = setTimeout(() => done(null), 5000); }
        }));
        const t0 = performance.now();
        writer.text.insert(writer.text.length, marker);
        for (const t of await Promise.all(pending)) { if (t === null) lost++; else latencies.push(t - t0); }
      }
    } finally {
      for (const c of all) c.provider.destroy();
    }
    latencies.sort((a, b) => a - b);
    const q = (p) => (latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 10) / 10 : null);
    return {
      requests: latencies.length, unit: 'deliveries', errors: lost, connections: FANOUT_CLIENTS + 1,
      url: `/v1/collaboration/ws/${s.documentId}`,
      latencyMs: { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: q(1) },
      note: `${FANOUT_UPDATES} updates x ${FANOUT_CLIENTS} clients: ${latencies.length} deliveries, ${lost} not delivered within 5 s; delivery p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`,
    };
  },
});
