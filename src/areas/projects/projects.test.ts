import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import type { PlatformEvent } from '../../core/events.js';
import { createProject, memberOf } from './projects.fixtures.js';

let t: TestApp;
let a: Tenant;
const events: PlatformEvent[] = [];
beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
  t.platform.events.subscribe((e) => { events.push(e); });
});
afterAll(async () => { await t.close(); });

const RANDOM = '0190a5b4-0000-7000-8000-000000000000';

describe('POST /v1/projects', () => {
  it('creates the full record with a generated slug, owner member and event', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Mars Rover Ü', description: 'd', settings: { color: 'red' } } });
    expect(r.statusCode).toBe(201);
    const p = r.json().data;
    expect(p).toMatchObject({ org_id: a.orgId, name: 'Mars Rover Ü', slug: 'mars-rover-u', description: 'd', prefix: null, visibility: 'private',
      category_id: null, owner_scope: 'organization', is_active: true, created_by_user_id: a.userId, settings: { color: 'red' } });
    expect(p.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(p.created_at)).not.toBeNaN();
    expect(Date.parse(p.updated_at)).not.toBeNaN();
    const again = await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Mars Rover Ü' } });
    expect(again.json().data.slug).toBe('mars-rover-u-2');
    const members = await t.app.inject({ method: 'GET', url: `/v1/projects/${p.id}/members`, headers: a.auth });
    expect(members.json().data).toMatchObject([{ user_id: a.userId, role: 'owner' }]);
    await new Promise((res) => setTimeout(res, 10));
    expect(events.find((e) => e.type === 'project.created' && e.targetId === p.id)).toMatchObject({ orgId: a.orgId, actorUserId: a.userId, targetType: 'project' });
  });

  it('validates slugs: RESERVED_SLUG, INVALID_FORMAT, UUID-shaped; 409 PROJECT_SLUG_EXISTS', async () => {
    const bad = async (slug: string, word: string) => {
      const e = errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x', slug } }), 400, 'VALIDATION_ERROR');
      expect(e.message).toContain(word);
    };
    await bad('admin', 'RESERVED_SLUG');
    await bad('Has Caps', 'INVALID_FORMAT');
    await bad('double--hyphen', 'INVALID_FORMAT');
    await bad('-lead', 'INVALID_FORMAT');
    await bad('0190a5b4-0000-7000-8000-000000000000', 'INVALID_FORMAT');
    await bad('', 'INVALID_FORMAT');
    await bad('a'.repeat(257), 'INVALID_FORMAT');
    await bad('a'.repeat(300), 'INVALID_FORMAT');
    // As long as spec 8 lets a slug's availability be asked (256 chars).
    expect((await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Long slug', slug: 'a'.repeat(256) } })).statusCode).toBe(201);
    await createProject(t.app, a, { slug: 'apollo' });
    const e = errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x', slug: 'apollo' } }), 409, 'PROJECT_SLUG_EXISTS');
    expect(e.details).toMatchObject({ field: 'slug' });
    // Unique per organization: another organization may use the same slug.
    const b = await newTenant(t.app);
    expect((await createProject(t.app, b, { slug: 'apollo' })).slug).toBe('apollo');
  });

  it('rejects bad bodies: missing name, unknown keys, platform fields, invalid JSON', async () => {
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: {} }), 400, 'VALIDATION_ERROR');
    // A name with nothing visible in it (blank, or zero-width characters only) would list as an empty name.
    for (const name of ['   ', '\u200B', '\u200B\u200D']) {
      expect(errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name } }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'name' });
    }
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x', id: RANDOM } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x', org_id: a.orgId } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x', is_active: false } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: '' } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x'.repeat(256) } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'x', description: 'd'.repeat(4097) } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: { ...a.auth, 'content-type': 'application/json' }, payload: '{"name":' }), 400, 'INVALID_JSON');
  });

  it('403 PERMISSION_DENIED for a viewer; FORBIDDEN for a read-only key', async () => {
    const viewer = await memberOf(t.app, a, 'viewer');
    const e = errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: viewer.auth, payload: { name: 'x' } }), 403, 'PERMISSION_DENIED');
    expect(e.details).toMatchObject({ permission: 'project.create' });
    expect((await t.app.inject({ method: 'GET', url: '/v1/projects', headers: viewer.auth })).statusCode).toBe(200);
    const key = await a.apiKey(['projects:read']);
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: bearer(key), payload: { name: 'x' } }), 403, 'FORBIDDEN');
    expect((await t.app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(key) })).statusCode).toBe(200);
    const wkey = await a.apiKey(['projects:write']);
    expect((await t.app.inject({ method: 'POST', url: '/v1/projects', headers: bearer(wkey), payload: { name: 'by key' } })).statusCode).toBe(201);
  });

  it('403 PROJECT_LIMIT_REACHED at the plan tier max_projects; archiving frees a slot, unarchiving counts', async () => {
    const c = await newTenant(t.app);
    await t.platform.db.sys.exec(`UPDATE organizations SET plan_tier = 'academic_free' WHERE id = $1`, [c.orgId]);
    t.platform.credentials.invalidate();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createProject(t.app, c)).id);
    const e = errorOf(await t.app.inject({ method: 'POST', url: '/v1/projects', headers: c.auth, payload: { name: 'fourth' } }), 403, 'PROJECT_LIMIT_REACHED');
    expect(e.details).toMatchObject({ limit: 3 });
    expect((await t.app.inject({ method: 'PUT', url: `/v1/projects/${ids[0]}`, headers: c.auth, payload: { is_active: false } })).statusCode).toBe(200);
    await createProject(t.app, c);
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${ids[0]}`, headers: c.auth, payload: { is_active: true } }), 403, 'PROJECT_LIMIT_REACHED');
  });
});

describe('POST /v1/projects concurrency', () => {
  it('concurrent creations from the same name without a slug all succeed with distinct generated slugs, also on a plan without a project limit', async () => {
    const c = await newTenant(t.app);
    await t.platform.db.sys.exec(`UPDATE organizations SET plan_tier = 'enterprise' WHERE id = $1`, [c.orgId]);
    t.platform.credentials.invalidate();
    const rs = await Promise.all(Array.from({ length: 6 }, () => t.app.inject({ method: 'POST', url: '/v1/projects', headers: c.auth, payload: { name: 'Same Name' } })));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(6).fill(201));
    expect(new Set(rs.map((r) => r.json().data.slug))).toEqual(new Set(['same-name', 'same-name-2', 'same-name-3', 'same-name-4', 'same-name-5', 'same-name-6']));
  });
});

describe('GET /v1/projects', () => {
  it('paginates with offset + limit and has_more; default limit 50, max 100', async () => {
    const c = await newTenant(t.app);
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await createProject(t.app, c, { name: `P${i}` })).id);
    const p1 = (await t.app.inject({ method: 'GET', url: '/v1/projects?limit=2', headers: c.auth })).json();
    expect(p1.pagination).toEqual({ total: 5, limit: 2, offset: 0, has_more: true });
    expect(p1.data.map((p: { id: string }) => p.id)).toEqual([made[4], made[3]]);
    const p3 = (await t.app.inject({ method: 'GET', url: '/v1/projects?limit=2&offset=4', headers: c.auth })).json();
    expect(p3.pagination).toEqual({ total: 5, limit: 2, offset: 4, has_more: false });
    expect(p3.data.map((p: { id: string }) => p.id)).toEqual([made[0]]);
    const past = (await t.app.inject({ method: 'GET', url: '/v1/projects?limit=2&offset=10', headers: c.auth })).json();
    expect(past.pagination).toEqual({ total: 5, limit: 2, offset: 10, has_more: false });
    expect(past.data).toEqual([]);
    const dflt = (await t.app.inject({ method: 'GET', url: '/v1/projects', headers: c.auth })).json();
    expect(dflt.pagination.limit).toBe(50);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/projects?limit=101', headers: c.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/projects?limit=0', headers: c.auth }), 400, 'INVALID_PARAMETER');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/projects?offset=-1', headers: c.auth }), 400, 'INVALID_PARAMETER');
    expect(errorOf(await t.app.inject({ method: 'GET', url: '/v1/projects?status=bogus', headers: c.auth }), 400, 'INVALID_PARAMETER').message)
      .toBe('Query parameter "status" must be one of: "active", "archived", "deleted", "all"');
    // Another organization sees none of them.
    expect((await t.app.inject({ method: 'GET', url: '/v1/projects', headers: a.auth })).json().data.map((p: { id: string }) => p.id)).not.toContain(made[0]);
  });

  it('status filter: active (default), archived, deleted, all', async () => {
    const c = await newTenant(t.app);
    const active = (await createProject(t.app, c)).id;
    const archived = (await createProject(t.app, c)).id;
    const deleted = (await createProject(t.app, c)).id;
    await t.app.inject({ method: 'PUT', url: `/v1/projects/${archived}`, headers: c.auth, payload: { is_active: false } });
    await t.app.inject({ method: 'DELETE', url: `/v1/projects/${deleted}`, headers: c.auth });
    const ids = async (q: string) => (await t.app.inject({ method: 'GET', url: `/v1/projects${q}`, headers: c.auth })).json().data.map((p: { id: string }) => p.id);
    expect(await ids('')).toEqual([active]);
    expect(await ids('?status=active')).toEqual([active]);
    expect(await ids('?status=archived')).toEqual([archived]);
    expect(await ids('?status=deleted')).toEqual([deleted]);
    expect(await ids('?status=all')).toEqual([deleted, archived, active]);
  });

  it('pagination.total of each status stays exact through archive, unarchive, delete and restore (kept counters)', async () => {
    const c = await newTenant(t.app);
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await createProject(t.app, c)).id);
    const put = (id: string, is_active: boolean) => t.app.inject({ method: 'PUT', url: `/v1/projects/${id}`, headers: c.auth, payload: { is_active } });
    await put(made[0], false);
    await put(made[1], false);
    await put(made[1], true);
    await t.app.inject({ method: 'DELETE', url: `/v1/projects/${made[2]}`, headers: c.auth });
    await t.app.inject({ method: 'DELETE', url: `/v1/projects/${made[3]}`, headers: c.auth });
    await put(made[3], true); // a deleted project is restored by unarchiving
    const total = async (q: string) => (await t.app.inject({ method: 'GET', url: `/v1/projects?limit=1${q}`, headers: c.auth })).json().pagination.total;
    const counted = async (where: string) => Number((await t.platform.db.sys.one<{ n: string }>(`SELECT count(*) AS n FROM projects WHERE org_id = $1 AND ${where}`, [c.orgId]))!.n);
    expect([await total(''), await total('&status=archived'), await total('&status=deleted'), await total('&status=all')]).toEqual([3, 1, 1, 5]);
    expect([await counted('is_active'), await counted('NOT is_active AND deleted_at IS NULL'), await counted('deleted_at IS NOT NULL')]).toEqual([3, 1, 1]);
    // Past the last page the total is still answered (no row carries it).
    expect((await t.app.inject({ method: 'GET', url: '/v1/projects?offset=10', headers: c.auth })).json().pagination).toMatchObject({ total: 3, has_more: false });
    // A new organization has no counter row yet: zero, not an error.
    const d = await newTenant(t.app);
    expect((await t.app.inject({ method: 'GET', url: '/v1/projects?status=all', headers: d.auth })).json().pagination.total).toBe(0);
  });
});

describe('GET/PUT/DELETE /v1/projects/{projectId}', () => {
  it('gets, updates fields, clears description with null, archives and unarchives', async () => {
    const p = await createProject(t.app, a, { description: 'keep' });
    const g = await t.app.inject({ method: 'GET', url: `/v1/projects/${p.id}`, headers: a.auth });
    expect(g.json()).toEqual({ success: true, data: p });
    const u = await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { name: 'Renamed', slug: 'renamed-one', visibility: 'internal', settings: { a: 1 } } });
    expect(u.statusCode).toBe(200);
    expect(u.json().data).toMatchObject({ name: 'Renamed', slug: 'renamed-one', visibility: 'internal', settings: { a: 1 }, description: 'keep' });
    const cleared = await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { description: null } });
    expect(cleared.json().data.description).toBeNull();
    events.length = 0;
    const arch = await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { is_active: false } });
    expect(arch.json().data.is_active).toBe(false);
    expect((await t.app.inject({ method: 'GET', url: `/v1/projects/${p.id}`, headers: a.auth })).json().data.is_active).toBe(false);
    const un = await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { is_active: true } });
    expect(un.json().data.is_active).toBe(true);
    await new Promise((res) => setTimeout(res, 10));
    expect(events.filter((e) => e.targetId === p.id).map((e) => e.type)).toEqual(['project.updated', 'project.archived', 'project.updated', 'project.unarchived']);
    const audit = await t.platform.db.sys.query<{ action: string }>(`SELECT action FROM audit_log WHERE org_id = $1 AND target_id = $2 ORDER BY id`, [a.orgId, p.id]);
    expect(audit.map((r) => r.action)).toEqual(expect.arrayContaining(['project.created', 'project.updated', 'project.archived', 'project.unarchived']));
  });

  it('a PUT that changes nothing and a second DELETE write, audit and emit nothing', async () => {
    // jsonb stores an object's keys in its own order (shorter keys first): the repeat below writes them in another.
    const p = await createProject(t.app, a, { description: 'same', settings: { theme: { accent: 'red', a: 1 }, aa: 1, b: 2 } });
    expect(Object.keys(p.settings)).toEqual(['b', 'aa', 'theme']);
    const auditCount = async () => (await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE org_id = $1 AND target_id = $2`, [a.orgId, p.id]))!.n;
    const audits = await auditCount();
    events.length = 0;
    const same = await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { name: ` ${p.name} `, description: 'same', is_active: true, visibility: p.visibility, settings: { theme: { accent: 'red', a: 1 }, aa: 1, b: 2 } } });
    expect(same.statusCode).toBe(200);
    expect(same.json().data).toEqual(p); // updated_at unchanged too
    const d1 = await t.app.inject({ method: 'DELETE', url: `/v1/projects/${p.id}`, headers: a.auth });
    const deleted = (await t.app.inject({ method: 'GET', url: `/v1/projects/${p.id}`, headers: a.auth })).json().data;
    const d2 = await t.app.inject({ method: 'DELETE', url: `/v1/projects/${p.id}`, headers: a.auth });
    expect(d2.json()).toEqual(d1.json());
    expect((await t.app.inject({ method: 'GET', url: `/v1/projects/${p.id}`, headers: a.auth })).json().data).toEqual(deleted);
    await new Promise((res) => setTimeout(res, 10));
    // is_active went from true to false: archived too (a restore's project.unarchived has its pair); once only.
    expect(events.filter((e) => e.targetId === p.id).map((e) => e.type)).toEqual(['project.archived', 'project.deleted']);
    expect(await auditCount()).toBe(audits + 1);
  });

  it('PUT needs at least one field and rejects bad values; 409 on a taken slug', async () => {
    const p = await createProject(t.app, a);
    const q = await createProject(t.app, a);
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: {} }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { visibility: 'secret' } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { created_at: 'x' } }), 400, 'VALIDATION_ERROR');
    expect(errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { slug: 'api' } }), 400, 'VALIDATION_ERROR').message).toContain('RESERVED_SLUG');
    expect(errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { slug: '' } }), 400, 'VALIDATION_ERROR').message).toContain('INVALID_FORMAT');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { slug: q.slug } }), 409, 'PROJECT_SLUG_EXISTS');
    expect((await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { slug: p.slug } })).statusCode).toBe(200);
  });

  it('DELETE soft-deletes: {id, is_active:false}, hidden from listings, data kept, restorable; needs project.update', async () => {
    const p = await createProject(t.app, a);
    const viewer = await memberOf(t.app, a, 'viewer');
    errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/projects/${p.id}`, headers: viewer.auth }), 403, 'PERMISSION_DENIED');
    const d = await t.app.inject({ method: 'DELETE', url: `/v1/projects/${p.id}`, headers: a.auth });
    expect(d.statusCode).toBe(200);
    expect(d.json()).toEqual({ success: true, data: { id: p.id, is_active: false } });
    const list = (await t.app.inject({ method: 'GET', url: '/v1/projects?limit=100', headers: a.auth })).json().data;
    expect(list.map((x: { id: string }) => x.id)).not.toContain(p.id);
    const g = (await t.app.inject({ method: 'GET', url: `/v1/projects/${p.id}`, headers: a.auth })).json().data;
    expect(g).toMatchObject({ id: p.id, is_active: false, name: p.name });
    expect(g.deleted_at).not.toBeNull();
    const restored = await t.app.inject({ method: 'PUT', url: `/v1/projects/${p.id}`, headers: a.auth, payload: { is_active: true } });
    expect(restored.json().data).toMatchObject({ is_active: true, deleted_at: null });
  });

  it('404 for another organization and for random ids; 400 INVALID_ID_FORMAT', async () => {
    const p = await createProject(t.app, a);
    const b = await newTenant(t.app);
    for (const [method, payload] of [['GET', undefined], ['PUT', { name: 'x' }], ['DELETE', undefined]] as const) {
      const other = errorOf(await t.app.inject({ method, url: `/v1/projects/${p.id}`, headers: b.auth, payload }), 404, 'NOT_FOUND');
      const random = errorOf(await t.app.inject({ method, url: `/v1/projects/${RANDOM}`, headers: b.auth, payload }), 404, 'NOT_FOUND');
      expect(other).toEqual(random);
    }
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/projects/not-a-uuid', headers: a.auth }), 400, 'INVALID_ID_FORMAT');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/projects' }), 401, 'AUTH_REQUIRED');
  });
});

describe('OpenAPI', () => {
  it('documents every projects and tasks route', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    for (const path of ['/v1/projects', '/v1/projects/{projectId}', '/v1/projects/{projectId}/members', '/v1/projects/{projectId}/categories',
      '/v1/projects/{projectId}/phases', '/v1/projects/{projectId}/specs', '/v1/projects/{projectId}/task-statuses',
      '/v1/projects/{projectId}/tasks', '/v1/tasks/{taskId}', '/v1/tasks/{taskId}/activity']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/v1/projects'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['status', 'limit', 'offset']));
  });
});
