import type { Fixture } from '../../../test/fixtures.js';
import { syncFixtures } from '../sync/sync.fixtures.js';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

export const documentsFixtures: Record<string, Fixture> = {
  ...syncFixtures,
  async document(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/documents', headers: owner.auth, payload: { title: 'Fixture document', content: 'fixture' } });
    return { id: r.json().data.id };
  },
  async sheet(app, owner) {
    const p = await app.inject({ method: 'POST', url: '/v1/projects', headers: owner.auth, payload: { name: `Sheets ${Date.now()}${Math.random()}`.slice(0, 60) } });
    const r = await app.inject({ method: 'POST', url: `/v1/projects/${p.json().data.id}/sheets`, headers: owner.auth, payload: { name: 'Fixture sheet' } });
    return { documentId: r.json().data.document.id };
  },
  async document_file(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/documents', headers: owner.auth, payload: { title: 'Fixture file document' } });
    const id = r.json().data.id;
    await app.inject({ method: 'PUT', url: `/v1/documents/${id}/file`, headers: { ...owner.auth, 'content-type': 'application/pdf' }, payload: PDF });
    return { id };
  },
};
