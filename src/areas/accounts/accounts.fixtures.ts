import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

// No imports from test/: this file sits under src/, and the build (rootDir src) must not pull test files in.
type Owner = { auth: { authorization: string } };
type AccountsFixture = (app: FastifyInstance, owner: Owner) => Promise<Record<string, string>>;

export const accountsFixtures: Record<string, AccountsFixture> = {
  async api_key(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: owner.auth, payload: { name: 'fixture', scopes: ['projects:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() } });
    return { id: r.json().data.id };
  },
  async member(app, owner) {
    const r = await app.inject({ method: 'POST', url: '/v1/organizations/current/members', headers: owner.auth, payload: { email: `member-${randomBytes(6).toString('hex')}@example.test`, role: 'member' } });
    return { userId: r.json().data.user_id };
  },
};
