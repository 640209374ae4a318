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

/** Writes one audit row; call it with the transaction that makes the change, so both commit or neither. */
export async function audit(sql: Sql, ctx: ServiceContext, e: AuditEntry): Promise<void> {
  const p = ctx.principal;
  const orgId = e.orgId ?? p?.orgId;
  if (!orgId) throw new Error('audit: no organization for the entry');
  await sql.exec(
    `INSERT INTO audit_log (org_id, id, actor_user_id, actor_api_key_id, credential_kind, action, target_type, target_id, request_id, ip, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [orgId, uuidv7(), p?.userId ?? null, p?.apiKeyId ?? null, p ? p.kind : 'system', e.action, e.targetType,
      e.targetId ?? null, ctx.requestId, ctx.ip, e.details ?? {}]);
}
