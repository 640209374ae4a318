import { randomB64url } from '../../core/crypto.js';
import { actor, type ServiceContext } from '../../core/context.js';
import type { Principal } from '../../core/auth/principal.js';

/** A session idle this long counts as ended (404; the client starts a new one). */
export const SESSION_IDLE_HOURS = 24;
/** Rows of ended or long-idle sessions are dropped when the organization opens a new one. */
const PURGE_AFTER_DAYS = 30;
const SESSION_ID_RE = /^[A-Za-z0-9_-]{16,128}$/;

export interface McpSession { id: string; protocol_version: string; client_name: string | null; client_version: string | null; created_at: string }

const credentialRef = (p: Principal) => (p.apiKeyId ? `k:${p.apiKeyId}` : `s:${p.sessionId ?? p.userId}`);

/** Opens a session for the caller's credential; the id is 32 random bytes, base64url (visible ASCII, as MCP asks). */
export async function openSession(ctx: ServiceContext, input: { protocolVersion: string; clientName?: string; clientVersion?: string }): Promise<McpSession> {
  const p = actor(ctx);
  const id = randomB64url(32);
  return ctx.platform.db.tenant(p.orgId, async (sql) => (await sql.one<McpSession>(
    `WITH purge AS (
       DELETE FROM mcp_sessions WHERE org_id = $1 AND last_seen_at < now() - make_interval(days => $8)
     )
     INSERT INTO mcp_sessions (org_id, id, credential_ref, user_id, protocol_version, client_name, client_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, protocol_version, client_name, client_version, created_at`,
    [p.orgId, id, credentialRef(p), p.userId, input.protocolVersion, input.clientName?.slice(0, 200) ?? null, input.clientVersion?.slice(0, 100) ?? null, PURGE_AFTER_DAYS]))!);
}

/**
 * The live session with this id for this credential, or null when it is unknown, ended, idle too long or
 * opened by another credential (all read as "not found"). Refreshes last_seen_at at most once a minute, in
 * the same round trip.
 */
export async function findSession(ctx: ServiceContext, id: string): Promise<McpSession | null> {
  const p = actor(ctx);
  if (!SESSION_ID_RE.test(id)) return null;
  return ctx.platform.db.tenant(p.orgId, async (sql) => (await sql.one<McpSession>(
    `WITH s AS (
       SELECT id, protocol_version, client_name, client_version, created_at, last_seen_at FROM mcp_sessions
        WHERE org_id = $1 AND id = $2 AND credential_ref = $3 AND ended_at IS NULL
          AND last_seen_at > now() - make_interval(hours => $4)
     ), touch AS (
       UPDATE mcp_sessions m SET last_seen_at = now() FROM s
        WHERE m.org_id = $1 AND m.id = s.id AND s.last_seen_at < now() - interval '60 seconds'
     )
     SELECT id, protocol_version, client_name, client_version, created_at FROM s`,
    [p.orgId, id, credentialRef(p), SESSION_IDLE_HOURS])) ?? null);
}

/** Ends the session (DELETE /v1/mcp); false when there was no live session of this credential to end. */
export async function endSession(ctx: ServiceContext, id: string): Promise<boolean> {
  const p = actor(ctx);
  if (!SESSION_ID_RE.test(id)) return false;
  return ctx.platform.db.tenant(p.orgId, async (sql) => (await sql.exec(
    `UPDATE mcp_sessions SET ended_at = now() WHERE org_id = $1 AND id = $2 AND credential_ref = $3 AND ended_at IS NULL
        AND last_seen_at > now() - make_interval(hours => $4)`,
    [p.orgId, id, credentialRef(p), SESSION_IDLE_HOURS])) > 0);
}
