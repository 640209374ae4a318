import { DEPRECATED_SINCE } from '../../core/http/guard.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import { Type } from 'typebox';
import type { WebSocket } from 'ws';
import { AppError } from '../../core/errors.js';
import { Envelope, ok } from '../../core/http/envelope.js';
import { isUuid } from '../../core/ids.js';
import { HandlerCheckedQuery } from '../../core/http/query-values.js';
import * as collab from '../../areas/documents/collab.service.js';
import { RoomRegistry } from './yjs-rooms.js';
import sheetSocketRoutes from './sheet.routes.js';
import { carryGuardHeadersIntoUpgrades } from './upgrade-headers.js';
import { CredentialWatch } from './revalidate.js';
import { dropDeadPeers } from './heartbeat.js';
import { logSocket } from './socket-log.js';
import { EARLY_MAX_BYTES, EARLY_MAX_FRAMES, LIMIT_CLOSE, MAX_FRAME_BYTES } from './collab-limits.js';
import { SocketQuota, socketOwner } from './socket-quota.js';

declare module 'fastify' {
  interface FastifyRequest { collab?: { session: collab.CollabSession; documentId: string | null; since: number } }
}

/** No length limits on the credentials: a malformed or repeated ticket/token is 401 (checked below), not a schema 400. */
const Credentials = {
  ticket: HandlerCheckedQuery(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'single-use ticket from POST /v1/collaboration/ticket (this or token)' })),
  token: HandlerCheckedQuery(Type.String({ deprecated: true, description: 'deprecated (spec 9): a bearer credential instead of a ticket' })),
};
/**
 * The routes without the id in the path take it in the query. The path variants read only the path (authenticate):
 * their query has no documentId, so the document does not offer two that could disagree.
 */
const queryFor = (kind: 'document' | 'deck') => Type.Object({
  ...Credentials,
  documentId: Type.Optional(Type.String({ maxLength: 64, description: `id of the ${kind} (a UUID); without it the socket opens and is closed with 4400` })),
});
const PathQuery = Type.Object(Credentials);
const paramsFor = (kind: 'document' | 'deck') => Type.Object({ documentId: Type.String({ format: 'uuid', description: `id of the ${kind}: the room name y-websocket clients append to the URL` }) });
const TicketBody = Type.Object({ scope: Type.Optional(Type.Union([Type.Literal('read'), Type.Literal('write')], { description: 'capability; default write when allowed' })) }, { additionalProperties: false });

/** Close code for a socket opened without a document id (4000-4999: application codes). */
export const NO_DOCUMENT_CLOSE = 4400;
/**
 * Close code for a socket whose organization reached its open rooms on the node between the check before the upgrade
 * (429) and the room's opening (another socket opened one meanwhile): 4000 + the HTTP status, as 4401/4403/4404.
 */
export const TOO_MANY_ROOMS_CLOSE = 4429;
/** Close code when the node's rooms reached their memory budget in that gap (503 before the upgrade): RFC 6455's "try again later". */
export const SERVER_BUSY_CLOSE = 1013;

/**
 * Spec 4.5/7: 426 answers a request without `Upgrade: websocket`. The WebSocket plugin marks every upgrade
 * request as a socket (`Upgrade: h2c` too, which the handshake would then refuse with a bare text/html 400
 * after the ticket was used up), so the header's value is checked here as well.
 */
export function requireWebSocketUpgrade(req: FastifyRequest): void {
  if (req.ws && /^websocket$/i.test(String(req.headers.upgrade ?? '').trim())) return;
  throw new AppError('UPGRADE_REQUIRED', 'This endpoint speaks WebSocket; send Upgrade: websocket', undefined, { headers: { Upgrade: 'websocket', Connection: 'Upgrade' } });
}

const WS_KEY_RE = /^[+/0-9A-Za-z]{22}==$/;
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * 426 without `Upgrade: websocket` (requireWebSocketUpgrade), then RFC 6455 4.2.1's other handshake headers, checked
 * before any ticket is redeemed or credential resolved: the socket library would otherwise refuse them only at the
 * upgrade, with a bare text/html 400, after a single-use ticket was spent. `Sec-WebSocket-Key` must be 16 bytes in
 * base64, `Sec-WebSocket-Version` 13, and `Sec-WebSocket-Protocol`, when sent, a list of distinct tokens.
 */
export function requireWebSocketHandshake(req: FastifyRequest): void {
  requireWebSocketUpgrade(req);
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !WS_KEY_RE.test(key)) {
    throw new AppError('VALIDATION_ERROR', 'Header "Sec-WebSocket-Key" is missing or not 16 bytes in base64 (RFC 6455)', { field: 'Sec-WebSocket-Key' });
  }
  if (String(req.headers['sec-websocket-version'] ?? '').trim() !== '13') {
    throw new AppError('VALIDATION_ERROR', 'Header "Sec-WebSocket-Version" must be 13', { field: 'Sec-WebSocket-Version' }, { headers: { 'Sec-WebSocket-Version': '13' } });
  }
  const protocol = req.headers['sec-websocket-protocol'];
  if (protocol !== undefined) {
    const names = String(protocol).split(',').map((n) => n.trim());
    if (names.some((n) => !TOKEN_RE.test(n)) || new Set(names).size !== names.length) {
      throw new AppError('VALIDATION_ERROR', 'Header "Sec-WebSocket-Protocol" must be a list of distinct protocol names', { field: 'Sec-WebSocket-Protocol' });
    }
  }
}

/** WebSocket routes: success is 101 Switching Protocols; OpenAPI has no WebSocket notion, so 2XX says so too. */
export const UPGRADE_RESPONSES = {
  101: Type.Null({ description: 'Switching Protocols: the connection continues as a WebSocket' }),
  200: Type.Null({ description: 'Not sent: a successful request upgrades (101) instead' }),
};

/** Whom a collaboration socket counts against (socketOwner): the ticket's key or user, or the token's. */
const ownerOf = (s: collab.CollabSession) => socketOwner(s.source.kind === 'ticket' ? s.source.claims : s.source.principal);

/**
 * Before the upgrade: 400 without ticket or token, 426 without Upgrade, 400 for a malformed handshake or document
 * id, then the ticket is redeemed (once) or the token resolved (and checked like the ticket route: 403 without
 * `documents:read`), the document checked (404), its organization's open rooms (429 COLLAB_ROOMS, 503), and last the
 * caller's open sockets (429 SOCKETS_PER_USER; admitted, the socket is counted until its connection closes). Without
 * a document id the socket opens and is closed at once with 4400 (counted while it lasts, as any socket).
 */
function authenticate(kinds: string[], rooms: RoomRegistry, sockets: SocketQuota) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as { ticket?: string | string[]; token?: string | string[]; documentId?: string };
    // The path variants' id is the path's: a documentId sent in their query is ignored (their schema has none).
    const documentId = (req.params as { documentId?: string }).documentId ?? q.documentId;
    if (!q.ticket && !q.token) throw new AppError('VALIDATION_ERROR', 'Query parameter "ticket" (from POST /v1/collaboration/ticket) or the deprecated "token" is required', { field: 'ticket' });
    // A request without Upgrade: websocket is 426 whatever else it carries, a malformed handshake 400 (the ticket is
    // not consumed by either).
    requireWebSocketHandshake(req);
    if (documentId && !isUuid(documentId)) throw new AppError('INVALID_ID_FORMAT', 'The document id must be a UUID', { field: 'documentId' });
    if ((q.ticket !== undefined && typeof q.ticket !== 'string') || (q.token !== undefined && typeof q.token !== 'string')) {
      throw new AppError('AUTH_TOKEN_INVALID', 'Query parameter "ticket" (or "token") must be given once');
    }
    // Credential changes from here on are caught by the socket's re-check (CredentialWatch).
    const since = req.server.platform.credentials.changes;
    let session: collab.CollabSession;
    if (q.ticket) session = await collab.redeemTicket(req.server.platform, q.ticket as string);
    else {
      reply.header('Deprecation', DEPRECATED_SINCE); // RFC 9745, as a legacy key's and a deprecated route's
      session = collab.sessionFromPrincipal(await req.server.platform.credentials.resolve(q.token as string));
    }
    // Spec 4.5 names only `ticket`/`token` as the query: a valid credential without a document id still
    // upgrades (the ticket is used up), then the socket is closed with 4400 naming what is missing.
    if (documentId) {
      await collab.requireCollabDocument(req.server.platform, session.orgId, documentId.toLowerCase(), kinds);
      // The ticket is used up by now: a client refused here fetches a new one, as after any closed socket.
      rooms.checkRoomLimit(session.orgId, documentId.toLowerCase());
    }
    // Last: nothing refuses the request after the admission (the count is released with the connection anyway).
    sockets.admitConnection(ownerOf(session), req.raw.socket);
    req.collab = { session, documentId: documentId ? documentId.toLowerCase() : null, since };
  };
}

/**
 * At shutdown every open socket (collaboration and sheets) gets a close frame with 1001 "going away" (RFC 6455 7.4.1),
 * which clients such as y-websocket treat as "reconnect", instead of the plugin's default close frame without a code.
 * Closing the WebSocket server also refuses upgrades that arrive meanwhile (503). The rooms save their state in the
 * onClose hook below, after this.
 */
function closeGoingAway(this: FastifyInstance, done: () => void): void {
  for (const client of this.websocketServer.clients) client.close(1001, 'server shutting down');
  this.websocketServer.close();
  done();
}

/** Collaboration over the y-websocket protocol (spec 4.5): documents at /v1/collaboration/ws, decks at /v1/yjs/ws. */
export default async function collaborationTransport(app: FastifyInstance) {
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES }, preClose: closeGoingAway });
  carryGuardHeadersIntoUpgrades(app);
  // Every socket of this server, the sheet's too (registered below, on the same WebSocket server).
  const stopHeartbeat = dropDeadPeers(app.websocketServer, app.platform.config.wsHeartbeatMs);
  const rooms = new RoomRegistry(app.platform);
  // One count for every socket of this server, the sheet's too (passed to its routes below).
  const sockets = new SocketQuota(app.platform.config.wsMaxSocketsPerUser);
  const watch = new CredentialWatch(app.platform);
  const unsubscribe = app.platform.events.subscribe((e) => {
    if (e.type === 'document.deleted') void rooms.evict(e.orgId, e.targetId);
  });
  app.addHook('onClose', async () => { stopHeartbeat(); unsubscribe(); watch.close(); await rooms.closeAll(); });

  app.post('/v1/collaboration/ticket', {
    config: { ...collab.COLLAB_NEEDS, bodyOptional: true },
    schema: { summary: 'A single-use 60-second ticket for the collaboration WebSocket', body: TicketBody,
      response: { 200: Envelope(Type.Object({ ticket: Type.String({ pattern: '^[0-9a-f]{64}$' }), expiresInSeconds: Type.Integer() })) } },
  }, async (req) => ok(await collab.issueTicket(req.ctx, req.body as { scope?: 'read' | 'write' })));

  const routes: Array<[string, 'document' | 'deck', string]> = [
    ['/v1/collaboration/ws', 'document', 'Collaborative editing of a document (y-websocket protocol; text in Y.Text "content")'],
    ['/v1/collaboration/ws/:documentId', 'document', 'Same, with the document id as the room segment y-websocket clients append'],
    ['/v1/yjs/ws', 'deck', 'CRDT transport for slide decks (y-websocket protocol)'],
    ['/v1/yjs/ws/:documentId', 'deck', 'Same, with the deck id as the room segment'],
  ];
  for (const [url, kind, summary] of routes) {
    const inPath = url.includes(':documentId');
    app.route({
      method: 'GET', url,
      config: { auth: 'public', rateLimit: { key: 'ip' }, ...(inPath ? { fixture: 'document' } : {}) },
      schema: { summary, ...(inPath ? { querystring: PathQuery, params: paramsFor(kind) } : { querystring: queryFor(kind) }), response: UPGRADE_RESPONSES },
      preHandler: authenticate([kind], rooms, sockets),
      handler: async (req) => requireWebSocketUpgrade(req),
      wsHandler: (socket: WebSocket, req: FastifyRequest) => {
        const c = req.collab!;
        logSocket(socket, req, c.session);
        if (!c.documentId) { socket.close(NO_DOCUMENT_CLOSE, 'document id required: append it to the path, …/ws/{documentId}'); return; }
        const documentId = c.documentId;
        // Closed (4401/4403) when a credential change leaves this session without what it was admitted with.
        const gate = watch.watch(socket, c.since, () => collab.recheckSession(req.server.platform, c.session));
        // Buffer messages that arrive while the room loads, up to EARLY_MAX_FRAMES and EARLY_MAX_BYTES (a stock
        // client sends two or three small ones before its first answer); past them the socket closes.
        const early: Buffer[] = [];
        let earlyBytes = 0;
        const hold = (d: Buffer) => {
          early.push(d);
          earlyBytes += d.length;
          if (early.length <= EARLY_MAX_FRAMES && earlyBytes <= EARLY_MAX_BYTES) return;
          socket.off('message', hold);
          early.length = 0;
          socket.close(LIMIT_CLOSE, `over ${EARLY_MAX_FRAMES} messages or ${EARLY_MAX_BYTES} bytes before the document loaded`);
        };
        socket.on('message', hold);
        rooms.get(c.session.orgId, documentId).then((room) => {
          socket.off('message', hold);
          // Closed while the room loaded: a room nobody joins would never close.
          if (socket.readyState !== 1) { room.releaseIfUnused(); return; }
          // A throw here would reject a promise no one handles (which ends the process): the socket closes instead.
          try {
            room.join(socket, c.session, gate);
            for (const d of early) socket.emit('message', d, true);
          } catch (err) {
            req.log.error({ err }, 'collaboration socket could not join its room'); socket.close(1011, 'unavailable');
          }
        }, (err) => {
          if (err instanceof AppError && err.code === 'RATE_LIMIT_EXCEEDED') { socket.close(TOO_MANY_ROOMS_CLOSE, 'too many documents open; retry later'); return; }
          if (err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE') { socket.close(SERVER_BUSY_CLOSE, 'server busy; retry later'); return; }
          req.log.warn({ err }, 'collaboration room failed to load'); socket.close(1011, 'unavailable');
        });
      },
    });
  }
  await app.register(sheetSocketRoutes, { sockets });
}
