import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { memberOf } from '../projects/projects.fixtures.js';

let t: TestApp;

beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => { await t?.close(); });

const req = (who: Tenant, method: string, url: string, payload?: unknown) =>
  t.app.inject({ method: method as 'GET', url, headers: who.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });

/** Sets the organization's features with the root key (as an operator would); returns the features it had. */
async function setFeatures(who: Tenant, change: (features: string[]) => string[]): Promise<string[]> {
  const before = (await req(who, 'GET', '/v1/me')).json().data.organization.features as string[];
  const r = await t.app.inject({ method: 'PUT', url: `/v1/admin/organizations/${who.orgId}/entitlements`, headers: { authorization: `Bearer ${t.rootKey}` }, payload: { features: change(before) } });
  expect(r.statusCode).toBe(200);
  return before;
}

describe('comments and the documents feature', () => {
  it('comments on a document need the documents feature (403 FEATURE_DISABLED); comments on a task do not', async () => {
    const c = await newTenant(t.app);
    const doc = (await req(c, 'POST', '/v1/documents', { title: 'Gated' })).json().data;
    const project = (await req(c, 'POST', '/v1/projects', { name: 'Gated project' })).json().data;
    const task = (await req(c, 'POST', `/v1/projects/${project.id}/tasks`, { title: 'Gated task' })).json().data as string;
    const docComment = (await req(c, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'before' })).json().data;
    const taskComment = (await req(c, 'POST', '/v1/comments', { target_type: 'task', target_id: task, body: 'before' })).json().data;
    expect(docComment.id).toBeTruthy();
    expect(taskComment.id).toBeTruthy();

    const features = await setFeatures(c, (f) => f.filter((x) => x !== 'documents'));
    // The documents routes themselves answer so:
    const gate = errorOf(await req(c, 'GET', `/v1/documents/${doc.id}`), 403, 'FEATURE_DISABLED');
    expect(gate.details).toEqual({ feature: 'documents' });
    const expectGate = (e: { message: string; details?: Record<string, unknown> }) => {
      expect(e.message).toBe(gate.message);
      expect(e.details).toEqual({ feature: 'documents' });
    };
    expectGate(errorOf(await req(c, 'POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'x' }), 403, 'FEATURE_DISABLED'));
    expectGate(errorOf(await req(c, 'GET', `/v1/comments?target_type=document&target_id=${doc.id}`), 403, 'FEATURE_DISABLED'));
    expectGate(errorOf(await req(c, 'PUT', `/v1/comments/${docComment.id}`, { body: 'edited' }), 403, 'FEATURE_DISABLED'));
    expectGate(errorOf(await req(c, 'DELETE', `/v1/comments/${docComment.id}`), 403, 'FEATURE_DISABLED'));
    // Comments on tasks are not documents.
    const onTask = await req(c, 'POST', '/v1/comments', { target_type: 'task', target_id: task, body: 'still here' });
    expect(onTask.statusCode).toBe(201);
    const listed = await req(c, 'GET', `/v1/comments?target_type=task&target_id=${task}`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((x: { body: string }) => x.body)).toEqual(['before', 'still here']);
    expect((await req(c, 'PUT', `/v1/comments/${taskComment.id}`, { body: 'edited' })).statusCode).toBe(200);
    expect((await req(c, 'DELETE', `/v1/comments/${taskComment.id}`)).statusCode).toBe(200);

    // Nothing was written while the feature was off; with it back, the document's comments are as before.
    await setFeatures(c, () => features);
    const back = await req(c, 'GET', `/v1/comments?target_type=document&target_id=${doc.id}`);
    expect(back.statusCode).toBe(200);
    expect(back.json().data.map((x: { body: string }) => x.body)).toEqual(['before']);
    expect((await req(c, 'PUT', `/v1/comments/${docComment.id}`, { body: 'edited' })).statusCode).toBe(200);
  });
});

describe('who may change a comment', () => {
  it('its author while they may write to its target: made viewer, they read it and no longer edit or delete it (403); a moderator still deletes it', async () => {
    const owner = await newTenant(t.app);
    const m = await memberOf(t.app, owner, 'member');
    const doc = (await req(owner, 'POST', '/v1/documents', { title: 'Discussed' })).json().data;
    const project = (await req(owner, 'POST', '/v1/projects', { name: 'Discussed project' })).json().data;
    const task = (await req(owner, 'POST', `/v1/projects/${project.id}/tasks`, { title: 'Discussed task' })).json().data as string;
    const as = (method: string, url: string, payload?: unknown) => t.app.inject({ method: method as 'GET', url, headers: m.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });
    const onDoc = (await as('POST', '/v1/comments', { target_type: 'document', target_id: doc.id, body: 'mine' })).json().data;
    const onTask = (await as('POST', '/v1/comments', { target_type: 'task', target_id: task, body: 'mine too' })).json().data;
    expect((await as('PUT', `/v1/comments/${onDoc.id}`, { body: 'edited as member' })).statusCode).toBe(200);

    expect((await req(owner, 'PUT', `/v1/organizations/current/members/${m.userId}`, { role: 'viewer' })).statusCode).toBe(200);
    expect((await as('GET', `/v1/comments?target_type=document&target_id=${doc.id}`)).statusCode).toBe(200);
    expect(errorOf(await as('PUT', `/v1/comments/${onDoc.id}`, { body: 'edited as viewer' }), 403, 'PERMISSION_DENIED').details).toMatchObject({ permission: 'document.update' });
    expect(errorOf(await as('DELETE', `/v1/comments/${onDoc.id}`), 403, 'PERMISSION_DENIED').details).toMatchObject({ permission: 'document.update' });
    expect(errorOf(await as('PUT', `/v1/comments/${onTask.id}`, { body: 'edited as viewer' }), 403, 'PERMISSION_DENIED').details).toMatchObject({ permission: 'task.update' });
    const kept = (await req(owner, 'GET', `/v1/comments?target_type=document&target_id=${doc.id}`)).json().data;
    expect(kept.map((c: { body: string }) => c.body)).toEqual(['edited as member']);
    expect((await req(owner, 'DELETE', `/v1/comments/${onDoc.id}`)).statusCode).toBe(200);
  });
});
