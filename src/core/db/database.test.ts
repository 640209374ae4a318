import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from './database.js';

/** A "database" that accepts connections and never answers (a hung server): the health check must not wait for it. */
let silent: net.Server;
const sockets = new Set<net.Socket>();
beforeAll(async () => {
  silent = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => silent.close(() => r()));
});

describe('Database.ping', () => {
  it('answers false within its timeout when the server never answers', async () => {
    const { port } = silent.address() as net.AddressInfo;
    const db = new Database({ url: `postgres://x:y@127.0.0.1:${port}/db`, poolSize: 2 });
    const started = Date.now();
    expect(await db.ping(150)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const s of sockets) s.destroy(); // lets the pending connection attempt fail, so the pools can end
    await db.close();
  });
});
