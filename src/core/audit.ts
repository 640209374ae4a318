import type { Sql } from './db/database.js';
import type { ServiceContext } from './context.js';
import { uuidv7 } from './ids.js';

export interface AuditEntry {
  action: string;          // <resource>.<verb>, e.g. api_key.created
  targetType: string;
  targetId?: string | null;
  details?: Record<string, unknown>;
  /** Defaults to the caller's organization. */
  orgId?: string;
}

/** The audit_log columns auditValues() fills, in its order. */
export const AUDIT_COLUMNS = 'org_id, id, actor_user_id, actor_api_key_id, credential_kind, action, target_type, target_id, request_id, ip, details';
const AUDIT_COLUMN_NAMES = AUDIT_COLUMNS.split(', ');

/**
 * The values of one audit row (for AUDIT_COLUMNS). audit() writes them; a write that must stay one statement
 * (one round trip, no transaction) inserts them in a CTE of its own, so the row commits with the change.
 */
export function auditValues(ctx: ServiceContext, e: AuditEntry): unknown[] {
  const p = ctx.principal;
  const orgId = e.orgId ?? p?.orgId;
  if (!orgId) throw new Error('audit: no organization for the entry');
  return [orgId, uuidv7(), p?.userId ?? null, p?.apiKeyId ?? null, p ? p.kind : 'system', e.action, e.targetType,
    e.targetId ?? null, ctx.requestId, ctx.ip, e.details ?? {}];
}

/** AUDIT_COLUMNS with their types, to read audit rows out of JSON (json_to_recordset) in a statement that writes many. */
export const AUDIT_RECORD_COLUMNS = 'org_id uuid, id uuid, actor_user_id uuid, actor_api_key_id uuid, credential_kind text, action text, '
  + 'target_type text, target_id text, request_id text, ip text, details jsonb';

/** auditValues()' values as an object keyed by column, for a statement that reads its rows with AUDIT_RECORD_COLUMNS. */
export function auditRecord(values: unknown[]): Record<string, unknown> {
  return Object.fromEntries(AUDIT_COLUMN_NAMES.map((c, i) => [c, values[i]]));
}

/** Writes one audit row; call it with the transaction that makes the change, so both commit or neither. */
export async function audit(sql: Sql, ctx: ServiceContext, e: AuditEntry): Promise<void> {
  await sql.exec(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, auditValues(ctx, e));
}
