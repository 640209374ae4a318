import { Type } from 'typebox';
import { defineTools, listResult } from './define.js';
import { me } from '../../../areas/accounts/auth.service.js';
import { getCurrentOrganization, listMembers, listMyOrganizations } from '../../../areas/accounts/organizations.service.js';
import { listApiKeys } from '../../../areas/accounts/api-keys.service.js';

// Lives here until the accounts area moves it to src/areas/accounts/accounts.tools.ts (its owner's call).
export const accountsTools = defineTools([
  {
    name: 'me.get', title: 'Who am I', access: 'read', route: 'GET /v1/me',
    description: 'The caller: user, current organization, role, permissions and credential (API key scopes).',
    keywords: ['whoami', 'user', 'identity', 'profile', 'current', 'account', 'permissions'],
    input: Type.Object({}, { additionalProperties: false }),
    run: (ctx) => me(ctx),
  },
  {
    name: 'organizations.list', title: 'My organizations', access: 'read', route: 'GET /v1/organizations',
    description: "List the organizations the caller's user belongs to, with the role in each.",
    keywords: ['orgs', 'tenants', 'workspaces', 'teams'],
    run: async (ctx) => ({ items: (await listMyOrganizations(ctx)).items }),
  },
  {
    name: 'organizations.get_current', title: 'Current organization', access: 'read', route: 'GET /v1/organizations/current',
    description: 'Get the organization the credential is bound to: name, slug, plan, features, settings.',
    keywords: ['org', 'tenant', 'workspace', 'plan', 'features', 'settings'],
    run: (ctx) => getCurrentOrganization(ctx),
  },
  {
    name: 'members.list', title: 'Organization members', access: 'read', route: 'GET /v1/organizations/current/members',
    description: 'List the members of the current organization (user id, e-mail, name, role); paginated with limit and offset.',
    keywords: ['users', 'people', 'team', 'roles'],
    run: async (ctx, a) => {
      const page = { limit: a.limit, offset: a.offset };
      const { items, total } = await listMembers(ctx, page);
      return listResult(items, { total, ...page });
    },
  },
  {
    name: 'api_keys.list', title: 'API keys', access: 'read', route: 'GET /v1/api-keys',
    description: 'List API keys (your own, or all with org.manage_api_keys): name, prefix, scopes, expiry; never the secret.',
    keywords: ['keys', 'tokens', 'credentials', 'scopes'],
    run: async (ctx, a) => {
      const page = { limit: a.limit, offset: a.offset };
      const { items, total } = await listApiKeys(ctx, page);
      return listResult(items, { total, ...page });
    },
  },
]);
