import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { WebSocket } from 'ws';
import { AppError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import * as sheets from '../../areas/documents/sheet-edit.service.js';
import { logSocket } from './socket-log.js';
import { UPGRADE_RESPONSES, requireWebSocketHandshake, requireWebSocketUpgrade } from './collab.routes.js';
import type { Workbook } from '../../areas/documents/sheet-model.js';
import { sharedDisplay } from '../../areas/documents/workbook-cache.js';
import { CredentialWatch } from './revalidate.js';
import { jsonDepthExceeds } from '../../core/http/json-parser.js';
import { sendBounded } from './send-bounded.js';
import { messageRateLimit } from './message-rate.js';
import { socketOwner, type SocketQuota } from './socket-quota.js';

declare module 'fastify' {
  interface FastifyRequest { sheetSession?: sheets.SheetSession; sheetSince?: number }
}

/** What the sheet sockets of one sheet hear, on this node and (REDIS_URL) on the others. */
type SheetNews = { t: 'cell'; cell: Record<string, unknown> } | { t: 'refresh' } | { t: 'deleted' };
/** SheetNews heard from another node, or null when it is not one (never trusted to be well formed). */
function readNews(m: Uint8Array): SheetNews | null {
  let v: unknown;
  try { v = JSON.parse(Buffer.from(m).toString('utf8')); } catch { return null; }
  if (typeof v !== 'object' || v === null) return null;
  const n = v as { t?: unknown; cell?: unknown };
  if (n.t === 'refresh' || n.t === 'deleted') return { t: n.t };
  if (n.t === 'cell' && typeof n.cell === 'object' && n.cell !== null && (n.cell as { type?: unknown }).type === 'cell') return { t: 'cell', cell: n.cell as Record<string, unknown> };
  return null;
}

/** Longest string a message's `id` may be (it is echoed in the answer). */
export const MAX_MESSAGE_ID = 200;
/**
 * A message's `id` as echoed in its answer: a string of at most MAX_MESSAGE_ID characters or a finite number; null
 * when absent; undefined when it is anything else (the message is refused: an array or object would be echoed as is).
 */
function messageId(id: unknown): string | number | null | undefined {
  if (id === undefined || id === null) return null;
  if (typeof id === 'string' && id.length <= MAX_MESSAGE_ID) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return undefined;
}

/** The fan-out channel of a sheet's sockets (key: `<org>:<document>`). */
const sheetChannel = (key: string) => `sheet:${key}`;

/** Both are needed (the route's `requiredQuery`), checked by the handler: the 426 of a request without Upgrade comes first. */
const Query = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 8192, description: 'the session access token (JWT; API keys are refused)' })),
  documentId: Type.Optional(Type.String({ maxLength: 64, description: 'id of the spreadsheet (a document of kind sheet)' })),
});

/**
 * GET /v1/sheet/ws: the spreadsheet grid socket (JSON messages, docs/documents.md). The server sends `snapshot` on
 * connect, before any other message, and `cell` after every edit; clients send `set`
 * (`{type, id?, sheet, cell, value?, formula?}`) and `ping`. Edits need write capability (document.update); others get an `error` message. After any credential
 * change the socket is admitted again (same rules, by the session behind the token): it closes with 4401 or 4403
 * when that fails, or with 4403 when a write socket would now be read-only; nothing sent after the change is applied.
 */
export default async function sheetSocketRoutes(app: FastifyInstance, opts: { sockets: SocketQuota }) {
  const { sockets: quota } = opts;
  const sockets = new Map<string, Set<WebSocket>>();
  const sessions = new WeakMap<WebSocket, sheets.SheetSession>();
  /** Sockets that were sent their first snapshot: only they hear news (cells, later snapshots). */
  const started = new WeakSet<WebSocket>();
  const watch = new CredentialWatch(app.platform);
  const maxDepth = app.platform.config.jsonMaxDepth;
  // Bounded: a socket that does not read is closed (1013), not buffered for (send-bounded.ts).
  const send = (ws: WebSocket, m: unknown) => { if (ws.readyState === 1) sendBounded(ws, JSON.stringify(m)); };
  // The displayed values cost a recalculation (bounded: sheet-model.ts): every snapshot of one stored text shares one
  // (readWorkbook hands out the node's parse of that text, which nothing changes: workbook-cache.ts).
  // Its text is made once per capability (`texts`), not once per socket: a workbook may be megabytes.
  const snapshot = (ws: WebSocket, s: sheets.SheetSession, wb: Workbook, display = sharedDisplay(wb), texts = new Map<string, string>()) => {
    if (ws.readyState !== 1) return;
    let text = texts.get(s.capability);
    if (text === undefined) texts.set(s.capability, (text = JSON.stringify({ type: 'snapshot', document_id: s.documentId, capability: s.capability, workbook: wb, display })));
    sendBounded(ws, text);
  };
  const fanout = app.platform.fanout;
  /**
   * Per sheet, one step at a time: its news and each socket's first snapshot. An edit is told after it committed, and a
   * snapshot is read and sent within its step: an edit told before the step is in what it reads, one told later is
   * sent after it. So a socket gets its snapshot before anything else, and never a snapshot older than a cell it got.
   */
  const lanes = new Map<string, Promise<void>>();
  const inLane = (key: string, step: () => Promise<void>): Promise<void> => {
    const done = (lanes.get(key) ?? Promise.resolve()).then(step);
    const settled = done.catch(() => {}); // a failed step does not hold up the next
    lanes.set(key, settled);
    void settled.then(() => { if (lanes.get(key) === settled) lanes.delete(key); });
    return done;
  };
  /** What happened to a sheet, for its sockets on this node; with REDIS_URL also published to the other nodes. */
  const apply = async (key: string, news: SheetNews): Promise<void> => {
    if (!sockets.get(key)?.size) return;
    await inLane(key, async () => {
      const peers = [...(sockets.get(key) ?? [])];
      if (news.t === 'deleted') for (const ws of peers) ws.close(4404, 'document deleted');
      // A socket waiting for its first snapshot hears nothing yet: that snapshot, read in a later step, holds this news.
      const listening = peers.filter((ws) => started.has(ws));
      if (!listening.length) return;
      if (news.t === 'cell') { const text = JSON.stringify(news.cell); for (const p of listening) sendBounded(p, text); }
      if (news.t === 'refresh') {
        const first = sessions.get(listening[0]);
        const wb = first && await sheets.readWorkbook(app.platform, first).catch(() => null);
        const display = wb && sharedDisplay(wb);
        const texts = new Map<string, string>();
        if (wb && display) for (const ws of listening) { const s = sessions.get(ws); if (s) snapshot(ws, s, wb, display, texts); }
      }
    });
  };
  const tell = (key: string, news: SheetNews) => {
    fanout.publish(sheetChannel(key), Buffer.from(JSON.stringify(news)));
    return apply(key, news);
  };
  /** This node's fan-out subscriptions, by sheet: one while the sheet has sockets here. */
  const heard = new Map<string, () => void>();
  // As the collaboration sockets: a deleted sheet closes its sockets (4404, clients stop reconnecting), and a REST
  // write of the sheet sends every socket of it the new snapshot (the grid would otherwise show the old workbook).
  const unsubscribe = app.platform.events.subscribe(async (e) => {
    if (!e.orgId || (e.type !== 'document.deleted' && e.type !== 'document.updated')) return;
    await tell(`${e.orgId}:${e.targetId}`, { t: e.type === 'document.deleted' ? 'deleted' : 'refresh' });
  });
  app.addHook('onClose', async () => { unsubscribe(); watch.close(); for (const stop of heard.values()) stop(); });
  app.route({
    method: 'GET', url: '/v1/sheet/ws',
    config: { auth: 'public', rateLimit: { key: 'ip' }, requiredQuery: ['token', 'documentId'] },
    schema: { summary: 'Spreadsheet grid WebSocket (session JWT in `token`, `documentId`)', querystring: Query, response: UPGRADE_RESPONSES },
    preHandler: async (req: FastifyRequest) => {
      const q = req.query as { token?: string; documentId?: string };
      // Spec 4.5: 426 without Upgrade: websocket, before any other check; then 400 for a malformed handshake.
      requireWebSocketHandshake(req);
      if (!q.documentId) throw new AppError('VALIDATION_ERROR', 'Query parameter "documentId" is required', { field: 'documentId' });
      if (!isUuid(q.documentId)) throw new AppError('INVALID_ID_FORMAT', 'Query parameter "documentId" must be a UUID', { field: 'documentId' });
      req.sheetSince = req.server.platform.credentials.changes;
      req.sheetSession = await sheets.openSheetSession(req.server.platform, q.token, q.documentId.toLowerCase());
      // After the 404, as the collaboration sockets: the user's open sockets, all three routes together (429).
      quota.admitConnection(socketOwner(req.sheetSession.principal), req.raw.socket);
    },
    handler: async (req) => requireWebSocketUpgrade(req),
    wsHandler: (socket: WebSocket, req: FastifyRequest) => {
      const s = req.sheetSession!;
      logSocket(socket, req, s.principal);
      const key = `${s.principal.orgId}:${s.documentId}`;
      const peers = sockets.get(key) ?? new Set<WebSocket>();
      sockets.set(key, peers);
      peers.add(socket);
      sessions.set(socket, s);
      if (!heard.has(key)) {
        heard.set(key, fanout.subscribe(sheetChannel(key), {
          message: (m) => {
            const news = readNews(m);
            if (!news) { app.platform.log.warn({ sheet: key }, 'unreadable sheet message from another node dropped'); return; }
            apply(key, news).catch((err) => app.platform.log.warn({ err, sheet: key }, 'sheet news not delivered'));
          },
          // Cells edited on other nodes while this one was cut off: the sockets here get the workbook again.
          resync: () => { apply(key, { t: 'refresh' }).catch((err) => app.platform.log.warn({ err, sheet: key }, 'sheet refresh not delivered')); },
        }));
      }
      socket.on('close', () => {
        peers.delete(socket);
        if (peers.size) return;
        sockets.delete(key);
        heard.get(key)?.();
        heard.delete(key);
      });
      // Re-admitted on every credential change (by the session behind the token); closed 4401/4403 when that fails.
      const gate = watch.watch(socket, req.sheetSince!, async () => {
        s.principal = await sheets.recheckSheetPrincipal(req.server.platform, s.principal, s.capability);
      });
      // The snapshot first (in the sheet's lane, see inLane); this socket's own answers (pong, ack, error) after it.
      let queue: Promise<void> = inLane(key, async () => {
        if (socket.readyState !== 1) return;
        snapshot(socket, s, await sheets.readWorkbook(req.server.platform, s));
        started.add(socket);
      }).catch(() => socket.close(1011, 'unavailable'));
      // Each message may cost a transaction and a recalculation: past the rate the socket is closed (1008).
      const withinRate = messageRateLimit(socket);
      socket.on('message', (raw: Buffer) => withinRate() && gate.run(() => {
        // Each step catches its own failure: a rejected step would be an unhandled rejection (the process would exit).
        queue = queue.then(() => answer(raw)).catch((err) => {
          req.log.warn({ err }, 'sheet socket message failed');
          socket.close(1011, 'unavailable');
        });
      }, raw.length));
      const answer = async (raw: Buffer): Promise<void> => {
        // Refused by a re-check meanwhile: nothing more is applied.
        if (socket.readyState !== 1) return;
        const text = raw.toString('utf8');
        // As HTTP bodies (JSON_MAX_DEPTH): JSON.parse takes any depth, but an echoed value that deep is no message.
        if (jsonDepthExceeds(text, maxDepth)) { send(socket, { type: 'error', id: null, code: 'PAYLOAD_TOO_LARGE', message: `JSON nesting deeper than ${maxDepth} levels` }); return; }
        let msg: { type?: string; id?: unknown } & sheets.CellEdit;
        try { msg = JSON.parse(text); } catch { send(socket, { type: 'error', id: null, code: 'INVALID_JSON', message: 'Messages are JSON objects' }); return; }
        const id = messageId(msg?.id);
        if (id === undefined) { send(socket, { type: 'error', id: null, code: 'VALIDATION_ERROR', message: `"id" must be a string of at most ${MAX_MESSAGE_ID} characters or a finite number` }); return; }
        if (msg?.type === 'ping') { send(socket, { type: 'pong', id }); return; }
        if (msg?.type !== 'set') { send(socket, { type: 'error', id, code: 'VALIDATION_ERROR', message: 'Unknown message type' }); return; }
        try {
          const r = await sheets.editCell(req.server.platform, s, msg);
          send(socket, { type: 'ack', id });
          await tell(key, { t: 'cell', cell: { type: 'cell', ...r, by: s.principal.userId } });
        } catch (err) {
          const e = err instanceof AppError ? err : new AppError('INTERNAL_ERROR', 'The edit failed; retry');
          send(socket, { type: 'error', id, code: e.code, message: e.message });
        }
      };
    },
  });
}
