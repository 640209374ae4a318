// Hello-world Fastify server: the ceiling this machine gives a Node HTTP server with the same framework.
// Every platform route's requests/s is reported as a ratio to this one, measured in the same run.
// Usage: PORT=<port> node bench/baseline-server.mjs   (prints "listening <port>" when ready)
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${app.server.address().port}\n`);
const stop = () => app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
