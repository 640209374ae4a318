import type { Fixture } from '../../../test/fixtures.js';
import type { App } from '../../app.js';
import { newTenant, type Tenant } from '../../../test/helpers.js';
import { auditRecord } from '../../core/audit.js';
import { uuidv7 } from '../../core/ids.js';
import type { BatchedTask } from './tasks.repo.js';

export const projectsFixtures: Record<string, Fixture> = {
  async project(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/projects', headers: owner.auth, payload: { name: `Fixture ${Date.now()}` } });
    if (r.statusCode !== 201) throw new Error(`project fixture: ${r.statusCode} ${r.body}`);
    return { projectId: r.json().data.id };
  },
  async task(app, owner) {
    const { projectId } = await projectsFixtures.project(app, owner);
    const r = await app.inject({ method: 'POST', url: `/v1/projects/${projectId}/tasks`, headers: owner.auth, payload: { title: 'Fixture task' } });
    if (r.statusCode !== 201) throw new Error(`task fixture: ${r.statusCode} ${r.body}`);
    return { taskId: r.json().data };
  },
};

// Helpers the area's tests share.

/** A second user who is a member of `owner`'s organization with `role`, signed in there. */
export async function memberOf(app: App, owner: Tenant, role: 'admin' | 'member' | 'viewer'): Promise<{ userId: string; email: string; auth: { authorization: string } }> {
  const other = await newTenant(app, { name: role });
  const add = await app.inject({ method: 'POST', url: '/v1/organizations/current/members', headers: owner.auth, payload: { email: other.email, role } });
  if (add.statusCode !== 201) throw new Error(`add member: ${add.statusCode} ${add.body}`);
  const login = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: other.email, password: other.password, organization_id: owner.orgId } });
  if (login.statusCode !== 200) throw new Error(`login: ${login.statusCode} ${login.body}`);
  return { userId: other.userId, email: other.email, auth: { authorization: `Bearer ${login.json().data.access_token}` } };
}

export async function createProject(app: App, t: Tenant, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const r = await app.inject({ method: 'POST', url: '/v1/projects', headers: t.auth, payload: { name: `Project ${Math.random().toString(36).slice(2, 8)}`, ...body } });
  if (r.statusCode !== 201) throw new Error(`create project: ${r.statusCode} ${r.body}`);
  return r.json().data;
}

export async function createTask(app: App, t: Tenant, projectId: string, body: Record<string, unknown> = {}): Promise<string> {
  const r = await app.inject({ method: 'POST', url: `/v1/projects/${projectId}/tasks`, headers: t.auth, payload: { title: 'A task', ...body } });
  if (r.statusCode !== 201) throw new Error(`create task: ${r.statusCode} ${r.body}`);
  return r.json().data;
}

/** A task as task-inserts.ts hands it to tasksRepo.insertWithStatusBatch (no request behind it: audit without request id). */
export function batchedTask(who: { orgId: string; userId: string }, projectId: string, statusId: string, title: string): BatchedTask {
  const id = uuidv7();
  return {
    orgId: who.orgId, id, projectId, title, description: null, priority: 'medium', dueDate: null, createdBy: who.userId, statusId,
    activity: { id: uuidv7(), newValue: { title } }, actor: { userId: who.userId, apiKeyId: null, kind: 'user' },
    audit: auditRecord([who.orgId, uuidv7(), who.userId, null, 'user', 'task.created', 'task', id, null, null, {}]),
  };
}
