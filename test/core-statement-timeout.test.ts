/**
 * DB_STATEMENT_TIMEOUT_MS: a statement of a request connection that runs past it is cancelled by PostgreSQL
 * (statement_timeout on the request pool) and answered 503 SERVICE_UNAVAILABLE, reason STATEMENT_TIMEOUT. A route of
 * this file's own runs a statement of a chosen length on the request pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appWithCapturedLogs, buildTestApp, errorOf, type TestApp } from './helpers.js';
import { uuidv7 } from '../src/core/ids.js';

let t: TestApp;
let logged: Awaited<ReturnType<typeof appWithCapturedLogs>>;
beforeAll(async () => {
  t = await buildTestApp({ dbStatementTimeoutMs: 300 });
  logged = await appWithCapturedLogs(t);
  logged.app.get('/test/sleep/:seconds', { config: { auth: 'public' } }, async (req) => {
    const { seconds } = req.params as { seconds: string };
    await req.server.platform.db.tenant(uuidv7(), (sql) => sql.query('SELECT pg_sleep($1)', [Number(seconds)]));
    return { slept: Number(seconds) };
  });
  await logged.app.ready();
});
afterAll(async () => { await logged?.app.close(); await t?.close(); });

describe('statement time limit of request connections', () => {
  it('a statement past DB_STATEMENT_TIMEOUT_MS is cancelled: 503 SERVICE_UNAVAILABLE, reason STATEMENT_TIMEOUT, Retry-After, one warning naming the cause', async () => {
    const res = await logged.app.inject({ url: '/test/sleep/5', headers: { 'x-request-id': 'slow-statement-1' } });
    const err = errorOf(res, 503, 'SERVICE_UNAVAILABLE');
    expect(err.details).toEqual({ reason: 'STATEMENT_TIMEOUT', requestId: 'slow-statement-1' });
    expect(err.message).toContain('narrow it');
    expect(res.headers['retry-after']).toBe('5');
    const warned = logged.lines.filter((l) => l.reqId === 'slow-statement-1' && l.level === 40);
    expect(warned).toEqual([expect.objectContaining({ msg: 'request failed: statement timeout', code: 'SERVICE_UNAVAILABLE', cause: '57014: canceling statement due to statement timeout' })]);
  });

  it('a statement within the limit answers, and the connection serves the next request', async () => {
    const res = await logged.app.inject({ url: '/test/sleep/0.01' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ slept: 0.01 });
  });

  it('the owner pool (migrations, sign-in lookups, retention purges) is not bounded', async () => {
    expect(await t.platform.db.sys.query('SELECT pg_sleep(0.5) AS slept')).toEqual([{ slept: '' }]);
  });
});
