import type { Fixture } from '../../../test/fixtures.js';
import { uniqueEmail } from '../../../test/helpers.js';

export const accountsFixtures: Record<string, Fixture> = {
  async api_key(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: owner.auth, payload: { name: 'fixture', scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() } });
    return { id: r.json().data.id };
  },
  async member(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/organizations/current/members', headers: owner.auth, payload: { email: uniqueEmail('member'), role: 'member' } });
    return { userId: r.json().data.user_id };
  },
};
