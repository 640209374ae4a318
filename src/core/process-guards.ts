/**
 * The last line of defence of a server shared by every tenant: a defect that lets one request's or one socket
 * message's promise reject unhandled must not end the process for all of them (Node's default since v15). Such a
 * rejection is logged as the defect it is, and the server goes on: nothing is left half-done by a rejection that no
 * one was waiting for. An uncaught exception is another matter (Node: the process state is undefined after one), so
 * it is logged and the server stops as after a SIGTERM, closing its database (an embedded PostgreSQL is not left
 * running, orphaned), with exit code 1 for the supervisor to restart it.
 */
export interface GuardLog { error(o: unknown, m?: string): void; fatal(o: unknown, m?: string): void }

export function onUnhandledRejection(log: GuardLog) {
  return (reason: unknown) => { log.error({ err: reason }, 'unhandled promise rejection (a defect; the server goes on)'); };
}

export function onUncaughtException(log: GuardLog, stop: (reason: string) => void) {
  let stopping = false;
  return (err: unknown) => {
    log.fatal({ err }, 'uncaught exception (a defect); stopping');
    if (stopping) return;
    stopping = true;
    stop('uncaughtException');
  };
}

export function installProcessGuards(log: GuardLog, stop: (reason: string) => void): void {
  process.on('unhandledRejection', onUnhandledRejection(log));
  process.on('uncaughtException', onUncaughtException(log, stop));
}
