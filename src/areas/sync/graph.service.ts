import type { ServiceContext } from '../../core/context.js';
import { requirePermission } from '../../core/context.js';
import { conflict, notFound } from '../../core/errors.js';
import { audit } from '../../core/audit.js';
import { uuidv7 } from '../../core/ids.js';
import { nonBlankText } from '../../core/text.js';
import { isUniqueViolation, type Sql } from '../../core/db/database.js';
import type { CreateEntityInput, UpdateEntityInput, CreateRelationshipInput, UpdateRelationshipInput } from './sync.schemas.js';
import * as repo from './graph.repo.js';
import { requireProject } from '../projects/project-access.js';
import { pageWithTotal } from '../../core/pagination.js';

/** An entity's project: of the organization (404), not archived or deleted (409 PROJECT_ARCHIVED), as for documents. */
async function checkProject(sql: Sql, orgId: string, projectId: string | null | undefined) {
  if (projectId) await requireProject(sql, orgId, projectId, { writable: true, field: 'project_id' });
}

/** Entities: named things (people, systems, terms) that documents and tasks refer to. */
export async function listEntities(ctx: ServiceContext, q: { entity_type?: string; project_id?: string; limit: number; offset: number }) {
  const p = requirePermission(ctx, 'project.view');
  const filter = { entityType: q.entity_type ?? null, projectId: q.project_id ?? null };
  return ctx.platform.db.tenant(p.orgId, async (sql) => pageWithTotal(await repo.listEntities(sql, p.orgId, { ...filter, limit: q.limit, offset: q.offset }),
    q.offset, () => repo.countEntities(sql, p.orgId, filter)));
}

export async function getEntity(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'project.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => repo.getEntity(sql, p.orgId, input.id));
  if (!row) throw notFound('Entity');
  return row;
}

export async function createEntity(ctx: ServiceContext, input: CreateEntityInput) {
  const p = requirePermission(ctx, 'project.update');
  const name = nonBlankText(input.name, 'name');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await checkProject(sql, p.orgId, input.project_id);
    const row = await repo.insertEntity(sql, p.orgId, {
      id: uuidv7(), projectId: input.project_id ?? null, entityType: input.entity_type, name, description: input.description ?? null,
      properties: input.properties ?? {}, createdBy: p.userId,
    });
    await audit(sql, ctx, { action: 'entity.created', targetType: 'entity', targetId: row.id });
    return row;
  });
}

export async function updateEntity(ctx: ServiceContext, input: UpdateEntityInput & { id: string }) {
  const p = requirePermission(ctx, 'project.update');
  const name = input.name === undefined ? null : nonBlankText(input.name, 'name');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    // As for documents: an entity keeps its project once that is deleted; only a move needs a live one.
    if (input.project_id && input.project_id !== (await repo.getEntity(sql, p.orgId, input.id))?.project_id) await checkProject(sql, p.orgId, input.project_id);
    const row = await repo.updateEntity(sql, p.orgId, input.id, {
      name, entityType: input.entity_type ?? null, setDescription: input.description !== undefined, description: input.description ?? null,
      properties: input.properties ?? null, setProject: input.project_id !== undefined, projectId: input.project_id ?? null,
    });
    if (!row) throw notFound('Entity');
    await audit(sql, ctx, { action: 'entity.updated', targetType: 'entity', targetId: input.id, details: { fields: Object.keys(input).filter((k) => k !== 'id') } });
    return row;
  });
}

/** Deleting an entity deletes its relationships (each becomes a tombstone for offline clients). */
export async function deleteEntity(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'project.update');
  await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    if (!(await repo.deleteEntity(sql, p.orgId, input.id))) throw notFound('Entity');
    await audit(sql, ctx, { action: 'entity.deleted', targetType: 'entity', targetId: input.id });
  });
  return { id: input.id, deleted: true };
}

export async function listRelationships(ctx: ServiceContext, q: { entity_id?: string; relationship_type?: string; limit: number; offset: number }) {
  const p = requirePermission(ctx, 'project.view');
  const filter = { entityId: q.entity_id ?? null, relationshipType: q.relationship_type ?? null };
  return ctx.platform.db.tenant(p.orgId, async (sql) => pageWithTotal(await repo.listRelationships(sql, p.orgId, { ...filter, limit: q.limit, offset: q.offset }),
    q.offset, () => repo.countRelationships(sql, p.orgId, filter)));
}

export async function getRelationship(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'project.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => repo.getRelationship(sql, p.orgId, input.id));
  if (!row) throw notFound('Relationship');
  return row;
}

export async function createRelationship(ctx: ServiceContext, input: CreateRelationshipInput) {
  const p = requirePermission(ctx, 'project.update');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const found = await repo.existingEntityIds(sql, p.orgId, [input.source_entity_id, input.target_entity_id]);
    for (const [field, id] of [['source_entity_id', input.source_entity_id], ['target_entity_id', input.target_entity_id]] as const) {
      if (!found.some((f) => f.id === id)) throw notFound('Entity', { field });
    }
    let row;
    try {
      row = await repo.insertRelationship(sql, p.orgId, {
        id: uuidv7(), sourceEntityId: input.source_entity_id, targetEntityId: input.target_entity_id,
        relationshipType: input.relationship_type, properties: input.properties ?? {}, createdBy: p.userId,
      });
    } catch (err) {
      if (isUniqueViolation(err, 'relationships_edge')) throw conflict('This relationship already exists', { code: 'NAME_EXISTS' });
      throw err;
    }
    await audit(sql, ctx, { action: 'relationship.created', targetType: 'relationship', targetId: row!.id });
    return row!;
  });
}

export async function updateRelationship(ctx: ServiceContext, input: UpdateRelationshipInput & { id: string }) {
  const p = requirePermission(ctx, 'project.update');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    let row;
    try {
      row = await repo.updateRelationship(sql, p.orgId, input.id, { relationshipType: input.relationship_type ?? null, properties: input.properties ?? null });
    } catch (err) {
      if (isUniqueViolation(err, 'relationships_edge')) throw conflict('This relationship already exists', { code: 'NAME_EXISTS' });
      throw err;
    }
    if (!row) throw notFound('Relationship');
    await audit(sql, ctx, { action: 'relationship.updated', targetType: 'relationship', targetId: input.id });
    return row;
  });
}

export async function deleteRelationship(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'project.update');
  await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    if (!(await repo.deleteRelationship(sql, p.orgId, input.id))) throw notFound('Relationship');
    await audit(sql, ctx, { action: 'relationship.deleted', targetType: 'relationship', targetId: input.id });
  });
  return { id: input.id, deleted: true };
}
