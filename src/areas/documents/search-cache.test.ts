import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SearchCache, searchCache, type SearchCacheEntry } from './search-cache.js';
import * as repo from './documents.repo.js';
import type { DocumentListItemT } from './documents.schemas.js';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { uuidv7 } from '../../core/ids.js';

const entry = (version: number, n = 3): SearchCacheEntry => ({
  version, total: n, ids: Array.from({ length: n }, (_, i) => `id${i}`), ranks: Array(n).fill(0.1), items: [],
});
const item = (id: string, content = '') => ({ id, content }) as DocumentListItemT;

describe('search cache (unit)', () => {
  it('an entry answers only at its own version; a peeked entry replaced meanwhile is judged by its own version', () => {
    const cache = new SearchCache();
    const old = entry(5);
    cache.set('k', old);
    const peeked = cache.peek('k')!;
    cache.set('k', entry(6)); // another request ranked again after a change (version 6) while this one was waiting
    // The statement saw version 6: the newer entry matches it, but the peeked one (version 5) must not answer.
    expect(cache.check('k', peeked, 6)).toBe(false);
    expect(cache.peek('k')!.version).toBe(6); // the newer entry is not dropped for it
    expect(cache.check('k', cache.peek('k')!, 5)).toBe(false);
    expect(cache.peek('k')).toBeUndefined(); // a stale current entry is dropped
  });

  it('keeps list items within a budget, least recently used entries out first', () => {
    const cache = new SearchCache({ maxEntries: 10, maxItems: 4 });
    const a = entry(1);
    const b = entry(1);
    cache.set('a', a);
    cache.set('b', b);
    cache.fill('a', a, 0, [item('id0'), item('id1')]);
    cache.fill('b', b, 1, [item('id1'), undefined]);
    expect(cache.items).toBe(3);
    expect(Object.isFrozen(a.items[0])).toBe(true);
    expect(cache.check('a', a, 1)).toBe(true);
    expect(cache.check('b', b, 1)).toBe(true); // b is now the most recently used, a the least
    cache.fill('b', b, 0, [item('id0'), item('x'), item('id2')]); // position 1 is held already: 2 new items, 5 in all
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('b')).toBe(b);
    expect(cache.items).toBe(3);
    // Items read for an entry that is no longer the key's still answer that request, but are not counted.
    cache.fill('a', a, 2, [item('id2')]);
    expect(a.items[2]).toEqual({ id: 'id2', content: '' });
    expect(cache.items).toBe(3);
  });

  it('an item weighs one more for every 1,100 characters of its content: a large document pushes out many small ones', () => {
    const cache = new SearchCache({ maxEntries: 10, maxItems: 2_000 }); // items up to weight 10 (2,000 / 200 positions) are kept
    const small = entry(1);
    cache.set('small', small);
    cache.fill('small', small, 0, [item('id0'), item('id1'), item('id2', 'x'.repeat(1_099))]);
    expect(cache.items).toBe(3);
    const large = entry(1, 200);
    cache.set('large', large);
    cache.fill('large', large, 0, [item('id0', 'x'.repeat(7_700))]); // weight 8: 11 in all
    expect(cache.items).toBe(11);
    const heavy = 'x'.repeat(10 * 1_100 - 1); // weight 10, the most an item may weigh
    cache.fill('large', large, 1, Array.from({ length: 199 }, (_, i) => item(`id${i + 1}`, heavy))); // 1,990 more: 2,001, over 2,000
    expect(cache.peek('small')).toBeUndefined(); // the least recently used went
    expect(cache.items).toBe(1_998);
  });

  it('an item heavier than maxItems / depth is not kept (its page reads it again), so one entry stays within the bound', () => {
    const cache = new SearchCache({ maxEntries: 10, maxItems: 2_000 });
    const e = entry(1, 3);
    cache.set('k', e);
    cache.fill('k', e, 0, [item('id0', 'x'.repeat(11 * 1_100)), item('id1'), item('id2', 'x'.repeat(10 * 1_100))]);
    expect([e.items[0], e.items[1]?.id, e.items[2]]).toEqual([undefined, 'id1', undefined]);
    expect(cache.items).toBe(1);
  });

  it('keeps at most maxEntries entries', () => {
    const cache = new SearchCache({ maxEntries: 2, maxItems: 100 });
    for (const k of ['a', 'b', 'c']) cache.set(k, entry(1));
    expect([cache.peek('a'), cache.size]).toEqual([undefined, 2]);
  });
});

describe('search cache (database)', () => {
  let t: TestApp;
  let b: Tenant;
  beforeAll(async () => {
    t = await buildTestApp();
    b = await newTenant(t.app);
  });
  afterAll(async () => { await t?.close(); });

  const post = (who: Tenant, payload: object) => t.app.inject({ method: 'POST', url: '/v1/documents', headers: who.auth, payload });
  const search = async (who: Tenant, q: string) => (await t.app.inject({ method: 'GET', url: `/v1/documents?search=${q}&sort_by=title&sort_order=asc`, headers: who.auth })).json();
  async function indexed(who: Tenant, id: string) {
    for (let i = 0; i < 100; i++) {
      if ((await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: who.auth })).json().data.is_indexed) return;
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error('document was not indexed');
  }
  async function tenantWith(titles: string[]) {
    const c = await newTenant(t.app);
    const docs = [];
    for (const title of titles) docs.push((await post(c, { title, content: 'grassland' })).json().data);
    for (const d of docs) await indexed(c, d.id);
    return { c, docs };
  }

  it('a hit does not wait for an in-flight document write and answers what is committed; the write counts once committed', async () => {
    const { c, docs: [one, two] } = await tenantWith(['Okapi one', 'Okapi two']);
    expect((await search(c, 'okapi')).data.items.map((d: { id: string }) => d.id)).toEqual([one.id, two.id]);
    const client = await t.platform.db.app.connect();
    try {
      await client.query(`SELECT set_config('app.org_id', $1, false)`, [c.orgId]);
      await client.query('BEGIN');
      await client.query(`UPDATE documents SET tags = '{striped}' WHERE org_id = $1 AND id = $2`, [c.orgId, one.id]);
      const during = await Promise.race([search(c, 'okapi'), new Promise((r) => setTimeout(() => r('waiting'), 2000))]);
      expect(during).not.toBe('waiting');
      expect((during as { data: { items: Array<{ tags: string[] }> } }).data.items.map((d) => d.tags)).toEqual([[], []]);
      await client.query('COMMIT');
    } finally { client.release(true); } // its app.org_id is not what the pool thinks: do not reuse it
    expect((await search(c, 'okapi')).data.items.map((d: { tags: string[] }) => d.tags)).toEqual([['striped'], []]);
  });

  it('remembered list items follow every change of the documents, re-indexing or not', async () => {
    const { c, docs: [one] } = await tenantWith(['Tapir one', 'Tapir two']);
    const cache = searchCache(t.platform);
    await search(c, 'tapir');
    const held = cache.items;
    expect((await search(c, 'tapir')).data.items).toHaveLength(2);
    expect(cache.items).toBe(held); // the second search read no rows
    await t.app.inject({ method: 'PUT', url: `/v1/documents/${one.id}`, headers: c.auth, payload: { tags: ['shy'], metadata: { k: 1 } } });
    expect((await search(c, 'tapir')).data.items[0]).toMatchObject({ id: one.id, tags: ['shy'], metadata: { k: 1 }, is_indexed: true });
  });

  it('pages of a remembered search are read once each', async () => {
    const { c } = await tenantWith(['Zebu a', 'Zebu b', 'Zebu c']);
    const cache = searchCache(t.platform);
    const page = async (offset: number) => (await t.app.inject({ method: 'GET', url: `/v1/documents?search=zebu&sort_by=title&sort_order=asc&limit=2&offset=${offset}`, headers: c.auth })).json();
    const before = cache.items;
    expect((await page(0)).data.items.map((d: { title: string }) => d.title)).toEqual(['Zebu a', 'Zebu b']);
    expect(cache.items).toBe(before + 2);
    const second = await page(2);
    expect(second.data.items.map((d: { title: string }) => d.title)).toEqual(['Zebu c']);
    expect(second.pagination).toEqual({ total: 3, limit: 2, offset: 2, has_more: false });
    expect(cache.items).toBe(before + 3);
    expect((await page(0)).data.items).toHaveLength(2);
    expect(cache.items).toBe(before + 3);
  });

  it('a hit answers from what its entry held when its statement was sent, not from items stored meanwhile', async () => {
    const { c, docs: [, two] } = await tenantWith(['Gnu a', 'Gnu b']);
    const cache = searchCache(t.platform);
    const page = async (limit: number) => (await t.app.inject({ method: 'GET', url: `/v1/documents?search=gnu&sort_by=title&sort_order=asc&limit=${limit}`, headers: c.auth })).json();
    await page(1); // the entry holds position 0 only
    // While the next hit's statement runs, another request stores an item for position 1 (in the test: a stand-in).
    const original = cache.check.bind(cache);
    const check = vi.spyOn(cache, 'check').mockImplementationOnce((key, e, version) => {
      e.items[1] = item('stored meanwhile');
      return original(key, e, version);
    });
    try {
      expect((await page(2)).data.items.map((d: { id: string }) => d.id)[1]).toBe(two.id);
    } finally { check.mockRestore(); }
  });

  it('documents_search_top ranks only the bound organization\'s documents', async () => {
    const { c, docs: [d] } = await tenantWith(['Qwxzyv marker']);
    const top = (orgId: string) => t.platform.db.tenant(orgId, (sql) => sql.query(`SELECT match_id, total FROM documents_search_top(to_tsquery('simple', 'qwxzyv'), null, null, null, 'relevance', true, 10)`));
    expect(await top(c.orgId)).toEqual([{ match_id: d.id, total: 1 }]);
    expect(await top(b.orgId)).toEqual([]);
    const unbound = await t.platform.db.app.connect();
    try {
      await unbound.query(`SELECT set_config('app.org_id', '', false)`);
      expect((await unbound.query(`SELECT * FROM documents_search_top(to_tsquery('simple', 'qwxzyv'), null, null, null, 'title', false, 10)`)).rows).toEqual([]);
    } finally { unbound.release(true); } // unbound on purpose: do not reuse it
  });

  it('searchTop orders, ranks and counts exactly like the list statement, for every order and with filters', async () => {
    const c = await newTenant(t.app);
    // One transaction: equal created_at and updated_at, and equal ranks, so the id decides between them.
    await t.platform.db.systemTx(async (sql) => {
      for (const [i, title] of ['Ibex', 'ibex', 'Ibex ibex', 'Ibex note', 'Ibex', 'Other ibex'].entries()) {
        await sql.exec(`INSERT INTO documents (org_id, id, kind, title, content, created_by, search, is_indexed)
          VALUES ($1, $2, $3, $4, $5, $6, setweight(to_tsvector('english', $4), 'A') || setweight(to_tsvector('english', $5), 'B'), true)`,
        [c.orgId, uuidv7(), i % 2 ? 'sheet' : 'document', title, i % 3 ? 'ibex herd' : 'mountains', c.userId]);
      }
    });
    for (const kind of [undefined, 'sheet']) {
      for (const sortBy of ['relevance', 'created_at', 'updated_at', 'title'] as const) {
        for (const sortOrder of ['asc', 'desc'] as const) {
          const f: repo.ListFilter = { kind, tsquery: 'ibex:*', queryConfig: 'english', sortBy, sortOrder, limit: 4, offset: 0 };
          const [top, list] = await t.platform.db.tenant(c.orgId, async (sql) => [await repo.searchTop(sql, c.orgId, f, 4), await repo.listDocuments(sql, c.orgId, f)]);
          expect(top, `${kind} ${sortBy} ${sortOrder}`).toEqual(list.map((r) => ({ id: r.id, rank: r.rank, total: r.total })));
        }
      }
    }
  });
});
