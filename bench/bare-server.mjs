// "Bare query" baseline: Fastify routes that run one statement through a pg Pool on the bench database, with no
// auth, no row-level security, no rate limiter, no envelope and no response schema. A route of the platform is
// compared with its bare counterpart (the `x bare` column): the gap is what auth, tenancy, validation and the
// envelope cost on top of the unavoidable round trip.
//
// Usage: DATABASE_URL=... PORT=<port> node bench/bare-server.mjs   (prints "listening <port>" when ready)
//
// To add a bare counterpart for a new scenario, add an entry to QUERIES (GET /q/<name>/<p1>[/<p2>...]: runs `sql`
// with values(params) and returns the rows as JSON) or to WRITES (POST, with the JSON body). Keep it to the
// statement the platform's route runs (the list statements are imported from the built repositories in dist/, so
// they cannot drift), so the ratio isolates the platform's own overhead.
import Fastify from 'fastify';
import pg from 'pg';
import { listProjectsSql } from '../dist/areas/projects/projects.repo.js';
import { listTasksSql } from '../dist/areas/projects/tasks.repo.js';
// The platform's UUIDv7 (ordered ids keep index inserts at the right edge of the b-tree, as the platform's do).
import { uuidv7 } from '../dist/core/ids.js';
// For its side effect: the platform's pg type parsers (RFC 3339 timestamps, bigint as number), so rows are decoded
// exactly as the platform decodes them.
import '../dist/core/db/database.js';


const tasksDefault = listTasksSql({});
const QUERIES = {
  // One row by primary key: the smallest possible database round trip.
  org: { params: ['id'], sql: `SELECT id, name FROM organizations WHERE id = $1`, values: (p) => [p.id] },
  // GET /v1/projects default page (status active, limit 50, offset 0): the statement projectsRepo.list runs.
  projects: { params: ['orgId'], sql: listProjectsSql('active'), values: (p) => [p.orgId, 50, 0] },
  // GET /v1/projects/{id}/tasks default page (no filter, limit 50, offset 0): the statement tasksRepo.list runs.
  tasks: { params: ['orgId', 'projectId'], sql: tasksDefault.text, values: (p) => tasksDefault.params({ orgId: p.orgId, projectId: p.projectId, limit: 50, offset: 0 }) },
};

const WRITES = {
  // POST /v1/projects/{id}/tasks without the platform: one INSERT of the task row (no status lookup, no activity,
  // no audit, no transaction). The status id comes from the path; the id is made here, like the platform's.
  task: {
    params: ['orgId', 'projectId', 'statusId', 'userId'],
    sql: `INSERT INTO tasks (org_id, id, project_id, title, status_id, priority, created_by) VALUES ($1, $2, $3, $4, $5, 'medium', $6)`,
    values: (p, body) => [p.orgId, uuidv7(), p.projectId, body.title, p.statusId, p.userId],
  },
};

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 20) });
pool.on('error', () => {});
const app = Fastify({ logger: false });
const route = (name, q) => `/q/${name}/${q.params.map((p) => `:${p}`).join('/')}`;
for (const [name, q] of Object.entries(QUERIES)) {
  // A named statement, like the platform's (src/core/db/database.ts): parsed and planned once per connection.
  app.get(route(name, q), async (req) => (await pool.query({ name: `bare_${name}`, text: q.sql, values: q.values(req.params) })).rows);
}
for (const [name, q] of Object.entries(WRITES)) {
  app.post(route(name, q), async (req, reply) => {
    const values = q.values(req.params, req.body);
    await pool.query({ name: `bare_w_${name}`, text: q.sql, values });
    return reply.code(201).send({ id: values[1] });
  });
}
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${app.server.address().port}\n`);
const stop = () => app.close().then(() => pool.end()).then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
