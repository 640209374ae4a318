import pg from 'pg';
import { AppError } from '../errors.js';

/** Seconds a client is told to wait (Retry-After) when the database cannot be reached: about a restart or failover. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Socket errors that mean the server cannot be reached (or the connection to it was lost), not a fault of ours. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * SQLSTATEs of a server that is not there for us: class 08 (connection exception), 57P01 / 57P02 (the session ended
 * by an administrator's or a crash's shutdown), 57P03 (cannot connect now: starting up, shutting down, recovering).
 */
const isUnavailableState = (code: string) => code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';

/**
 * pg's own messages for a connection that could not be made or was lost: pg-pool's connection timeout (a new
 * connection that did not open in time, or no connection free in time: a busy pool, or one whose connections hang on
 * an unreachable server; both mean the database cannot serve this request now), pg's own connect timeout, and a
 * server connection that ended without an answer (pg turns the socket's end into this error).
 */
const PG_CONNECTION_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Connection terminated unexpectedly',
  'timeout expired',
];

/**
 * Why the database cannot be reached, in one line for the log ("ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432"),
 * when `err` says it cannot be; null for any other error (a bad statement, a constraint, a bug), which stays a 500.
 * Looks through `cause` and AggregateError's `errors` (Node tries each address of a host name and reports them all).
 */
export function databaseUnavailableCause(err: unknown, depth = 0): string | null {
  if (!(err instanceof Error) || depth > 4) return null;
  const code = (err as { code?: unknown }).code;
  if (err instanceof pg.DatabaseError && typeof code === 'string' && isUnavailableState(code)) return `${code}: ${err.message}`;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return `${code}: ${err.message || (err as AggregateError).errors?.[0]?.message || code}`;
  if (PG_CONNECTION_MESSAGES.includes(err.message)) {
    const inner = databaseUnavailableCause(err.cause, depth + 1);
    return inner ? `${err.message} (${inner})` : err.message;
  }
  for (const inner of [err.cause, ...(err instanceof AggregateError ? err.errors : [])]) {
    const found = databaseUnavailableCause(inner, depth + 1);
    if (found) return found;
  }
  return null;
}

/** The answer to a request the database cannot serve now: 503 with Retry-After; the cause goes to the log only. */
export function databaseUnavailable(cause: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', { reason: 'DATABASE_UNAVAILABLE' },
    { headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) }, cause });
}
