// "Bare query" baseline: a Fastify route that runs one indexed SELECT through a pg Pool on the bench database,
// with no auth, no row-level security, no envelope and no response schema. A route of the platform that does one
// such query is compared with it (the `x bare` column): the gap is what auth, tenancy, validation and the
// envelope cost on top of the unavoidable round trip.
//
// Usage: DATABASE_URL=... PORT=<port> node bench/bare-server.mjs   (prints "listening <port>" when ready)
//
// To add a bare counterpart for a new scenario, add an entry to QUERIES below: GET /q/<name>/<param> runs
// `sql` with [param] and returns the rows as JSON. Keep it to the statement the platform's route runs,
// so the ratio isolates the platform's own overhead.
import Fastify from 'fastify';
import pg from 'pg';

const QUERIES = {
  // One row by primary key: the smallest possible database round trip.
  org: `SELECT id, name FROM organizations WHERE id = $1`,
};

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 20) });
pool.on('error', () => {});
const app = Fastify({ logger: false });
for (const [name, text] of Object.entries(QUERIES)) {
  // A named statement, like the platform's (src/core/db/database.ts): parsed and planned once per connection.
  app.get(`/q/${name}/:param`, async (req) => (await pool.query({ name: `bare_${name}`, text, values: [req.params.param] })).rows);
}
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${app.server.address().port}\n`);
const stop = () => app.close().then(() => pool.end()).then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
