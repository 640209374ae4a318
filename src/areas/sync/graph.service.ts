import type { ServiceContext } from '../../core/context.js';
import { requirePermission } from '../../core/context.js';
import { conflict, notFound } from '../../core/errors.js';
import { audit } from '../../core/audit.js';
import { uuidv7 } from '../../core/ids.js';
import { nonBlankText } from '../../core/text.js';
import { isUniqueViolation, type Sql } from '../../core/db/database.js';
import type { CreateEntityInput, UpdateEntityInput, CreateRelationshipInput, UpdateRelationshipInput } from './sync.schemas.js';

const E_COLS = 'id, org_id, project_id, entity_type, name, description, properties, created_by, created_at, updated_at';
const R_COLS = 'id, org_id, source_entity_id, target_entity_id, relationship_type, properties, created_by, created_at, updated_at';

async function checkProject(sql: Sql, orgId: string, projectId: string | null | undefined) {
  if (projectId && !(await sql.one(`SELECT 1 FROM projects WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, [orgId, projectId]))) {
    throw notFound('Project', { field: 'project_id' });
  }
}

/** Entities: named things (people, systems, terms) that documents and tasks refer to. */
export async function listEntities(ctx: ServiceContext, q: { entity_type?: string; project_id?: string; limit: number; offset: number }) {
  const p = requirePermission(ctx, 'project.view');
  const rows = await ctx.platform.db.tenant(p.orgId, (sql) => sql.query<Record<string, unknown> & { total: number }>(
    `SELECT ${E_COLS}, count(*) OVER () AS total FROM entities WHERE org_id = $1 AND ($2::text IS NULL OR entity_type = $2)
       AND ($3::uuid IS NULL OR project_id = $3) ORDER BY id DESC LIMIT $4 OFFSET $5`,
    [p.orgId, q.entity_type ?? null, q.project_id ?? null, q.limit, q.offset]));
  return { items: rows.map(({ total: _t, ...r }) => r), total: rows[0]?.total ?? 0 };
}

export async function getEntity(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'project.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => sql.one(`SELECT ${E_COLS} FROM entities WHERE org_id = $1 AND id = $2`, [p.orgId, input.id]));
  if (!row) throw notFound('Entity');
  return row;
}

export async function createEntity(ctx: ServiceContext, input: CreateEntityInput) {
  const p = requirePermission(ctx, 'project.update');
  const name = nonBlankText(input.name, 'name');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await checkProject(sql, p.orgId, input.project_id);
    const row = await sql.one<{ id: string }>(`INSERT INTO entities (org_id, id, project_id, entity_type, name, description, properties, created_by)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${E_COLS}`,
    [p.orgId, uuidv7(), input.project_id ?? null, input.entity_type, name, input.description ?? null, input.properties ?? {}, p.userId]);
    await audit(sql, ctx, { action: 'entity.created', targetType: 'entity', targetId: row!.id });
    return row!;
  });
}

export async function updateEntity(ctx: ServiceContext, input: UpdateEntityInput & { id: string }) {
  const p = requirePermission(ctx, 'project.update');
  const name = input.name === undefined ? null : nonBlankText(input.name, 'name');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    await checkProject(sql, p.orgId, input.project_id);
    const row = await sql.one(`UPDATE entities SET name = COALESCE($3, name), entity_type = COALESCE($4, entity_type),
        description = CASE WHEN $5 THEN $6 ELSE description END, properties = COALESCE($7, properties),
        project_id = CASE WHEN $8 THEN $9::uuid ELSE project_id END, updated_at = now()
      WHERE org_id = $1 AND id = $2 RETURNING ${E_COLS}`,
    [p.orgId, input.id, name, input.entity_type ?? null, input.description !== undefined, input.description ?? null,
      input.properties ?? null, input.project_id !== undefined, input.project_id ?? null]);
    if (!row) throw notFound('Entity');
    await audit(sql, ctx, { action: 'entity.updated', targetType: 'entity', targetId: input.id, details: { fields: Object.keys(input).filter((k) => k !== 'id') } });
    return row;
  });
}

/** Deleting an entity deletes its relationships (each becomes a tombstone for offline clients). */
export async function deleteEntity(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'project.update');
  await ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    if (!(await sql.exec(`DELETE FROM entities WHERE org_id = $1 AND id = $2`, [p.orgId, input.id]))) throw notFound('Entity');
    await audit(sql, ctx, { action: 'entity.deleted', targetType: 'entity', targetId: input.id });
  });
  return { id: input.id, deleted: true };
}

export async function listRelationships(ctx: ServiceContext, q: { entity_id?: string; relationship_type?: string; limit: number; offset: number }) {
  const p = requirePermission(ctx, 'project.view');
  const rows = await ctx.platform.db.tenant(p.orgId, (sql) => sql.query<Record<string, unknown> & { total: number }>(
    `SELECT ${R_COLS}, count(*) OVER () AS total FROM relationships WHERE org_id = $1
       AND ($2::uuid IS NULL OR source_entity_id = $2 OR target_entity_id = $2) AND ($3::text IS NULL OR relationship_type = $3)
     ORDER BY id DESC LIMIT $4 OFFSET $5`, [p.orgId, q.entity_id ?? null, q.relationship_type ?? null, q.limit, q.offset]));
  return { items: rows.map(({ total: _t, ...r }) => r), total: rows[0]?.total ?? 0 };
}

export async function getRelationship(ctx: ServiceContext, input: { id: string }) {
  const p = requirePermission(ctx, 'project.view');
  const row = await ctx.platform.db.tenant(p.orgId, (sql) => sql.one(`SELECT ${R_COLS} FROM relationships WHERE org_id = $1 AND id = $2`, [p.orgId, input.id]));
  if (!row) throw notFound('Relationship');
  return row;
}

export async function createRelationship(ctx: ServiceContext, input: CreateRelationshipInput) {
  const p = requirePermission(ctx, 'project.update');
  return ctx.platform.db.tenantTx(p.orgId, async (sql) => {
    const found = await sql.query<{ id: string }>(`SELECT id FROM entities WHERE org_id = $1 AND id = ANY($2::uuid[])`, [p.orgId, [input.source_entity_id, input.target_entity_id]]);
    for (const [field, id] of [['source_entity_id', input.source_entity_id], ['target_entity_id', input.target_entity_id]] as const) {
      if (!found.some((f) => f.id === id)) throw notFound('Entity', { field });
    }
    let row;
    try {
      row = await sql.one<{ id: string }>(`INSERT INTO relationships (org_id, id, source_entity_id, target_entity_id, relationship_type, properties, created_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${R_COLS}`,
      [p.orgId, uuidv7(), input.source_entity_id, input.target_entity_id, input.relationship_type, input.properties ?? {}, p.userId]);
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
      row = await sql.one(`UPDATE relationships SET relationship_type = COALESCE($3, relationship_type), properties = COALESCE($4, properties), updated_at = now()
        WHERE org_id = $1 AND id = $2 RETURNING ${R_COLS}`, [p.orgId, input.id, input.relationship_type ?? null, input.properties ?? null]);
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
    if (!(await sql.exec(`DELETE FROM relationships WHERE org_id = $1 AND id = $2`, [p.orgId, input.id]))) throw notFound('Relationship');
    await audit(sql, ctx, { action: 'relationship.deleted', targetType: 'relationship', targetId: input.id });
  });
  return { id: input.id, deleted: true };
}
