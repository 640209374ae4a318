import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchCache, SEARCH_CACHE_DEPTH } from './search-cache.js';
import { documentsVersion, indexDocument } from './documents.repo.js';
import { buildTestApp, newTenant, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { uuidv7 } from '../../core/ids.js';

let t: TestApp;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app);
  b = await newTenant(t.app);
});
afterAll(async () => { await t?.close(); });

const post = (who: Tenant, payload: unknown) => t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload: payload as object });
const get = (who: Tenant, url: string) => t.app.inject({ method: 'GET', url, headers: who.auth });

/** Waits until the background index job has marked the document indexed. */
async function indexed(who: Tenant, id: string) {
  for (let i = 0; i < 100; i++) {
    const r = await get(who, `/v1/documents/${id}`);
    if (r.json().data.is_indexed) return r.json().data;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('document was not indexed');
}

describe('document library', () => {
  it('creates with defaults, not indexed yet, then indexed by the job', async () => {
    const r = await post(a, { title: 'Quarterly report', content: 'Revenue grew strongly.' });
    expect(r.statusCode).toBe(201);
    const d = r.json().data;
    expect(d).toMatchObject({ title: 'Quarterly report', content_type: 'markdown', is_indexed: false, indexed_at: null, org_id: a.orgId,
      created_by: a.userId, folder_id: null, parent_id: null, project_id: null, file_url: null, file_size: null, tags: [], metadata: {}, deleted_at: null });
    const after = await indexed(a, d.id);
    expect(after.indexed_at).toEqual(expect.any(String));
  });

  it('validates the body', async () => {
    errorOf(await post(a, {}), 400, 'VALIDATION_ERROR');
    errorOf(await post(a, { title: '   ' }), 400, 'VALIDATION_ERROR');
    errorOf(await post(a, { title: 'x', content_type: 'html' }), 400, 'VALIDATION_ERROR');
    errorOf(await post(a, { title: 'x', id: uuidv7() }), 400, 'VALIDATION_ERROR');
    errorOf(await post(a, { title: 'x', is_indexed: true }), 400, 'VALIDATION_ERROR');
    errorOf(await post(a, { title: 'x', project_id: 'nope' }), 400, 'INVALID_ID_FORMAT');
  });

  it('refuses the NUL character with 400 VALIDATION_ERROR (not a 500 database error)', async () => {
    expect(errorOf(await post(a, { title: 'x', content: 'a\u0000b' }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'content' });
    expect(errorOf(await post(a, { title: 'n\u0000l' }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'title' });
    expect(errorOf(await post(a, { title: 'x', tags: ['a\u0000'] }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'tags[0]' });
    expect(errorOf(await post(a, { title: 'x', metadata: { k: ['\u0000'] } }), 400, 'VALIDATION_ERROR').details).toMatchObject({ field: 'metadata.k[0]' });
    const id = (await post(a, { title: 'clean' })).json().data.id;
    const put = (payload: object) => t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload });
    errorOf(await put({ content: '\u0000' }), 400, 'VALIDATION_ERROR');
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: 'Nul home' } })).json().data.id;
    errorOf(await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: a.auth, payload: { name: 'a\u0000' } }), 400, 'VALIDATION_ERROR');
    expect((await get(a, `/v1/documents/${id}`)).json().data.content).toBe('');
  });

  it('404 for an unknown project or parent, and for another organization\'s parent', async () => {
    errorOf(await post(a, { title: 'x', project_id: uuidv7() }), 404, 'NOT_FOUND');
    errorOf(await post(a, { title: 'x', parent_id: uuidv7() }), 404, 'NOT_FOUND');
    const foreign = (await post(b, { title: 'b folder' })).json().data.id;
    errorOf(await post(a, { title: 'x', parent_id: foreign }), 404, 'NOT_FOUND');
  });

  it('accepts a project of the organization and filters by project and folder', async () => {
    const pr = await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: `Docs project ${uuidv7().slice(-6)}` } });
    expect(pr.statusCode).toBe(201);
    const projectId = pr.json().data.id;
    const folder = (await post(a, { title: 'Folder', project_id: projectId })).json().data;
    const child = (await post(a, { title: 'Child', parent_id: folder.id, tags: ['x', 'y'], metadata: { k: 1 }, content_type: 'plain' })).json().data;
    expect(child).toMatchObject({ folder_id: folder.id, parent_id: folder.id, tags: ['x', 'y'], metadata: { k: 1 }, content_type: 'plain' });
    const byProject = (await get(a, `/v1/documents?project_id=${projectId}`)).json();
    expect(byProject.data.items.map((d: { id: string }) => d.id)).toEqual([folder.id]);
    expect(byProject.data.pagination).toEqual({ total: 1, limit: 50, offset: 0, has_more: false });
    expect(byProject.pagination).toEqual(byProject.data.pagination);
    const byParent = (await get(a, `/v1/documents?parent_id=${folder.id}`)).json();
    expect(byParent.data.items.map((d: { id: string }) => d.id)).toEqual([child.id]);
    expect(byParent.data.items[0].content).toBe(child.content); // spec 2.4: list items are documents, content included
    // A folder cannot move under its own child.
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${folder.id}`, headers: a.auth, payload: { parent_id: child.id } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${folder.id}`, headers: a.auth, payload: { parent_id: folder.id } }), 400, 'VALIDATION_ERROR');
    // Deleting the folder moves the child to the top level: a change of the child, so its updated_at moves too.
    const before = (await get(a, `/v1/documents/${child.id}`)).json().data.updated_at;
    await t.app.inject({ method: 'DELETE', url: `/v1/documents/${folder.id}`, headers: a.auth });
    const moved = (await get(a, `/v1/documents/${child.id}`)).json().data;
    expect(moved).toMatchObject({ parent_id: null, folder_id: null });
    expect(Date.parse(moved.updated_at)).toBeGreaterThan(Date.parse(before));
  });

  it('concurrent folder moves never make a cycle: of A under B, B under C and C under A sent together, one is 400', async () => {
    for (let round = 0; round < 8; round++) {
      const [x, y, z] = await Promise.all(['A', 'B', 'C'].map(async (title) => (await post(a, { title: `${title} ${round}` })).json().data.id as string));
      const move = (id: string, parent: string) => t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { parent_id: parent } });
      const statuses = (await Promise.all([move(x, y), move(y, z), move(z, x)])).map((r) => r.statusCode).sort();
      expect({ round, statuses }).toEqual({ round, statuses: [200, 200, 400] });
      const parents = await t.platform.db.sys.query<{ id: string; parent_id: string | null }>('SELECT id, parent_id FROM documents WHERE org_id = $1 AND id = ANY($2)', [a.orgId, [x, y, z]]);
      expect(parents.filter((d) => d.parent_id === null)).toHaveLength(1); // a chain under one top-level document
    }
  });

  it('a document and an entity keep a project deleted since; a PUT repeating it is accepted, filing under it is 409 PROJECT_ARCHIVED', async () => {
    const projectId = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: `Doomed ${uuidv7().slice(-6)}` } })).json().data.id;
    const doc = (await post(a, { title: 'Kept', project_id: projectId })).json().data;
    const loose = (await post(a, { title: 'Loose' })).json().data;
    const entity = (await t.app.inject({ method: 'POST', url: '/v1/entities', headers: a.auth, payload: { name: 'Kept entity', entity_type: 'thing', project_id: projectId } })).json().data;
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/projects/${projectId}`, headers: a.auth })).statusCode).toBe(200);
    const put = (url: string, payload: object) => t.app.inject({ method: 'PUT', url, headers: a.auth, payload });
    expect((await put(`/v1/documents/${doc.id}`, { title: 'Kept, renamed', project_id: projectId })).json().data).toMatchObject({ title: 'Kept, renamed', project_id: projectId });
    expect((await put(`/v1/entities/${entity.id}`, { name: 'Renamed entity', project_id: projectId })).json().data).toMatchObject({ name: 'Renamed entity', project_id: projectId });
    expect(errorOf(await put(`/v1/documents/${loose.id}`, { project_id: projectId }), 409, 'CONFLICT').details).toEqual({ code: 'PROJECT_ARCHIVED' });
    expect(errorOf(await post(a, { title: 'New', project_id: projectId }), 409, 'CONFLICT').details).toEqual({ code: 'PROJECT_ARCHIVED' });
    expect(errorOf(await post(a, { title: 'New', project_id: uuidv7() }), 404, 'NOT_FOUND').details).toEqual({ field: 'project_id' });
    expect((await get(a, `/v1/documents?project_id=${projectId}`)).json().data.items.map((d: { id: string }) => d.id)).toEqual([doc.id]);
  });

  it('nothing new is filed under an archived project (documents, sheets, decks, entities: 409 PROJECT_ARCHIVED); its documents stay writable', async () => {
    const projectId = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: a.auth, payload: { name: `Archived ${uuidv7().slice(-6)}` } })).json().data.id;
    const doc = (await post(a, { title: 'Before the archive', project_id: projectId })).json().data;
    expect((await t.app.inject({ method: 'PUT', url: `/v1/projects/${projectId}`, headers: a.auth, payload: { is_active: false } })).statusCode).toBe(200);
    const archived = (r: { statusCode: number; json(): { error?: { code: string; details?: unknown } } }) => [r.statusCode, r.json().error?.code, r.json().error?.details];
    const want = [409, 'CONFLICT', { code: 'PROJECT_ARCHIVED' }];
    expect(archived(await post(a, { title: 'After', project_id: projectId }))).toEqual(want);
    expect(archived(await t.app.inject({ method: 'POST', url: `/v1/projects/${projectId}/sheets`, headers: a.auth, payload: { name: 'Grid' } }))).toEqual(want);
    expect(archived(await t.app.inject({ method: 'POST', url: `/v1/projects/${projectId}/slides`, headers: a.auth, payload: { name: 'Deck' } }))).toEqual(want);
    expect(archived(await t.app.inject({ method: 'POST', url: '/v1/entities', headers: a.auth, payload: { name: 'E', entity_type: 'thing', project_id: projectId } }))).toEqual(want);
    expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${doc.id}`, headers: a.auth, payload: { content: 'still writable' } })).statusCode).toBe(200);
  });

  it('paginates with limit/offset and sorts', async () => {
    const c = await newTenant(t.app);
    for (const title of ['bravo', 'alpha', 'charlie']) await post(c, { title });
    const p1 = (await get(c, '/v1/documents?limit=2&sort_by=title&sort_order=asc')).json();
    expect(p1.data.items.map((d: { title: string }) => d.title)).toEqual(['alpha', 'bravo']);
    expect(p1.pagination).toEqual({ total: 3, limit: 2, offset: 0, has_more: true });
    const p2 = (await get(c, '/v1/documents?limit=2&offset=2&sort_by=title&sort_order=asc')).json();
    expect(p2.data.items.map((d: { title: string }) => d.title)).toEqual(['charlie']);
    expect(p2.pagination.has_more).toBe(false);
    const beyond = (await get(c, '/v1/documents?limit=2&offset=10')).json();
    expect(beyond.data.items).toEqual([]);
    expect(beyond.pagination.total).toBe(3);
    errorOf(await get(c, '/v1/documents?limit=101'), 400, 'INVALID_PARAMETER');
    errorOf(await get(c, '/v1/documents?sort_by=size'), 400, 'INVALID_PARAMETER');
    errorOf(await get(c, '/v1/documents?sort_by=relevance'), 400, 'INVALID_PARAMETER');
    errorOf(await get(c, `/v1/documents?search=${'a'.repeat(201)}`), 400, 'INVALID_PARAMETER');
  });

  it('searches indexed documents with ranking, stemming and title prefixes', async () => {
    const c = await newTenant(t.app);
    const inTitle = (await post(c, { title: 'Kubernetes deployment guide', content: 'How we ship.' })).json().data;
    const inBody = (await post(c, { title: 'Notes', content: 'We discussed kubernetes upgrades and deployments.' })).json().data;
    const other = (await post(c, { title: 'Lunch menu', content: 'Pasta.' })).json().data;
    for (const d of [inTitle, inBody, other]) await indexed(c, d.id);
    const r = (await get(c, '/v1/documents?search=kubernetes')).json().data;
    expect(r.items.map((d: { id: string }) => d.id)).toEqual([inTitle.id, inBody.id]);
    expect(r.items[0].rank).toBeGreaterThan(r.items[1].rank);
    // Stemming: "deploying" finds "deployment"/"deployments".
    expect((await get(c, '/v1/documents?search=deploying')).json().data.items).toHaveLength(2);
    // Prefix of the last word while typing.
    expect((await get(c, '/v1/documents?search=kuber')).json().data.items).toHaveLength(2);
    expect((await get(c, '/v1/documents?search=lunch%20me')).json().data.items.map((d: { id: string }) => d.id)).toEqual([other.id]);
    // Operators in the text are plain characters; no words → nothing.
    expect((await get(c, '/v1/documents?search=%21%26%7C')).json().data.items).toEqual([]);
    // Another organization does not see them.
    expect((await get(b, '/v1/documents?search=kubernetes')).json().data.items).toEqual([]);
  });

  it("a sheet or deck is found by its cells' and slides' text, not by the words of its JSON model", async () => {
    const c = await newTenant(t.app);
    const project = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: c.auth, payload: { name: 'Model words' } })).json().data.id;
    const sheet = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/sheets`, headers: c.auth, payload: { name: 'Budget' } })).json().data.document.id;
    const deck = (await t.app.inject({ method: 'POST', url: `/v1/projects/${project}/slides`, headers: c.auth, payload: { name: 'Pitch' } })).json().data.document.id;
    const put = (id: string, content: unknown) => t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: c.auth, payload: { content: JSON.stringify(content) } });
    expect((await put(sheet, { sheets: [{ name: 'Quarterly', cells: { A1: { v: 'zucchini' }, A2: { v: 1234 } } }] })).statusCode).toBe(200);
    expect((await put(deck, { slides: [{ id: 's1', title: 'Marmalade', body: 'orchard' }] })).statusCode).toBe(200);
    for (const id of [sheet, deck]) await indexed(c, id);
    const found = async (q: string) => (await get(c, `/v1/documents?search=${q}`)).json().data.items.map((d: { id: string }) => d.id);
    expect(await found('zucchini')).toEqual([sheet]);
    expect(await found('quarterly')).toEqual([sheet]);
    expect(await found('1234')).toEqual([sheet]);
    expect(await found('marmalade')).toEqual([deck]);
    expect(await found('orchard')).toEqual([deck]);
    for (const key of ['cells', 'sheets', 'slides', 'body']) expect(await found(key), key).toEqual([]);
    // A deck whose content is not JSON (stored before decks were checked) is indexed as text instead of failing.
    await t.platform.db.sys.exec(`UPDATE documents SET content = 'broken {"slides": quince' WHERE id = $1`, [deck]);
    expect(await t.platform.db.tenant(c.orgId, (sql) => indexDocument(sql, c.orgId, deck))).toBe(1);
    expect(await found('quince')).toEqual([deck]);
  });

  it('search finds text the parser keeps whole: hyphenated numbers, e-mail addresses, versions; quotes and operators are text', async () => {
    const c = await newTenant(t.app);
    const marker = `marker-${Date.now()}`;
    const a = (await post(c, { title: 'Title-77 report', content: `Some text with ${marker} inside. Ticket ABC-123, mail ada@example.com, release v1.2.3.` })).json().data;
    const other = (await post(c, { title: "Ada's notes", content: 'It\'s "quoted" \\ text with marker and 123.' })).json().data;
    for (const d of [a, other]) await indexed(c, d.id);
    const ids = async (q: string) => (await get(c, `/v1/documents?search=${encodeURIComponent(q)}`)).json().data.items.map((d: { id: string }) => d.id);
    for (const q of [marker, marker.slice(0, -4), 'ABC-123', 'abc-123', 'ada@example.com', 'v1.2.3', 'Title-77', `text ${marker}`]) {
      expect(await ids(q), q).toEqual([a.id]);
    }
    expect(await ids("Ada's notes")).toEqual([other.id]);
    // The same words written apart are found too: "self-driving" finds "self driving", "abc-123" finds "abc 123".
    const apart = (await post(c, { title: 'Spaced', content: 'Notes on self driving cars, well known issue abc 123.' })).json().data;
    await indexed(c, apart.id);
    for (const q of ['self-driving', 'well-known', 'self-driv']) expect(await ids(q), q).toEqual([apart.id]);
    for (const q of ['abc-123', 'ABC-123']) expect((await ids(q)).sort(), q).toEqual([a.id, apart.id].sort());
    for (const q of ["it's 'quoted", 'a\\b & c | !d <-> e:*', "''", '\\']) expect((await get(c, `/v1/documents?search=${encodeURIComponent(q)}`)).statusCode, q).toBe(200);
  });

  it('search folds case in every script, whatever the database locale (the embedded cluster is C): Привет, Élan, Über, Καλημέρα', async () => {
    const c = await newTenant(t.app);
    const d = (await post(c, { title: 'Привет мир', content: 'Élan vital. Über alles. Καλημέρα κόσμε.', metadata: { language: 'xx' } })).json().data;
    const sheetProject = (await t.app.inject({ method: 'POST', url: '/v1/projects', headers: c.auth, payload: { name: 'Unicode sheets' } })).json().data.id;
    const sheet = (await t.app.inject({ method: 'POST', url: `/v1/projects/${sheetProject}/sheets`, headers: c.auth, payload: { name: 'Tabelle' } })).json().data.document;
    expect((await t.app.inject({ method: 'PUT', url: `/v1/documents/${sheet.id}`, headers: c.auth,
      payload: { content: JSON.stringify({ sheets: [{ name: 'S', cells: { A1: { v: 'Ärger' } } }] }) } })).statusCode).toBe(200);
    await indexed(c, d.id);
    await indexed(c, sheet.id);
    const ids = async (q: string) => (await get(c, `/v1/documents?search=${encodeURIComponent(q)}`)).json().data.items.map((x: { id: string }) => x.id);
    for (const q of ['привет', 'ПРИВЕТ', 'élan', 'ÉLAN', 'über', 'καλημέρα', 'Καλη']) expect(await ids(q), q).toEqual([d.id]);
    for (const q of ['ärger', 'ÄRGER']) expect(await ids(q), q).toEqual([sheet.id]);
  });

  it('search pages, sorts and counts the matches, with the list filters applied', async () => {
    const c = await newTenant(t.app);
    const folder = (await post(c, { title: 'Folder' })).json().data;
    const titles = ['Delta walrus', 'alpha walrus', 'Charlie walrus', 'bravo walrus', 'Echo walrus'];
    const docs = [];
    for (const title of titles) docs.push((await post(c, { title, content: 'walrus facts', ...(title.startsWith('E') ? {} : { parent_id: folder.id }) })).json().data);
    docs.push((await post(c, { title: 'Unrelated', content: 'seals', parent_id: folder.id })).json().data);
    for (const d of docs) await indexed(c, d.id);
    const p1 = (await get(c, '/v1/documents?search=walrus&sort_by=title&sort_order=asc&limit=2')).json();
    expect(p1.data.items.map((d: { title: string }) => d.title)).toEqual(['alpha walrus', 'bravo walrus']);
    expect(p1.pagination).toEqual({ total: 5, limit: 2, offset: 0, has_more: true });
    const p3 = (await get(c, '/v1/documents?search=walrus&sort_by=title&sort_order=asc&limit=2&offset=4')).json();
    expect(p3.data.items.map((d: { title: string }) => d.title)).toEqual(['Echo walrus']);
    expect(p3.pagination).toEqual({ total: 5, limit: 2, offset: 4, has_more: false });
    // Past the last page: no rows, the total still right.
    expect((await get(c, '/v1/documents?search=walrus&offset=10')).json().pagination).toMatchObject({ total: 5, has_more: false });
    const newest = (await get(c, '/v1/documents?search=walrus&sort_by=created_at&sort_order=desc')).json().data.items;
    expect(newest.map((d: { title: string }) => d.title)).toEqual([...titles].reverse());
    const inFolder = (await get(c, `/v1/documents?search=walrus&parent_id=${folder.id}`)).json();
    expect(inFolder.pagination.total).toBe(4);
    expect(inFolder.data.items.map((d: { title: string }) => d.title)).not.toContain('Echo walrus');
  });

  it('a repeated search comes from the search cache, which never outlives a change of the documents', async () => {
    const c = await newTenant(t.app);
    const one = (await post(c, { title: 'Narwhal one', content: 'tusks' })).json().data;
    const two = (await post(c, { title: 'Narwhal two', content: 'tusks' })).json().data;
    for (const d of [one, two]) await indexed(c, d.id);
    const cache = searchCache(t.platform);
    const ids = async () => (await get(c, '/v1/documents?search=narwhal&sort_by=title&sort_order=asc')).json().data.items.map((d: { id: string }) => d.id);
    expect(await ids()).toEqual([one.id, two.id]);
    const before = cache.size;
    expect(await ids()).toEqual([one.id, two.id]);
    expect(cache.size).toBe(before); // answered from the entry made by the first search
    // A change of the documents changes their version: the entry is not used again.
    await t.app.inject({ method: 'DELETE', url: `/v1/documents/${two.id}`, headers: c.auth });
    expect(await ids()).toEqual([one.id]);
    const three = (await post(c, { title: 'Narwhal three', content: 'tusks' })).json().data;
    await indexed(c, three.id);
    expect(await ids()).toEqual([one.id, three.id]);
    await t.app.inject({ method: 'PUT', url: `/v1/documents/${one.id}`, headers: c.auth, payload: { title: 'Walrus one' } });
    await indexed(c, one.id);
    expect(await ids()).toEqual([three.id]);
    // Pages beyond the cached depth are ranked directly.
    expect((await get(c, `/v1/documents?search=narwhal&offset=${SEARCH_CACHE_DEPTH}&limit=10`)).json().pagination).toMatchObject({ total: 1, has_more: false });
  });

  it('the documents version waits for an in-flight document write, then counts it', async () => {
    const c = await newTenant(t.app);
    const version = () => t.platform.db.tenant(c.orgId, (sql) => documentsVersion(sql, c.orgId));
    const before = await version();
    const client = await t.platform.db.app.connect();
    try {
      await client.query(`SELECT set_config('app.org_id', $1, false)`, [c.orgId]);
      await client.query('BEGIN');
      await client.query(`INSERT INTO documents (org_id, id, title, content, created_by) VALUES ($1, $2, 'open', '', $3)`, [c.orgId, uuidv7(), c.userId]);
      const waiting = version();
      expect(await Promise.race([waiting, new Promise((r) => setTimeout(() => r('waiting'), 300))])).toBe('waiting');
      await client.query('COMMIT');
      expect(await waiting).toBeGreaterThan(before);
    } finally { client.release(); }
  });

  it('search matches come from a definer function that still filters by the bound organization', async () => {
    const c = await newTenant(t.app);
    const d = (await post(c, { title: 'Zyxwvut quarterly', content: 'private' })).json().data;
    await indexed(c, d.id);
    // The function bypasses the policy by design (so the GIN index is usable); its own filter must hold.
    const own = await t.platform.db.tenant(c.orgId, (sql) => sql.query(`SELECT match_id FROM documents_search_candidates(to_tsquery('simple', 'zyxwvut'), null, null, null)`));
    const other = await t.platform.db.tenant(b.orgId, (sql) => sql.query(`SELECT match_id FROM documents_search_candidates(to_tsquery('simple', 'zyxwvut'), null, null, null)`));
    expect(own).toEqual([{ match_id: d.id }]);
    expect(other).toEqual([]);
    expect((await get(b, '/v1/documents?search=zyxwvut')).json().pagination.total).toBe(0);
  });

  it('searches other languages with metadata.language and ?language', async () => {
    const c = await newTenant(t.app);
    const de = (await post(c, { title: 'Häuser', content: 'Die Häuser am See', metadata: { language: 'de' } })).json().data;
    await indexed(c, de.id);
    expect((await get(c, '/v1/documents?search=Haus&language=de')).json().data.items.map((d: { id: string }) => d.id)).toEqual([de.id]);
    expect((await get(c, '/v1/documents?search=H%C3%A4usern&language=de-DE')).json().data.items).toHaveLength(1);
    // Parsed as English the inflected word does not meet the German stem.
    expect((await get(c, '/v1/documents?search=H%C3%A4usern')).json().data.items).toHaveLength(0);
  });

  it('only indexed documents are found; content changes re-index', async () => {
    const c = await newTenant(t.app);
    const d = (await post(c, { title: 'Alpha', content: 'zebra' })).json().data;
    await indexed(c, d.id);
    expect((await get(c, '/v1/documents?search=zebra')).json().data.items).toHaveLength(1);
    const u = await t.app.inject({ method: 'PUT', url: `/v1/documents/${d.id}`, headers: c.auth, payload: { content: 'giraffe' } });
    expect(u.statusCode).toBe(200);
    expect(u.json().data).toMatchObject({ content: 'giraffe', is_indexed: false, title: 'Alpha' });
    await indexed(c, d.id);
    expect((await get(c, '/v1/documents?search=giraffe')).json().data.items).toHaveLength(1);
    expect((await get(c, '/v1/documents?search=zebra')).json().data.items).toHaveLength(0);
    // Tag-only change does not re-index.
    const tags = await t.app.inject({ method: 'PUT', url: `/v1/documents/${d.id}`, headers: c.auth, payload: { tags: ['t'] } });
    expect(tags.json().data).toMatchObject({ is_indexed: true, tags: ['t'] });
  });

  it('gets, updates and deletes permanently with audit rows', async () => {
    const d = (await post(a, { title: 'To delete' })).json().data;
    errorOf(await get(b, `/v1/documents/${d.id}`), 404, 'NOT_FOUND');
    errorOf(await get(a, `/v1/documents/not-a-uuid`), 400, 'INVALID_ID_FORMAT');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${d.id}`, headers: b.auth, payload: { title: 'x' } }), 404, 'NOT_FOUND');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${d.id}`, headers: a.auth, payload: { created_at: 'x' } }), 400, 'VALIDATION_ERROR');
    errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/documents/${d.id}`, headers: b.auth }), 404, 'NOT_FOUND');
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/documents/${d.id}`, headers: a.auth });
    expect(del.statusCode).toBe(200);
    expect(del.json().data).toEqual({ id: d.id, deleted: true });
    errorOf(await get(a, `/v1/documents/${d.id}`), 404, 'NOT_FOUND');
    errorOf(await t.app.inject({ method: 'DELETE', url: `/v1/documents/${d.id}`, headers: a.auth }), 404, 'NOT_FOUND');
    const rows = await t.platform.db.sys.query<{ action: string }>(`SELECT action FROM audit_log WHERE org_id = $1 AND target_id = $2 ORDER BY id`, [a.orgId, d.id]);
    expect(rows.map((r) => r.action)).toEqual(['document.created', 'document.deleted']);
  });

  it('refuses policy-violating content with 422 and writes nothing', async () => {
    const c = await newTenant(t.app);
    const r = await post(c, { title: 'ok', content: 'some x-content-policy-test-violation here' });
    errorOf(r, 422, 'CONTENT_POLICY_VIOLATION');
    expect((await get(c, '/v1/documents')).json().pagination.total).toBe(0);
    const d = (await post(c, { title: 'fine' })).json().data;
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${d.id}`, headers: c.auth, payload: { title: 'X-Content-Policy-Test-Violation' } }), 422, 'CONTENT_POLICY_VIOLATION');
    expect((await get(c, `/v1/documents/${d.id}`)).json().data.title).toBe('fine');
    // metadata is caller text stored and shown as given: its strings pass the gate too, at any depth.
    errorOf(await post(c, { title: 'ok', metadata: { note: { deep: ['x-content-policy-test-violation'] } } }), 422, 'CONTENT_POLICY_VIOLATION');
    errorOf(await t.app.inject({ method: 'PUT', url: `/v1/documents/${d.id}`, headers: c.auth, payload: { metadata: { note: 'x-content-policy-test-violation' } } }), 422, 'CONTENT_POLICY_VIOLATION');
    expect((await get(c, '/v1/documents')).json().pagination.total).toBe(1);
    expect((await get(c, `/v1/documents/${d.id}`)).json().data.metadata).toEqual({});
  });

  it('enforces scopes, permissions and the feature', async () => {
    const readKey = await a.apiKey(['documents:read']);
    const ro = { authorization: `Bearer ${readKey}` };
    expect((await t.app.inject({ method: 'GET', url: '/v1/documents', headers: ro })).statusCode).toBe(200);
    errorOf(await t.app.inject({ method: 'POST', url: '/v1/documents', headers: ro, payload: { title: 'x' } }), 403, 'FORBIDDEN');
    const otherKey = await a.apiKey(['projects:read']);
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/documents', headers: { authorization: `Bearer ${otherKey}` } }), 403, 'FORBIDDEN');
    errorOf(await t.app.inject({ method: 'GET', url: '/v1/documents' }), 401, 'AUTH_REQUIRED');
    const c = await newTenant(t.app);
    await t.platform.db.sys.exec(`UPDATE organizations SET features = array_remove(features, 'documents') WHERE id = $1`, [c.orgId]);
    t.platform.credentials.invalidate();
    errorOf(await get(c, '/v1/documents'), 403, 'FEATURE_DISABLED');
  });
});
