import type { Fixture } from '../../../test/fixtures.js';

async function entity(app: Parameters<Fixture>[0], owner: Parameters<Fixture>[1], name = 'Fixture entity') {
  const r = await app.inject({ method: 'POST', url: '/v1/entities', headers: owner.auth, payload: { name, entity_type: 'system' } });
  return r.json().data.id as string;
}

export const syncFixtures: Record<string, Fixture> = {
  async entity(app, owner) { return { id: await entity(app, owner) }; },
  async relationship(app, owner) {
    const [a, b] = [await entity(app, owner, 'A'), await entity(app, owner, 'B')];
    const r = await app.inject({ method: 'POST', url: '/v1/relationships', headers: owner.auth, payload: { source_entity_id: a, target_entity_id: b, relationship_type: 'depends_on' } });
    return { id: r.json().data.id };
  },
  async comment(app, owner) {
    const d = await app.inject({ method: 'POST', url: '/v1/documents', headers: owner.auth, payload: { title: 'Commented' } });
    const r = await app.inject({ method: 'POST', url: '/v1/comments', headers: owner.auth, payload: { target_type: 'document', target_id: d.json().data.id, body: 'Nice' } });
    return { id: r.json().data.id };
  },
};
