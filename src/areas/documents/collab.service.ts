import * as Y from 'yjs';
import type { Platform, ServiceContext } from '../../core/context.js';
import type { Sql } from '../../core/db/database.js';
import { perPlatform } from '../../core/per-platform.js';
import { AppError, notFound } from '../../core/errors.js';
import { enqueue } from '../../core/jobs.js';
import { ROLE_PERMISSIONS, scopesAllow } from '../../core/auth/permissions.js';
import { actor } from '../../core/context.js';
import type { Principal } from '../../core/auth/principal.js';
import { checkNeeds } from '../../core/http/guard.js';
import { documentsDeps } from './deps.js';
import type { TicketClaims } from './tickets.js';
import { INDEX_JOB } from './documents.service.js';
import { validateDeck } from './sheet-model.js';
import { documentContent, documentKind } from './documents.repo.js';
import * as repo from './collab.repo.js';
import { collabChannel, syncUpdateMessage } from './collab-messages.js';

function isValidDeck(content: string, maxDepth: number): boolean {
  try { validateDeck(content, maxDepth); return true; } catch { return false; }
}

/** The shared text of a collaborative document: clients edit `doc.getText('content')`. */
export const CONTENT_TEXT = 'content';
/** Appended updates are merged into one row once a document has more than this many. */
export const COMPACT_AFTER = 100;

export type Capability = 'read' | 'write';

/**
 * Who is on the socket and what they may do, after a ticket or token was checked. `source` is what was presented,
 * kept so the socket can be re-checked when credentials change (recheckSession).
 */
export interface CollabSession {
  orgId: string; userId: string; capability: Capability;
  source: { kind: 'ticket'; claims: TicketClaims } | { kind: 'token'; principal: Principal };
}

/** What reading over the collaboration socket needs: the ticket route's config, and the deprecated token's check. */
export const COLLAB_NEEDS = { scope: 'documents:read', permission: 'document.view', feature: 'documents' } as const;

const canWrite = (p: { permissions: ReadonlySet<string>; kind: string; scopes: readonly string[] | null }) =>
  p.permissions.has('document.update') && (p.kind !== 'api_key' || p.scopes === null || scopesAllow(p.scopes, 'documents:write'));

/** POST /v1/collaboration/ticket: a 64-hex single-use ticket valid 60 s, carrying the caller and capability. */
export async function issueTicket(ctx: ServiceContext, input: { scope?: 'read' | 'write' }) {
  const p = actor(ctx);
  if (!p.permissions.has('document.view')) throw new AppError('PERMISSION_DENIED', 'This action needs the "document.view" permission', { permission: 'document.view' });
  // Asking for write is checked like a write route: a key without the scope is 403 FORBIDDEN (naming the
  // scope), a member without the permission 403 PERMISSION_DENIED.
  if (input.scope === 'write') checkNeeds({ scope: 'documents:write', permission: 'document.update' }, p);
  const capability: Capability = input.scope === 'read' || !canWrite(p) ? 'read' : 'write';
  return documentsDeps(ctx.platform).tickets.issue({ orgId: p.orgId, userId: p.userId, sessionId: p.sessionId ?? null, apiKeyId: p.apiKeyId ?? null, scope: capability });
}

/** Redeems a ticket (once); the issuer must still be an active member and its session or key still valid. */
export async function redeemTicket(platform: Platform, ticket: string): Promise<CollabSession> {
  const c = await documentsDeps(platform).tickets.take(ticket);
  if (!c) throw new AppError('AUTH_TOKEN_INVALID', 'The collaboration ticket is unknown, expired or already used');
  return sessionFromClaims(platform, c);
}

/**
 * What a ticket binds (organization, user, session or API key, asked capability), checked against the database now:
 * the organization live, the user active and a member with `document.view`, the session or key unrevoked and
 * unexpired (a key still holding `documents:read`), the documents feature on. Write needs `document.update` (and
 * `documents:write` for a key) as well as a write ticket. Used at redemption and on every credential change.
 */
async function sessionFromClaims(platform: Platform, c: TicketClaims): Promise<CollabSession> {
  const row = await repo.ticketHolder(platform.db.sys, c.orgId, c.userId, c.sessionId, c.apiKeyId);
  if (!row?.ok) throw new AppError('AUTH_TOKEN_INVALID', 'The credential behind this ticket is no longer valid');
  const perms = ROLE_PERMISSIONS[row.role];
  // The route's needs, checked by the core as for any request: feature, then the key's scope, then the permission.
  checkNeeds(COLLAB_NEEDS, { kind: c.apiKeyId ? 'api_key' : 'user', scopes: row.scopes, permissions: perms, org: { features: row.features } } as unknown as Principal);
  const keyWrites = !c.apiKeyId || row.scopes === null || scopesAllow(row.scopes, 'documents:write');
  const capability: Capability = c.scope === 'write' && perms.has('document.update') && keyWrites ? 'write' : 'read';
  return { orgId: c.orgId, userId: c.userId, capability, source: { kind: 'ticket', claims: c } };
}

/**
 * The deprecated `token` query: a session or API-key credential, checked like a bearer header on the ticket route
 * (COLLAB_NEEDS through the core checkNeeds: a key without `documents:read` is 403 FORBIDDEN).
 */
export function sessionFromPrincipal(p: Principal): CollabSession {
  checkNeeds(COLLAB_NEEDS, p);
  return { orgId: p.orgId, userId: p.userId, capability: canWrite(p) ? 'write' : 'read', source: { kind: 'token', principal: p } };
}

/**
 * Re-checks an open socket's session after a credential change, with the rules of its admission: what a ticket binds
 * (sessionFromClaims), or the token's session or key (CredentialResolver.recheck, so an access token's own 15-minute
 * expiry does not end the socket, its session's does). Throws what a new connection would get (401 credential gone,
 * 403 feature, scope or permission lost), and 403 PERMISSION_DENIED when a write socket would now only be read-only
 * (capability never changes on an open socket; a promotion applies to the next connection).
 */
export async function recheckSession(platform: Platform, s: CollabSession): Promise<void> {
  const now = s.source.kind === 'ticket'
    ? await sessionFromClaims(platform, s.source.claims)
    : sessionFromPrincipal(await platform.credentials.recheck(s.source.principal));
  if (now.orgId !== s.orgId || now.userId !== s.userId) throw new AppError('AUTH_TOKEN_INVALID', 'The credential no longer names this user and organization');
  if (s.capability === 'write' && now.capability !== 'write') throw writeWithdrawn();
}

/** An open write socket whose credential now only allows reading: it is closed (4403), never silently downgraded. */
export const writeWithdrawn = () => new AppError('PERMISSION_DENIED', 'Write access was withdrawn; reconnect read-only', { permission: 'document.update' });

/** 404 unless the document exists in the organization and is of the kind this transport serves. */
export async function requireCollabDocument(platform: Platform, orgId: string, documentId: string, kinds: string[]): Promise<void> {
  const kind = await platform.db.tenant(orgId, (sql) => documentKind(sql, orgId, documentId));
  if (kind === undefined || !kinds.includes(kind)) throw notFound('Document');
}

/**
 * Loads the persisted CRDT state. A document without any (new, or its content replaced over REST) is
 * seeded from `content` once, under the row lock, so every node starts from the same initial update.
 */
export async function loadState(platform: Platform, orgId: string, documentId: string): Promise<Y.Doc> {
  return (await loadStateThrough(platform, orgId, documentId)).doc;
}

/** loadState, with the highest update seq the state was built from. */
export async function loadStateThrough(platform: Platform, orgId: string, documentId: string): Promise<{ doc: Y.Doc; seq: number }> {
  const doc = new Y.Doc();
  const rows = await platform.db.tenantTx(orgId, async (sql) => {
    const existing = await repo.documentUpdates(sql, orgId, documentId);
    if (existing.length) return existing;
    const content = await documentContent(sql, orgId, documentId, { forUpdate: true });
    if (content === undefined) throw notFound('Document');
    const again = await repo.documentUpdates(sql, orgId, documentId);
    if (again.length) return again;
    const seed = new Y.Doc();
    if (content) seed.getText(CONTENT_TEXT).insert(0, content);
    const data = Buffer.from(Y.encodeStateAsUpdate(seed));
    return [{ data, seq: await repo.insertUpdate(sql, orgId, documentId, data) }];
  });
  Y.transact(doc, () => { for (const r of rows) Y.applyUpdate(doc, new Uint8Array(r.data)); });
  return { doc, seq: Number(rows[rows.length - 1].seq) };
}

/**
 * Writes back the text of the document's stored updates (all of them, read now), unless one is stored meanwhile (its
 * writer saves then): the reconcile job's way, and a room's when other nodes may hold updates it has not heard.
 */
export async function saveStoredContent(platform: Platform, orgId: string, documentId: string): Promise<void> {
  const { doc, seq } = await loadStateThrough(platform, orgId, documentId);
  try { await saveContent(platform, orgId, documentId, doc.getText(CONTENT_TEXT).toString(), seq); } finally { doc.destroy(); }
}

/** Appends one update; returns how many rows the document now has (to decide on compaction). */
export async function appendUpdate(platform: Platform, orgId: string, documentId: string, update: Uint8Array): Promise<number> {
  return platform.db.tenant(orgId, (sql) => repo.appendUpdateCounted(sql, orgId, documentId, Buffer.from(update)));
}

/** Merges all updates up to now into one row (rows appended meanwhile by other nodes stay). */
export async function compact(platform: Platform, orgId: string, documentId: string): Promise<void> {
  await platform.db.tenantTx(orgId, async (sql) => {
    const rows = await repo.lockedDocumentUpdates(sql, orgId, documentId);
    if (rows.length < 2) return;
    const merged = Y.mergeUpdates(rows.map((r) => new Uint8Array(r.data)));
    const maxSeq = rows[rows.length - 1].seq;
    await repo.deleteUpdatesThrough(sql, orgId, documentId, maxSeq);
    await repo.insertMergedUpdate(sql, orgId, documentId, Buffer.from(merged));
  });
}

/** Writes the collaborative text back to `documents.content` and queues re-indexing. */
export async function saveContent(platform: Platform, orgId: string, documentId: string, text: string, throughSeq?: number): Promise<void> {
  // PostgreSQL cannot store a NUL character: one typed by an editor would fail every later save of the text.
  const content = text.replace(/\u0000/g, '\uFFFD');
  // A deck's REST content is always a valid deck (as a PUT would check it): edits merged character-wise can leave
  // the JSON broken for a while, and then the last valid content stays until the collaborative text is valid again.
  const deckValid = isValidDeck(content, platform.config.jsonMaxDepth);
  // The safety gate of a PUT: text the content policy refuses is not written to `content` (nor indexed or synced);
  // the last accepted content stays until the collaborative text passes again.
  const verdict = await documentsDeps(platform).moderation.check([content]);
  if (verdict.flagged) platform.log.warn({ orgId, documentId, categories: verdict.categories }, 'collaborative text refused by the content policy: content keeps its last accepted text');
  const changed = await platform.db.tenantTx(orgId, async (sql) => {
    // A room's text includes every update it appended (appends and saves run in order), so it is saved through the
    // highest seq. A text rebuilt from stored updates (collab-reconcile.ts) is saved only if no update came after
    // the ones it was built from: a room opened meanwhile writes its newer text itself.
    const stale = throughSeq !== undefined
      && await repo.hasUpdateAfter(sql, orgId, documentId, throughSeq);
    if (stale) return 0;
    const n = await repo.saveCollabContent(sql, orgId, documentId, content, deckValid, !verdict.flagged);
    if (n) await enqueue(sql, { orgId, kind: INDEX_JOB, payload: { id: documentId }, dedupeKey: documentId });
    await repo.markSavedThroughLatest(sql, orgId, documentId);
    return n;
  });
  if (changed) platform.jobs.poke();
}

/**
 * A room open on this node, or opening: it is registered before it reads the stored state, so that a REST write
 * committed while it loads is handed to it (`hear`, applied once it has loaded) instead of being stored behind its
 * back (the room would show the older text and write it back over the PUT's). `doc` once it has loaded.
 */
export interface LiveRoom { doc: Y.Doc | undefined; hear(update: Uint8Array): void }

/** Rooms open (or opening) on this node, by platform; rooms persist and broadcast every change of their Y.Doc. */
export const liveRooms = perPlatform((): Map<string, LiveRoom> => new Map());
export const roomKey = (orgId: string, documentId: string) => `${orgId}:${documentId}`;

/**
 * The origin of an update a REST write already stored (replaceContentInTx): a room applies it and relays it to its
 * sockets, and neither stores nor publishes it again.
 */
export const STORED = Symbol('stored by a REST write');

/**
 * A REST write of `content` continues the collaborative history instead of forking it: the text is replaced inside
 * the CRDT (delete-all + insert) and the update stored in the PUT's own transaction, which holds the document's row
 * lock (documents.service.ts updateDocument). Replacements of one document so run one after the other, on every node,
 * in the order their content commits, and each deletes what the one before inserted: two computed against the same
 * state would each keep their insert, and the text would end as both, glued. The delete covers the stored updates and
 * the room open on this node (its latest edits may not be stored yet). Returns the update, to be handed to the rooms
 * once committed (roomsHear), or undefined: the text is already that, or the document was never edited live.
 */
export async function replaceContentInTx(platform: Platform, sql: Sql, orgId: string, documentId: string, content: string): Promise<Uint8Array | undefined> {
  const rows = await repo.documentUpdates(sql, orgId, documentId);
  if (!rows.length) return undefined;
  const doc = new Y.Doc();
  try {
    Y.transact(doc, () => { for (const r of rows) Y.applyUpdate(doc, new Uint8Array(r.data)); });
    const open = liveRooms(platform).get(roomKey(orgId, documentId))?.doc;
    if (open) Y.applyUpdate(doc, Y.encodeStateAsUpdate(open));
    const before = Y.encodeStateVector(doc);
    const t = doc.getText(CONTENT_TEXT);
    if (t.toString() === content) return undefined;
    Y.transact(doc, () => { t.delete(0, t.length); t.insert(0, content); });
    const update = Y.encodeStateAsUpdate(doc, before);
    await repo.insertUpdate(sql, orgId, documentId, Buffer.from(update));
    return update;
  } finally { doc.destroy(); }
}

/**
 * After the commit of replaceContentInTx: the room open or opening on this node applies the update (and writes the text back),
 * and rooms open on other nodes (REDIS_URL) relay it to their sockets.
 */
export function roomsHear(platform: Platform, orgId: string, documentId: string, update: Uint8Array): void {
  // A room still loading may have read the state before this commit: it applies the update once loaded.
  liveRooms(platform).get(roomKey(orgId, documentId))?.hear(update);
  platform.fanout.publish(collabChannel(orgId, documentId), syncUpdateMessage(update));
}
