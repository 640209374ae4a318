import { loadConfig } from './core/config.js';
import { startPlatform } from './core/platform.js';
import { buildApp } from './app.js';
import { ensureRoot } from './areas/accounts/root.service.js';
import pino from 'pino';
import { installProcessGuards } from './core/process-guards.js';

/** Starts the server: database, migrations, root bootstrap, HTTP; SIGTERM/SIGINT drain and close cleanly. */
/** `json`: the first start's root key is printed as one JSON line (`platform serve --json`), for scripts. */
export async function serve(opts: { json?: boolean } = {}): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    // A bad setting (DEFAULT_PLAN_TIER=gold, ...) is the operator's to fix: one line naming it, no stack.
    process.stderr.write(`platform: could not start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const log = pino({ level: config.logLevel });
  let running: Awaited<ReturnType<typeof startPlatform>> | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let closing = false;
  // SHUTDOWN_DRAIN_MS: before the listener closes, /v1/health answers 503 "draining" while every other request is still
  // served, so a load balancer takes this node out of rotation instead of meeting refused connections. SIGTERM only:
  // it is what orchestrators send; a Ctrl-C (SIGINT) at a terminal means stop now.
  const drainPeriod = async (signal: string) => {
    if (signal !== 'SIGTERM' || config.shutdownDrainMs === 0 || !app?.server.listening) return;
    running!.platform.lifecycle.draining = true;
    log.info({ signal, drainMs: config.shutdownDrainMs }, 'draining: /v1/health answers 503 while requests are still served');
    await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
  };
  let exitCode = 0;
  const shutdown = async (signal: string) => {
    // A Ctrl-C under `npm start` arrives twice (the terminal signals the whole process group, and npm passes it on):
    // the line says so, since two lines read like two presses.
    if (closing) { log.info({ signal }, 'already shutting down (one Ctrl-C under npm start arrives twice: from the terminal and from npm); the drain goes on'); return; }
    closing = true;
    // Still starting (initdb, PostgreSQL, migrations): the start stops as soon as the database is up (below).
    if (!running) { log.info({ signal }, 'shutting down once the database has started'); return; }
    await drainPeriod(signal);
    log.info({ signal }, 'shutting down: no new connections, draining requests');
    // Requests that do not finish in time (a client that never sends the rest of its body) are cut; the database
    // is still closed, so an embedded PostgreSQL is not left running without its server.
    let stage = 'HTTP server: requests in flight, open sockets, onClose hooks';
    const force = setTimeout(() => {
      // What was still open, so an operator (or we) can tell a slow client from something that never lets go.
      const pool = (p: { totalCount: number; idleCount: number; waitingCount: number }) => ({ total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount });
      const db = running!.platform.db;
      log.error({ stage, appPool: pool(db.app), systemPool: pool(db.system) },
        'drain timed out; closing the remaining connections and the database, then exiting');
      app?.server.closeAllConnections();
      const exit = () => process.exit(1);
      setTimeout(exit, 10_000).unref();
      running!.close({ force: true }).then(exit, exit);
    }, config.shutdownTimeoutMs);
    force.unref();
    try {
      if (app) await app.close();
      stage = 'platform: background jobs, database pools, listener';
      await running!.close();
      log.info('stopped cleanly');
      process.exit(exitCode);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  // Signals are handled from the start, before the database is up: the embedded PostgreSQL runs in a process group of
  // its own (a terminal's Ctrl-C does not reach it), so the process must live to stop it; dying of a signal's default
  // action during the first start's initdb, migrations or root-key setup would leave it running, orphaned.
  // `on`, not `once`: a second signal while draining must not get the default action (death, mid-drain). A Ctrl-C
  // on `npm start` brings two, the terminal's and the one npm forwards; the drain is bounded by SHUTDOWN_TIMEOUT_MS.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  installProcessGuards(log, (reason) => { exitCode = 1; void shutdown(reason); });
  process.on('SIGINT', () => void shutdown('SIGINT'));
  let started: NonNullable<typeof running>;
  try {
    started = running = await startPlatform(config, log, { embeddedOwnProcessGroup: true });
  } catch (err) {
    // A start that cannot happen (database unreachable, DATA_DIR in use...) says why in one line, without a stack.
    log.fatal({ err }, 'could not start');
    process.stderr.write(`platform: could not start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  if (closing) {
    // A signal came while the database started: stop it now, as a shutdown would.
    await started.close();
    log.info('stopped cleanly');
    process.exit(exitCode);
  }
  // Made on the first start only, stored hashed: printed once whatever happens next, since it cannot be shown again.
  // After the server listens (so its "Try" line names a server that answers); without that line when the start
  // fails after the key was made (a port in use): the key is valid, and the next start prints none.
  let generatedKey: string | undefined;
  const printKey = (listening: boolean) => {
    if (!generatedKey) return;
    const key = generatedKey;
    generatedKey = undefined;
    const port = (app?.server.address() as { port?: number } | null)?.port ?? config.port;
    process.stdout.write(opts.json
      ? `${JSON.stringify({ root_api_key: key, shown_once: true })}\n`
      : `\n  Root API key (shown once; store it now):\n\n    ${key}\n\n${listening ? `  Try: curl -H "Authorization: Bearer ${key}" http://localhost:${port}/v1/me\n\n` : ''}`);
  };
  try {
    generatedKey = (await ensureRoot(started.platform)).generatedKey ?? undefined;
    app = await buildApp(started.platform, { loggerInstance: log as never });
    if (closing) { printKey(false); return; } // a signal arrived while the app was being built: the shutdown under way closes everything
    await app.listen({ port: config.port, host: config.host });
    printKey(true);
  } catch (err) {
    // Like a failed start above: one line that says why (a malformed ROOT_API_KEY, a port in use), no stack on the
    // terminal (the log line has it), the database closed, exit code 1.
    printKey(false);
    log.error({ err }, 'failed to start');
    await started.close();
    process.stderr.write(`platform: could not start: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
