import type { App } from '../../app.js';
import { bearer, newTenant, type Tenant } from '../../../test/helpers.js';

/** Polls `fn` until it returns a truthy value (or throws after timeoutMs). */
export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A second user who is a member of `owner`'s organization with `role`, signed in there. */
export async function memberOf(app: App, owner: Tenant, role: 'admin' | 'member' | 'viewer' = 'member') {
  const other = await newTenant(app, { name: `${role}` });
  const add = await app.inject({ method: 'POST', url: '/v1/organizations/current/members', headers: owner.auth, payload: { email: other.email, role } });
  if (add.statusCode !== 201) throw new Error(`add member failed: ${add.statusCode} ${add.body}`);
  const sw = await app.inject({ method: 'POST', url: '/v1/auth/switch-organization', headers: other.auth, payload: { organization_id: owner.orgId } });
  if (sw.statusCode !== 200) throw new Error(`switch failed: ${sw.statusCode} ${sw.body}`);
  const token = sw.json().data.access_token as string;
  return { userId: other.userId, email: other.email, auth: bearer(token), home: other };
}

/** Creates a project in the tenant's organization through the projects API; returns its id. */
export async function createProject(app: App, owner: { auth: Record<string, string> }, name = `Project ${Date.now()}`) {
  const r = await app.inject({ method: 'POST', url: '/v1/projects', headers: owner.auth, payload: { name } });
  if (r.statusCode !== 201) throw new Error(`project failed: ${r.statusCode} ${r.body}`);
  return r.json().data as { id: string; slug: string; name: string };
}

/** Creates a task through the tasks API; returns its id. */
export async function createTask(app: App, owner: { auth: Record<string, string> }, projectId: string, body: Record<string, unknown>) {
  const r = await app.inject({ method: 'POST', url: `/v1/projects/${projectId}/tasks`, headers: owner.auth, payload: body });
  if (r.statusCode !== 201) throw new Error(`task failed: ${r.statusCode} ${r.body}`);
  return r.json().data as string;
}
