/** Project and task writes that race each other: each request gets the answer it would get alone, never a wrong 404 or a 500. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';

let t: TestApp;
let a: Tenant;
let project: string;
beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
  project = (await req('POST', '/v1/projects', { name: 'Races' })).json().data.id;
});
afterAll(async () => { await t?.close(); });

function req(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers = a.auth) {
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}
const newTask = async (body: Record<string, unknown> = {}) => (await req('POST', `/v1/projects/${project}/tasks`, { title: 'T', ...body })).json().data as string;

describe('concurrent task updates', () => {
  it('simultaneous status changes of one task all succeed, one after another, each recorded in the activity feed', async () => {
    for (let i = 0; i < 5; i++) {
      const id = await newTask();
      const res = await Promise.all(['in_progress', 'done', 'cancelled'].map((status) => req('PUT', `/v1/tasks/${id}`, { status })));
      expect(res.map((r) => r.statusCode)).toEqual([200, 200, 200]);
      const final = (await req('GET', `/v1/tasks/${id}`)).json().data.status_key;
      const activity = (await req('GET', `/v1/tasks/${id}/activity`)).json().data as Array<{ field: string | null; new_value: unknown }>;
      const statusChanges = activity.filter((e) => e.field === 'status');
      expect(statusChanges).toHaveLength(3);
      expect(statusChanges.map((e) => e.new_value)).toContain(final);
    }
  });
});

describe('writes that refer to something deleted at the same moment', () => {
  it('a subtask or dependency of a task being deleted is 404 NOT_FOUND or created before the delete, never 500', async () => {
    for (let i = 0; i < 5; i++) {
      const target = await newTask();
      const res = await Promise.all([
        req('DELETE', `/v1/tasks/${target}`),
        req('POST', `/v1/projects/${project}/tasks`, { title: 'child', parent_task_id: target }),
        req('POST', `/v1/projects/${project}/tasks`, { title: 'dependent', depends_on: [target] }),
      ]);
      expect(res[0].statusCode).toBe(200);
      for (const r of res.slice(1)) {
        expect([201, 404]).toContain(r.statusCode);
        if (r.statusCode === 404) expect(r.json().error.code).toBe('NOT_FOUND');
      }
    }
  });
});

describe('project members and organization membership', () => {
  it('a user removed from the organization while being added to a project is not left a project member', async () => {
    for (let i = 0; i < 5; i++) {
      const u = await newTenant(t.app);
      expect((await req('POST', '/v1/organizations/current/members', { email: u.email, role: 'member' })).statusCode).toBe(201);
      const [added, removed] = await Promise.all([
        req('POST', `/v1/projects/${project}/members`, { user_id: u.userId, role: 'editor' }),
        req('DELETE', `/v1/organizations/current/members/${u.userId}`),
      ]);
      expect(removed.statusCode).toBe(200);
      expect([201, 404]).toContain(added.statusCode);
      const rows = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM project_members WHERE org_id = $1 AND user_id = $2`, [a.orgId, u.userId]);
      expect(rows!.n).toBe(0);
    }
  });
});

