import type { Sql } from '../../core/db/database.js';

const E_COLS = 'id, org_id, project_id, entity_type, name, description, properties, created_by, created_at, updated_at';
const R_COLS = 'id, org_id, source_entity_id, target_entity_id, relationship_type, properties, created_by, created_at, updated_at';

/** A row of a list, with the number of rows matching the filters. */
export type Counted = Record<string, unknown> & { total: number };


/** One page of entities, newest first, each row with the filtered total. */
export async function listEntities(sql: Sql, orgId: string, q: { entityType: string | null; projectId: string | null; limit: number; offset: number }): Promise<Counted[]> {
  return sql.query<Counted>(
    `SELECT ${E_COLS}, count(*) OVER () AS total FROM entities WHERE org_id = $1 AND ($2::text IS NULL OR entity_type = $2)
       AND ($3::uuid IS NULL OR project_id = $3) ORDER BY id DESC LIMIT $4 OFFSET $5`,
    [orgId, q.entityType, q.projectId, q.limit, q.offset]);
}

/** How many entities match the filters of listEntities. */
export async function countEntities(sql: Sql, orgId: string, q: { entityType: string | null; projectId: string | null }): Promise<number> {
  return (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM entities WHERE org_id = $1 AND ($2::text IS NULL OR entity_type = $2)
       AND ($3::uuid IS NULL OR project_id = $3)`, [orgId, q.entityType, q.projectId]))!.n;
}

/** An entity, undefined when there is none. */
export async function getEntity(sql: Sql, orgId: string, id: string): Promise<Record<string, unknown> | undefined> {
  return sql.one(`SELECT ${E_COLS} FROM entities WHERE org_id = $1 AND id = $2`, [orgId, id]);
}

export interface NewEntity {
  id: string; projectId: string | null; entityType: string; name: string; description: string | null;
  properties: Record<string, unknown>; createdBy: string;
}

/** Inserts an entity; returns its row. */
export async function insertEntity(sql: Sql, orgId: string, e: NewEntity): Promise<Record<string, unknown> & { id: string }> {
  return (await sql.one<Record<string, unknown> & { id: string }>(`INSERT INTO entities (org_id, id, project_id, entity_type, name, description, properties, created_by)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${E_COLS}`,
  [orgId, e.id, e.projectId, e.entityType, e.name, e.description, e.properties, e.createdBy]))!;
}

/** Fields of an entity to change: null keeps one; description and project change when their flag is set (to null too). */
export interface EntityPatch {
  name: string | null; entityType: string | null; setDescription: boolean; description: string | null;
  properties: Record<string, unknown> | null; setProject: boolean; projectId: string | null;
}

/** Applies the patch; returns the updated row, undefined when there is no such entity. */
export async function updateEntity(sql: Sql, orgId: string, id: string, p: EntityPatch): Promise<Record<string, unknown> | undefined> {
  return sql.one(`UPDATE entities SET name = COALESCE($3, name), entity_type = COALESCE($4, entity_type),
        description = CASE WHEN $5 THEN $6 ELSE description END, properties = COALESCE($7, properties),
        project_id = CASE WHEN $8 THEN $9::uuid ELSE project_id END, updated_at = now()
      WHERE org_id = $1 AND id = $2 RETURNING ${E_COLS}`,
  [orgId, id, p.name, p.entityType, p.setDescription, p.description, p.properties, p.setProject, p.projectId]);
}

/** Deletes an entity (its relationships go with it); returns the rows deleted (0 or 1). */
export async function deleteEntity(sql: Sql, orgId: string, id: string): Promise<number> {
  return sql.exec(`DELETE FROM entities WHERE org_id = $1 AND id = $2`, [orgId, id]);
}

/** The ids among `ids` that are entities of the organization. */
export async function existingEntityIds(sql: Sql, orgId: string, ids: string[]): Promise<Array<{ id: string }>> {
  return sql.query<{ id: string }>(`SELECT id FROM entities WHERE org_id = $1 AND id = ANY($2::uuid[])`, [orgId, ids]);
}

/** One page of relationships (touching `entityId` on either end, of a type), newest first, each row with the filtered total. */
export async function listRelationships(sql: Sql, orgId: string, q: { entityId: string | null; relationshipType: string | null; limit: number; offset: number }): Promise<Counted[]> {
  return sql.query<Counted>(
    `SELECT ${R_COLS}, count(*) OVER () AS total FROM relationships WHERE org_id = $1
       AND ($2::uuid IS NULL OR source_entity_id = $2 OR target_entity_id = $2) AND ($3::text IS NULL OR relationship_type = $3)
     ORDER BY id DESC LIMIT $4 OFFSET $5`, [orgId, q.entityId, q.relationshipType, q.limit, q.offset]);
}

/** How many relationships match the filters of listRelationships. */
export async function countRelationships(sql: Sql, orgId: string, q: { entityId: string | null; relationshipType: string | null }): Promise<number> {
  return (await sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM relationships WHERE org_id = $1
       AND ($2::uuid IS NULL OR source_entity_id = $2 OR target_entity_id = $2) AND ($3::text IS NULL OR relationship_type = $3)`,
  [orgId, q.entityId, q.relationshipType]))!.n;
}

/** A relationship, undefined when there is none. */
export async function getRelationship(sql: Sql, orgId: string, id: string): Promise<Record<string, unknown> | undefined> {
  return sql.one(`SELECT ${R_COLS} FROM relationships WHERE org_id = $1 AND id = $2`, [orgId, id]);
}

export interface NewRelationship {
  id: string; sourceEntityId: string; targetEntityId: string; relationshipType: string; properties: Record<string, unknown>; createdBy: string;
}

/** Inserts a relationship; returns its row. Throws the unique violation of `relationships_edge` for an existing edge. */
export async function insertRelationship(sql: Sql, orgId: string, r: NewRelationship): Promise<Record<string, unknown> & { id: string }> {
  return (await sql.one<Record<string, unknown> & { id: string }>(`INSERT INTO relationships (org_id, id, source_entity_id, target_entity_id, relationship_type, properties, created_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${R_COLS}`,
  [orgId, r.id, r.sourceEntityId, r.targetEntityId, r.relationshipType, r.properties, r.createdBy]))!;
}

/**
 * Changes a relationship's type and properties (null keeps one); returns the updated row, undefined when there is no
 * such relationship. Throws the unique violation of `relationships_edge` when the edge exists already.
 */
export async function updateRelationship(sql: Sql, orgId: string, id: string, p: { relationshipType: string | null; properties: Record<string, unknown> | null }): Promise<Record<string, unknown> | undefined> {
  return sql.one(`UPDATE relationships SET relationship_type = COALESCE($3, relationship_type), properties = COALESCE($4, properties), updated_at = now()
        WHERE org_id = $1 AND id = $2 RETURNING ${R_COLS}`, [orgId, id, p.relationshipType, p.properties]);
}

/** Deletes a relationship; returns the rows deleted (0 or 1). */
export async function deleteRelationship(sql: Sql, orgId: string, id: string): Promise<number> {
  return sql.exec(`DELETE FROM relationships WHERE org_id = $1 AND id = $2`, [orgId, id]);
}
