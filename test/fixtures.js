import { accountsFixtures } from '../src/areas/accounts/accounts.fixtures.js';
import { projectsFixtures } from '../src/areas/projects/projects.fixtures.js';
import { documentsFixtures } from '../src/areas/documents/documents.fixtures.js';
import { workspaceFixtures } from '../src/areas/workspace/workspace.fixtures.js';
export const FIXTURES = {
    ...accountsFixtures,
    ...projectsFixtures,
    ...documentsFixtures,
    ...workspaceFixtures,
};
//# sourceMappingURL=fixtures.js.map