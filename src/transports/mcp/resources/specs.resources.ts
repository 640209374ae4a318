import { AppError } from '../../../core/errors.js';
import { isUuid } from '../../../core/ids.js';
import { isOffset } from '../../../core/pagination.js';
import { listProjects } from '../../../areas/projects/projects.service.js';
import { getSpec, listSpecs } from '../../../areas/projects/specs.service.js';
import { resourceUri, type ResourceProvider, type ResourceRef } from './define.js';

const PROJECT_PAGE = 20;

/** Position in the walk over projects (newest first) and their specs (newest first). */
interface Pos { po: number; so: number }

function pos(cursor: unknown): Pos {
  if (cursor === null || cursor === undefined) return { po: 0, so: 0 };
  const c = cursor as Partial<Pos>;
  if (typeof c === 'object' && isOffset(c.po) && isOffset(c.so)) return { po: c.po, so: c.so };
  throw new AppError('INVALID_PARAMETER', '"cursor" is not a cursor this server issued', { field: 'cursor' });
}

/** Specs of every project that is not deleted, as `platform://specs/<spec_id>` (markdown content). */
export const specsResources: ResourceProvider = {
  kind: 'specs',
  gate: 'specs.get',
  listGate: 'specs.list',
  title: 'Project specs',
  description: 'Specifications of the organization\'s projects; the text is the spec\'s markdown content.',
  mimeType: 'text/markdown',

  async list(ctx, cursor, limit) {
    const at = pos(cursor);
    const items: ResourceRef[] = [];
    for (;;) {
      const projects = await listProjects(ctx, { status: 'all', limit: PROJECT_PAGE, offset: at.po - (at.po % PROJECT_PAGE) });
      const firstIdx = at.po % PROJECT_PAGE;
      if (firstIdx >= projects.items.length) return { items, next: null };
      for (let i = firstIdx; i < projects.items.length; i++) {
        const project = projects.items[i];
        if (!project.deleted_at) {
          const page = await listSpecs(ctx, { projectId: project.id, limit: limit - items.length, offset: at.so });
          items.push(...page.items.map((s) => ({
            uri: resourceUri('specs', s.spec_id), name: s.title, title: s.title,
            description: `Spec of project "${project.name}"`, mimeType: 'text/markdown',
          })));
          if (at.so + page.items.length < page.total) {
            at.so += page.items.length;
            return { items, next: { ...at } };
          }
        }
        at.po++;
        at.so = 0;
        if (items.length >= limit) return { items, next: at.po < projects.total ? { ...at } : null };
      }
      if (at.po >= projects.total) return { items, next: null };
    }
  },

  async read(ctx, id) {
    if (!isUuid(id)) return null;
    const s = await getSpec(ctx, { specId: id });
    return {
      uri: resourceUri('specs', s.spec_id), mimeType: 'text/markdown', text: s.content,
      _meta: { spec_id: s.spec_id, project_id: s.project_id, title: s.title, created_at: s.created_at, updated_at: s.updated_at },
    };
  },
};
