import type { App } from '../src/app.js';
import type { Tenant } from './helpers.js';
import { accountsFixtures } from '../src/areas/accounts/accounts.fixtures.js';
import { projectsFixtures } from '../src/areas/projects/projects.fixtures.js';
import { documentsFixtures } from '../src/areas/documents/documents.fixtures.js';
import { workspaceFixtures } from '../src/areas/workspace/workspace.fixtures.js';

/**
 * A fixture creates a resource owned by `owner` and returns the path parameters that address it.
 * Routes name their fixture in `config.fixture`; the route-wide safety test calls it to prove that
 * another organization's credential gets the same 404 as a random id.
 */
export type Fixture = (app: App, owner: Tenant) => Promise<Record<string, string>>;

export const FIXTURES: Record<string, Fixture> = {
  ...accountsFixtures,
  ...projectsFixtures,
  ...documentsFixtures,
  ...workspaceFixtures,
};
