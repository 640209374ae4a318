/** A crash between appending a collaborative update and writing the text back: the reconcile job writes it back. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { appendUpdate, CONTENT_TEXT, loadState, saveContent } from './collab.service.js';
import { reconcileCollabContent } from './collab-reconcile.js';

let t: TestApp;
let a: Tenant;
beforeAll(async () => { t = await buildTestApp(); a = await newTenant(t.app); });
afterAll(async () => { await t?.close(); });

const content = async (id: string) => (await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string;
/** An edit as a room appends it (durable at once), without the debounced write-back a crash would lose. */
async function appendEdit(id: string, at: number, text: string): Promise<void> {
  const doc = await loadState(t.platform, a.orgId, id);
  const before = Y.encodeStateVector(doc);
  doc.getText(CONTENT_TEXT).insert(at, text);
  await appendUpdate(t.platform, a.orgId, id, Y.encodeStateAsUpdate(doc, before));
}
const age = (id: string) => t.platform.db.sys.exec(`UPDATE document_updates SET created_at = now() - interval '1 minute' WHERE org_id = $1 AND document_id = $2`, [a.orgId, id]);
const mine = (ids: string[]) => async () => { await reconcileCollabContent(t.platform); return Promise.all(ids.map(content)); };

describe('collaboration reconcile', () => {
  it('writes back the text of updates that were stored but never written to content; then leaves the document alone', async () => {
    const id = (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'Crashed', content: 'hello' } })).json().data.id as string;
    await appendEdit(id, 5, ' world');
    expect(await content(id)).toBe('hello'); // what REST readers saw after the crash
    await age(id);
    expect(await mine([id])()).toEqual(['hello world']);
    const saved = await t.platform.db.sys.one<{ seq: string }>(`SELECT seq FROM collab_saved WHERE org_id = $1 AND document_id = $2`, [a.orgId, id]);
    const last = await t.platform.db.sys.one<{ seq: string }>(`SELECT max(seq) AS seq FROM document_updates WHERE org_id = $1 AND document_id = $2`, [a.orgId, id]);
    expect(saved!.seq).toBe(last!.seq);
    // Written back: the next run does not look at it again.
    const again = await t.platform.db.sys.one<{ n: number }>(`SELECT count(*)::int AS n FROM document_updates u JOIN collab_saved c USING (org_id, document_id)
      WHERE u.org_id = $1 AND u.document_id = $2 AND u.seq > c.seq`, [a.orgId, id]);
    expect(again!.n).toBe(0);
  });

  it('waits while updates are recent (their room may still write them back)', async () => {
    const id = (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'Recent', content: 'abc' } })).json().data.id as string;
    await appendEdit(id, 3, 'def');
    await reconcileCollabContent(t.platform);
    expect(await content(id)).toBe('abc');
  });

  it('a text rebuilt from older updates does not overwrite one a room saved from newer updates', async () => {
    const id = (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: 'Newer', content: 'one' } })).json().data.id as string;
    await appendEdit(id, 3, ' two');
    const through = await t.platform.db.sys.one<{ seq: string }>(`SELECT max(seq) AS seq FROM document_updates WHERE org_id = $1 AND document_id = $2`, [a.orgId, id]);
    await appendEdit(id, 7, ' three');
    await saveContent(t.platform, a.orgId, id, 'one two three');
    await saveContent(t.platform, a.orgId, id, 'one two', Number(through!.seq));
    expect(await content(id)).toBe('one two three');
  });
});
