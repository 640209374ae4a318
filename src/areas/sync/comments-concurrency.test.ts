/** Comments written while their target is deleted: none outlives its target. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t?.close(); });

const req = (who: Tenant, method: string, url: string, payload?: unknown) =>
  t.app.inject({ method: method as 'GET', url, headers: who.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });
const left = async (orgId: string, targetId: string) => (await t.platform.db.sys.one<{ n: number }>(
  `SELECT count(*)::int AS n FROM comments WHERE org_id = $1 AND target_id = $2`, [orgId, targetId]))!.n;

describe('comments created while their target is deleted', () => {
  it('a document or task deleted at the same moment takes every comment with it; a late comment is 404', async () => {
    const c = await newTenant(t.app);
    const project = (await req(c, 'POST', '/v1/projects', { name: 'Racing comments' })).json().data.id as string;
    for (let i = 0; i < 6; i++) {
      const doc = (await req(c, 'POST', '/v1/documents', { title: `Doc ${i}` })).json().data.id as string;
      const task = (await req(c, 'POST', `/v1/projects/${project}/tasks`, { title: `Task ${i}` })).json().data as string;
      const comment = (type: string, id: string) => req(c, 'POST', '/v1/comments', { target_type: type, target_id: id, body: 'racing' });
      const results = await Promise.all([
        req(c, 'DELETE', `/v1/documents/${doc}`), comment('document', doc), comment('document', doc), comment('document', doc),
        req(c, 'DELETE', `/v1/tasks/${task}`), comment('task', task), comment('task', task), comment('task', task),
      ]);
      expect(results[0].statusCode).toBe(200);
      expect(results[4].statusCode).toBe(200);
      for (const r of [...results.slice(1, 4), ...results.slice(5)]) expect([201, 404]).toContain(r.statusCode);
      expect(await left(c.orgId, doc)).toBe(0);
      expect(await left(c.orgId, task)).toBe(0);
    }
  });
});
