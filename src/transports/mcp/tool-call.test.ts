import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import type { ServiceContext } from '../../core/context.js';
import { RpcError } from './jsonrpc.js';
import { ToolRegistry } from './registry.js';
import { runTool } from './tool-call.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t?.close(); });

/** A database error as `pg` reports it (databaseRefusal reads its code and message). */
const dbError = (code: string, message = 'refused') => Object.assign(new pg.DatabaseError(message, 0, 'error'), { code });

/** One tool over a route without needs whose service throws `thrown`. */
function registryThrowing(thrown: unknown): ToolRegistry {
  const route = { method: 'POST', url: '/v1/test-tools', schema: {}, config: {} };
  return new ToolRegistry([{ name: 'tests.write', description: 'throws', access: 'write', route: 'POST /v1/test-tools',
    run: async () => { throw thrown; } } as never], [route as never]);
}

const silent = { error() {}, warn() {} };

describe('MCP tool calls: the database refusals are answers, as on REST', () => {
  const run = async (thrown: unknown) => {
    const ctx: ServiceContext = { platform: t.platform, principal: await t.platform.credentials.resolve(t.rootKey), requestId: 'req-1', ip: null };
    return runTool(registryThrowing(thrown), ctx, 'tests.write', {}, silent);
  };

  it('a row deleted meanwhile (foreign key) is a tool error NOT_FOUND with reason DELETED_CONCURRENTLY', async () => {
    const r = await run(dbError('23503', 'insert or update on table "comments" violates foreign key constraint "comments_org_id_task_id_fkey"'));
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toEqual({ error: { code: 'NOT_FOUND', message: 'A resource this request refers to was deleted meanwhile', details: { reason: 'DELETED_CONCURRENTLY' } } });
  });

  it('a deadlock or serialization failure is a tool error CONFLICT with reason CONCURRENT_CHANGE', async () => {
    for (const code of ['40P01', '40001']) {
      const r = await run(dbError(code));
      expect(r.isError).toBe(true);
      expect((r.structuredContent as { error: { code: string; details: unknown } }).error).toMatchObject({ code: 'CONFLICT', details: { reason: 'CONCURRENT_CHANGE' } });
    }
  });

  it('any other database error is -32603 DATABASE_ERROR with the request id, its text not shown', async () => {
    const err = await run(dbError('XX000')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect([(err as RpcError).code, (err as RpcError).message, (err as RpcError).data]).toEqual([-32603, 'A database error occurred; retry with backoff', { code: 'DATABASE_ERROR', status: 500, requestId: 'req-1' }]);
  });

  it('a database that cannot be reached (refused, session ended by a shutdown) is -32603 SERVICE_UNAVAILABLE, status 503', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const thrown of [refused, dbError('57P01', 'terminating connection due to administrator command')]) {
      const err = await run(thrown).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RpcError);
      expect([(err as RpcError).code, (err as RpcError).data]).toEqual([-32603,
        { code: 'SERVICE_UNAVAILABLE', status: 503, details: { reason: 'DATABASE_UNAVAILABLE' }, requestId: 'req-1' }]);
    }
  });

  it('a statement cancelled by DB_STATEMENT_TIMEOUT_MS is -32603 SERVICE_UNAVAILABLE, status 503, reason STATEMENT_TIMEOUT', async () => {
    const err = await run(dbError('57014', 'canceling statement due to statement timeout')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect([(err as RpcError).code, (err as RpcError).data]).toEqual([-32603,
      { code: 'SERVICE_UNAVAILABLE', status: 503, details: { reason: 'STATEMENT_TIMEOUT' }, requestId: 'req-1' }]);
    expect((err as RpcError).message).toContain('narrow it');
  });
});
