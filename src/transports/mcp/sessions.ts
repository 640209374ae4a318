import { randomB64url } from '../../core/crypto.js';
import { actor, type ServiceContext } from '../../core/context.js';
import type { Principal } from '../../core/auth/principal.js';
import { mcpSessionsRepo, type McpSession } from './sessions.repo.js';
import type { Sql } from '../../core/db/database.js';
import { purge } from '../../core/retention.js';

/** A session idle this long counts as ended (404; the client starts a new one). */
export const SESSION_IDLE_HOURS = 24;
/**
 * Rows of ended or long-idle sessions are dropped when the organization opens a new one, and once an hour for every
 * organization (purgeIdleSessions: one that opens no more sessions keeps none for good either).
 */
const PURGE_AFTER_DAYS = 30;
const SESSION_ID_RE = /^[A-Za-z0-9_-]{16,128}$/;

export type { McpSession };

const credentialRef = (p: Principal) => (p.apiKeyId ? `k:${p.apiKeyId}` : `s:${p.sessionId ?? p.userId}`);

/** Opens a session for the caller's credential; the id is 32 random bytes, base64url (visible ASCII, as MCP asks). */
export async function openSession(ctx: ServiceContext, input: { protocolVersion: string; clientName?: string; clientVersion?: string }): Promise<McpSession> {
  const p = actor(ctx);
  const id = randomB64url(32);
  return ctx.platform.db.tenant(p.orgId, (sql) => mcpSessionsRepo.insert(sql, p.orgId, {
    id, credentialRef: credentialRef(p), userId: p.userId, protocolVersion: input.protocolVersion,
    clientName: input.clientName?.slice(0, 200) ?? null, clientVersion: input.clientVersion?.slice(0, 100) ?? null,
  }, PURGE_AFTER_DAYS));
}

/**
 * The live session with this id for this credential, or null when it is unknown, ended, idle too long or
 * opened by another credential (all read as "not found"). Refreshes last_seen_at at most once a minute, in
 * the same round trip.
 */
export async function findSession(ctx: ServiceContext, id: string): Promise<McpSession | null> {
  const p = actor(ctx);
  if (!SESSION_ID_RE.test(id)) return null;
  return ctx.platform.db.tenant(p.orgId, async (sql) => (await mcpSessionsRepo.live(sql, p.orgId, id, credentialRef(p), SESSION_IDLE_HOURS)) ?? null);
}

/** Ends the session (DELETE /v1/mcp); false when there was no live session of this credential to end. */
export async function endSession(ctx: ServiceContext, id: string): Promise<boolean> {
  const p = actor(ctx);
  if (!SESSION_ID_RE.test(id)) return false;
  return ctx.platform.db.tenant(p.orgId, (sql) => mcpSessionsRepo.end(sql, p.orgId, id, credentialRef(p), SESSION_IDLE_HOURS));
}

/** Deletes the sessions of every organization unseen for PURGE_AFTER_DAYS; returns how many. */
export async function purgeIdleSessions(sys: Sql): Promise<number> {
  return purge(sys, 'mcp_sessions', `last_seen_at < now() - make_interval(days => $2)`, [PURGE_AFTER_DAYS]);
}
