import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newTenant, bearer, errorOf, type TestApp, type Tenant } from '../../../test/helpers.js';
import { MAX_CONTENT_BYTES } from './documents.schemas.js';
import * as repo from './documents.repo.js';
import { readFileSync } from 'node:fs';

// Spec 8 "document save content 10 MB", counted in UTF-8 bytes: 413 PAYLOAD_TOO_LARGE above, on REST and MCP.
// The document routes and POST /v1/mcp carry their own body limit (DOCUMENT_BODY_LIMIT, 22 MiB), above the
// server-wide default of 1 MiB used here.
let t: TestApp;
let a: Tenant;

const MIB = 1024 * 1024;
const TOO_LARGE = { field: 'content', maxBytes: MAX_CONTENT_BYTES, limit: MAX_CONTENT_BYTES };
// Built once each: 10 MB strings are cheap, but not free.
const atLimit = 'a'.repeat(MAX_CONTENT_BYTES);
// One byte over, and carrying the moderation marker: a 413 (not 422) shows the size check runs before the gate.
const overByOne = `x-content-policy-test-violation ${'a'.repeat(MAX_CONTENT_BYTES - 31)}`;
const accents = 'é'.repeat(5_300_000); // 10,600,000 bytes in 5,300,000 characters
const newlines = '\n'.repeat(MAX_CONTENT_BYTES); // its JSON body is about 20 MB

beforeAll(async () => {
  t = await buildTestApp();
  a = await newTenant(t.app, { name: 'doc-limits' });
});
afterAll(async () => { await t?.close(); });

const post = (who: Tenant, payload: object) => t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload });
const put = (who: Tenant, id: string, payload: object) => t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: who.auth, payload });
const count = async (who: Tenant) => (await t.app.inject({ method: 'GET', url: '/v1/documents?limit=1', headers: who.auth })).json().pagination.total as number;
const getDoc = async (who: Tenant, id: string) => (await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: who.auth })).json().data;

function tooLarge(res: Parameters<typeof errorOf>[0]) {
  const e = errorOf(res, 413, 'PAYLOAD_TOO_LARGE');
  expect(e.details).toEqual(TOO_LARGE);
  expect(e.message).toContain('content');
  expect(e.message).toContain(String(MAX_CONTENT_BYTES));
}

describe('document content limit: 10,485,760 UTF-8 bytes', () => {
  it('the strings are what the tests say', () => {
    expect(Buffer.byteLength(atLimit)).toBe(MAX_CONTENT_BYTES);
    expect(Buffer.byteLength(overByOne)).toBe(MAX_CONTENT_BYTES + 1);
    expect(accents.length).toBeLessThan(MAX_CONTENT_BYTES);
    expect(Buffer.byteLength(accents)).toBe(10_600_000);
    expect(JSON.stringify({ content: newlines }).length).toBeGreaterThan(2 * MAX_CONTENT_BYTES);
  });

  it('POST: exactly the limit is 201; one byte more, or multi-byte content over it, is 413 and nothing is written', async () => {
    const c = await newTenant(t.app, { name: 'doc-limits-post' });
    const ok = await post(c, { title: 'at the limit', content: atLimit });
    expect(ok.statusCode, ok.body.slice(0, 300)).toBe(201);
    expect(ok.json().data.content.length).toBe(MAX_CONTENT_BYTES);
    const before = await count(c);
    tooLarge(await post(c, { title: 'one byte over', content: overByOne }));
    tooLarge(await post(c, { title: 'accents', content: accents }));
    expect(await count(c)).toBe(before);
  });

  it('POST: content at the limit that JSON doubles ("\\n" x 10 MiB, a ~20 MB body) fits the 22 MiB body limit', async () => {
    const res = await post(a, { title: 'newlines', content: newlines });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
    expect((await getDoc(a, res.json().data.id)).content).toBe(newlines);
  });

  it('a body over 22 MiB is 413 PAYLOAD_TOO_LARGE with the body limit', async () => {
    const raw = JSON.stringify({ title: 'huge', content: '"'.repeat(11 * MIB) });
    const res = await t.app.inject({ method: 'POST', url: '/v1/documents', headers: { ...a.auth, 'content-type': 'application/json' }, payload: raw });
    expect(errorOf(res, 413, 'PAYLOAD_TOO_LARGE').details).toMatchObject({ maxBytes: 22 * MIB, limit: 22 * MIB });
  });

  it('PUT: the same limit; a refused update leaves the document unchanged', async () => {
    const c = await newTenant(t.app, { name: 'doc-limits-put' });
    const doc = (await post(c, { title: 'to update', content: 'original' })).json().data;
    tooLarge(await put(c, doc.id, { content: overByOne }));
    tooLarge(await put(c, doc.id, { title: 'renamed', content: accents }));
    const after = await getDoc(c, doc.id);
    expect(after).toMatchObject({ title: 'to update', content: 'original', updated_at: doc.updated_at });
    expect(await count(c)).toBe(1);
    const okAscii = await put(c, doc.id, { content: atLimit });
    expect(okAscii.statusCode, okAscii.body.slice(0, 300)).toBe(200);
    const okNewlines = await put(c, doc.id, { content: newlines });
    expect(okNewlines.statusCode, okNewlines.body.slice(0, 300)).toBe(200);
    expect((await getDoc(c, doc.id)).content).toBe(newlines);
  });

  it('MCP documents.create and documents.update answer the same code (from the service)', async () => {
    const c = await newTenant(t.app, { name: 'doc-limits-mcp' });
    const key = await c.apiKey(['mcp:*']);
    const call = async (name: string, args: object) => {
      const res = await t.app.inject({
        method: 'POST', url: '/v1/mcp',
        headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      return res.json().result as { isError?: boolean; structuredContent: Record<string, any> };
    };
    const doc = (await post(c, { title: 'mcp doc', content: 'original' })).json().data;
    for (const r of [await call('documents.create', { title: 'accents', content: accents }), await call('documents.update', { id: doc.id, content: accents })]) {
      expect(r.isError).toBe(true);
      expect(r.structuredContent.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: TOO_LARGE });
    }
    expect(await count(c)).toBe(1);
    expect((await getDoc(c, doc.id)).content).toBe('original');
    // Content over the server-wide 1 MiB default fits: the endpoint has the document routes' body limit.
    const big = await call('documents.create', { title: 'big', content: 'b'.repeat(2 * MIB) });
    expect(big.isError).toBeUndefined();
    expect(await count(c)).toBe(2);
  });
});

// A search vector is at most 1 MB (PostgreSQL's tsvector limit): content whose words would make a larger one is
// indexed on its longest prefix that fits (migration 0065). Its indexing used to fail on every attempt.
describe('search vectors of very large documents', () => {
  // 200,000 distinct words (~1.4 MB of text): their vector would be about 2.5 MB.
  const manyWords = (first: string) => `${first} ${Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}q`).join(' ')}`;

  it('a document of more distinct words than one vector holds is indexed, and its first words are found', async () => {
    const created = await post(a, { title: 'huge glossary', content: manyWords('okapiword') });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    let doc: { is_indexed: boolean } = { is_indexed: false };
    for (let i = 0; i < 150 && !doc.is_indexed; i++) { await new Promise((r) => setTimeout(r, 100)); doc = await getDoc(a, id); }
    expect(doc.is_indexed).toBe(true);
    const found = await t.app.inject({ method: 'GET', url: '/v1/documents?search=okapiword', headers: a.auth });
    expect(found.json().data.items.map((d: { id: string }) => d.id)).toEqual([id]);
  });

  it('the content vector stays under the limit for text, sheets and decks (the values, not the JSON keys)', async () => {
    const sheet = JSON.stringify({ sheets: [{ name: 'S', cells: Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`A${i + 1}`, { v: `w${i.toString(36)}q` }])) }] });
    for (const [kind, content] of [['document', manyWords('okapiword')], ['sheet', sheet]] as const) {
      const r = await t.platform.db.sys.one<{ bytes: number; first: boolean; keys: boolean }>(
        `SELECT pg_column_size(v) AS bytes, v @@ to_tsquery('simple', 'w0q') AS first, v @@ to_tsquery('simple', 'cells') AS keys
           FROM (SELECT app_document_content_vector('simple', $1, $2) AS v) x`, [kind, content]);
      expect(r!.bytes).toBeLessThanOrEqual(900_000);
      expect(r!.bytes).toBeGreaterThan(100_000);
      expect(r!.first).toBe(true);
      expect(r!.keys).toBe(false);
    }
  });

  it('migration 0066 queues again a document whose indexing failed for good, and it becomes searchable', async () => {
    const created = (await post(a, { title: 'zebrastuck', content: 'stuck before the fix' })).json().data;
    for (let i = 0; i < 100 && !(await getDoc(a, created.id)).is_indexed; i++) await new Promise((r) => setTimeout(r, 50));
    // As a document left behind by attempts that failed for good: not indexed, its job failed.
    await t.platform.db.sys.exec(`UPDATE documents SET is_indexed = false, search = NULL WHERE org_id = $1 AND id = $2`, [a.orgId, created.id]);
    await t.platform.db.sys.exec(`UPDATE jobs SET status = 'failed' WHERE org_id = $1 AND dedupe_key = $2`, [a.orgId, created.id]);
    const sqlText = readFileSync(new URL('../../../migrations/0066_documents_index_again.sql', import.meta.url), 'utf8');
    await t.platform.db.sys.exec(sqlText);
    t.platform.jobs.poke();
    let doc = await getDoc(a, created.id);
    for (let i = 0; i < 100 && !doc.is_indexed; i++) { await new Promise((r) => setTimeout(r, 50)); doc = await getDoc(a, created.id); }
    expect(doc.is_indexed).toBe(true);
    const found = await t.app.inject({ method: 'GET', url: '/v1/documents?search=zebrastuck', headers: a.auth });
    expect(found.json().data.items.map((d: { id: string }) => d.id)).toEqual([created.id]);
    const jobs = await t.platform.db.sys.query<{ status: string }>(`SELECT status FROM jobs WHERE org_id = $1 AND dedupe_key = $2 ORDER BY created_at`, [a.orgId, created.id]);
    expect(jobs.map((j) => j.status)).toEqual(['failed', 'done']);
  });
});

describe('document metadata limit: 64 KiB of JSON', () => {
  it('POST and PUT: metadata of exactly 65,536 bytes of JSON is kept; one byte more is 413 naming metadata, nothing written', async () => {
    const c = await newTenant(t.app, { name: 'doc-limits-meta' });
    const meta = (n: number) => ({ k: 'm'.repeat(n - 8) }); // {"k":"..."}: 8 bytes around the value
    expect(Buffer.byteLength(JSON.stringify(meta(65_536)))).toBe(65_536);
    const ok = await post(c, { title: 'meta at the limit', metadata: meta(65_536) });
    expect(ok.statusCode, ok.body.slice(0, 300)).toBe(201);
    const over = { field: 'metadata', maxBytes: 65_536, limit: 65_536 };
    expect(errorOf(await post(c, { title: 'meta over', metadata: meta(65_537) }), 413, 'PAYLOAD_TOO_LARGE').details).toEqual(over);
    expect(errorOf(await put(c, ok.json().data.id, { title: 'renamed', metadata: meta(65_537) }), 413, 'PAYLOAD_TOO_LARGE').details).toEqual(over);
    expect(await getDoc(c, ok.json().data.id)).toMatchObject({ title: 'meta at the limit', metadata: meta(65_536) });
    expect(await count(c)).toBe(1);
  });
});

describe('list items carry the content (spec 2.4), up to 32 MiB of it a page', () => {
  const list = (who: Tenant, url: string) => t.app.inject({ method: 'GET', url, headers: who.auth });
  const PAGE_LIMIT = { field: 'limit', maxBytes: 32 * MIB, bytes: 34 * MIB };

  /**
   * Indexes the tenant's documents now with the index job's own statement, and drops their queued jobs: the job
   * runner is shared with every test file (some queue 10 MiB documents), and these tests are not about it.
   */
  async function indexNow(who: Tenant): Promise<void> {
    await t.platform.db.sys.exec(`DELETE FROM jobs WHERE org_id = $1 AND status = 'pending'`, [who.orgId]);
    const ids = (await t.platform.db.sys.query<{ id: string }>('SELECT id FROM documents WHERE org_id = $1', [who.orgId])).map((r) => r.id);
    await t.platform.db.tenant(who.orgId, async (sql) => { for (const id of ids) await repo.indexDocument(sql, who.orgId, id); });
  }

  it('the plain list, a search and a search page read again from the search cache all carry each item\'s whole content', async () => {
    const b = await newTenant(t.app, { name: 'doc-list-content' });
    const one = (await post(b, { title: 'Capybara notes', content: 'Grass, water and sun.' })).json().data;
    const two = (await post(b, { title: 'Capybara diary', content: 'é'.repeat(300) })).json().data;
    await indexNow(b);
    const contents = (res: Parameters<typeof errorOf>[0]) => Object.fromEntries(res.json().data.items.map((d: { id: string; content: string; excerpt: string }) => [d.id, [d.content, d.excerpt]]));
    const expected = { [one.id]: ['Grass, water and sun.', 'Grass, water and sun.'], [two.id]: ['é'.repeat(300), 'é'.repeat(200)] };
    expect(contents(await list(b, '/v1/documents'))).toEqual(expected);
    expect(contents(await list(b, '/v1/documents?search=capybara'))).toEqual(expected); // ranked now
    expect(contents(await list(b, '/v1/documents?search=capybara'))).toEqual(expected); // from the search cache
    expect(contents(await list(b, '/v1/documents?search=capybara&limit=1&offset=1'))).toEqual({ [one.id]: expected[one.id] }); // the item the cache holds
    expect(contents(await list(b, '/v1/documents?search=capybara&limit=50&offset=190'))).toEqual({}); // past the cache's depth: the list statement
  });

  it('a page whose documents hold more than 32 MiB of content is 400 INVALID_PARAMETER naming limit; fewer per page are listed; a page without limit shrinks', async () => {
    const b = await newTenant(t.app, { name: 'doc-list-heavy' });
    const ids: string[] = [];
    for (const title of ['Hefty one', 'Hefty two']) ids.push((await post(b, { title, content: 'small for now' })).json().data.id);
    await indexNow(b);
    // 17 MiB each (written past the API's 10 MiB limit, as a database restored from elsewhere might hold): two are 34 MiB.
    await t.platform.db.sys.exec(`UPDATE documents SET content = repeat('h', 17 * 1048576) WHERE org_id = $1`, [b.orgId]);
    for (const url of ['/v1/documents?limit=50', '/v1/documents?search=hefty&limit=2', '/v1/documents?search=hefty&sort_by=title&sort_order=asc&offset=0&limit=2']) {
      const e = errorOf(await list(b, url), 400, 'INVALID_PARAMETER');
      expect({ url, details: e.details }).toEqual({ url, details: PAGE_LIMIT });
      expect(e.message).toMatch(/^The documents of this page hold 34 MiB of content, more than one page carries \(32 MiB\): ask for fewer with "limit" \(it is \d+\), or read the largest with GET \/v1\/documents\/\{id\}$/);
    }
    // Without limit, the default page of 50 carries what fits: one here; pagination.limit says so, the next page is at
    // offset + limit (where the one left fits a page of 50), and together the pages list both.
    for (const url of ['/v1/documents', '/v1/documents?search=hefty']) {
      const pages = [await list(b, url), await list(b, `${url}${url.includes('?') ? '&' : '?'}offset=1`)];
      expect(pages.map((r) => [r.statusCode, r.json().pagination])).toEqual([
        [200, { total: 2, limit: 1, offset: 0, has_more: true }], [200, { total: 2, limit: 50, offset: 1, has_more: false }]]);
      expect(pages.flatMap((r) => r.json().data.items.map((d: { id: string; content: string }) => [d.id, d.content.length])).sort())
        .toEqual(ids.map((id) => [id, 17 * MIB]).sort());
    }
    const first = await list(b, '/v1/documents?search=hefty&sort_by=title&sort_order=asc&limit=1');
    expect(first.statusCode).toBe(200);
    expect(first.json().data.items.map((d: { content: string }) => d.content.length)).toEqual([17 * MIB]);
    // A page of it and the next one weighs both (34 MiB again), from the search cache's ranking.
    const both = errorOf(await list(b, '/v1/documents?search=hefty&sort_by=title&sort_order=asc&limit=2'), 400, 'INVALID_PARAMETER');
    expect(both.details).toEqual(PAGE_LIMIT);
    const second = await list(b, '/v1/documents?limit=1&offset=1');
    expect(second.json().data.items.map((d: { content: string }) => d.content.length)).toEqual([17 * MIB]);
    expect(second.json().pagination).toMatchObject({ total: 2, has_more: false });
    // Over MCP, lists without contents (titles and excerpts) are not weighed: both on one page.
    const key = await b.apiKey(['mcp:*']);
    const rpc = async (method: string, params: object) => (await t.app.inject({
      method: 'POST', url: '/v1/mcp', headers: { ...bearer(key), accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, method, params },
    })).json().result;
    expect((await rpc('resources/list', {})).resources.map((r: { name: string }) => r.name).sort()).toEqual(['Hefty one', 'Hefty two']);
    const listed = (await rpc('tools/call', { name: 'documents.list', arguments: {} })).structuredContent.items;
    expect(listed.map((d: { excerpt: string; content?: string }) => [d.excerpt.length, d.content])).toEqual([[200, undefined], [200, undefined]]);
    // A search too, ranked now or from the search cache's ranking.
    for (const args of [{ search: 'hefty', sort_by: 'title', sort_order: 'desc' }, { search: 'hefty', sort_by: 'title', sort_order: 'asc' }]) {
      const found = (await rpc('tools/call', { name: 'documents.search', arguments: args })).structuredContent.items;
      expect(found.map((d: { title: string; content?: string }) => [d.title, d.content]).sort()).toEqual([['Hefty one', undefined], ['Hefty two', undefined]]);
    }
  });
});
