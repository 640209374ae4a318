import type { Sql } from '../../core/db/database.js';

export interface McpSession { id: string; protocol_version: string; client_name: string | null; client_version: string | null; created_at: string }
export interface NewMcpSession {
  id: string; credentialRef: string; userId: string; protocolVersion: string; clientName: string | null; clientVersion: string | null;
}

export const mcpSessionsRepo = {
  /** The session inserted; in the same statement, drops the organization's sessions unseen for `purgeAfterDays`. */
  insert: async (sql: Sql, orgId: string, s: NewMcpSession, purgeAfterDays: number) => (await sql.one<McpSession>(
    `WITH purge AS (
       DELETE FROM mcp_sessions WHERE org_id = $1 AND last_seen_at < now() - make_interval(days => $8)
     )
     INSERT INTO mcp_sessions (org_id, id, credential_ref, user_id, protocol_version, client_name, client_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, protocol_version, client_name, client_version, created_at`,
    [orgId, s.id, s.credentialRef, s.userId, s.protocolVersion, s.clientName, s.clientVersion, purgeAfterDays]))!,

  /**
   * The credential's session with this id if it is not ended and was seen within `idleHours`, else undefined; in the
   * same statement, moves its last_seen_at to now when that is older than a minute.
   */
  live: (sql: Sql, orgId: string, id: string, credentialRef: string, idleHours: number) => sql.one<McpSession>(
    `WITH s AS (
       SELECT id, protocol_version, client_name, client_version, created_at, last_seen_at FROM mcp_sessions
        WHERE org_id = $1 AND id = $2 AND credential_ref = $3 AND ended_at IS NULL
          AND last_seen_at > now() - make_interval(hours => $4)
     ), touch AS (
       UPDATE mcp_sessions m SET last_seen_at = now() FROM s
        WHERE m.org_id = $1 AND m.id = s.id AND s.last_seen_at < now() - interval '60 seconds'
     )
     SELECT id, protocol_version, client_name, client_version, created_at FROM s`,
    [orgId, id, credentialRef, idleHours]),

  /** Ends the credential's live session (seen within `idleHours`); whether there was one to end. */
  end: async (sql: Sql, orgId: string, id: string, credentialRef: string, idleHours: number) => (await sql.exec(
    `UPDATE mcp_sessions SET ended_at = now() WHERE org_id = $1 AND id = $2 AND credential_ref = $3 AND ended_at IS NULL
        AND last_seen_at > now() - make_interval(hours => $4)`,
    [orgId, id, credentialRef, idleHours])) > 0,
};
