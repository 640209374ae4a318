/** REST writes of `content` on a document that has collaborative (CRDT) state. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { buildTestApp, newTenant, type TestApp, type Tenant } from '../../../test/helpers.js';
import { appendUpdate, CONTENT_TEXT, loadState } from './collab.service.js';
import { reconcileCollabContent } from './collab-reconcile.js';

let t: TestApp;
let a: Tenant;
beforeAll(async () => { t = await buildTestApp(); a = await newTenant(t.app); });
afterAll(async () => { await t?.close(); });

const content = async (id: string) => (await t.app.inject({ url: `/v1/documents/${id}`, headers: a.auth })).json().data.content as string;
const put = (id: string, text: string) => t.app.inject({ method: 'PUT', url: `/v1/documents/${id}`, headers: a.auth, payload: { content: text } });
const collaborativeText = async (id: string) => {
  const doc = await loadState(t.platform, a.orgId, id);
  try { return doc.getText(CONTENT_TEXT).toString(); } finally { doc.destroy(); }
};
/** An edit as a room stores it: the document has CRDT state from then on (every document opened once in an editor). */
async function editedLive(id: string): Promise<void> {
  const doc = await loadState(t.platform, a.orgId, id);
  const before = Y.encodeStateVector(doc);
  doc.getText(CONTENT_TEXT).insert(0, '> ');
  await appendUpdate(t.platform, a.orgId, id, Y.encodeStateAsUpdate(doc, before));
}
const age = (id: string) => t.platform.db.sys.exec(`UPDATE document_updates SET created_at = now() - interval '1 minute' WHERE org_id = $1 AND document_id = $2`, [a.orgId, id]);

describe('content PUT on a document with collaborative state', () => {
  it('two PUTs sent at once end as the last committed one, in content and in the collaborative text, also once the write-back job ran', async () => {
    const texts = ['Text of writer ONE.', 'Text of writer TWO.'];
    for (let round = 0; round < 8; round++) {
      const id = (await t.app.inject({ method: 'POST', url: '/v1/documents', headers: a.auth, payload: { title: `Race ${round}`, content: 'Original text.' } })).json().data.id as string;
      await editedLive(id);
      const answers = await Promise.all(texts.map((text) => put(id, text)));
      expect(answers.map((r) => r.statusCode)).toEqual([200, 200]);
      const last = await content(id); // the row lock orders the two: content is the one committed last
      expect(texts).toContain(last);
      expect(await collaborativeText(id)).toBe(last);
      // The write-back job rebuilds content from the stored updates: it must find the same text, not both glued.
      await age(id);
      await reconcileCollabContent(t.platform);
      expect(await content(id)).toBe(last);
    }
  });
});
