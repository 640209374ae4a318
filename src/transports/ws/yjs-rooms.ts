import * as Y from 'yjs';
import * as syncProtocol from 'y-protocols/sync';
import * as awarenessProtocol from 'y-protocols/awareness';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import type { WebSocket } from 'ws';
import type { Platform } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import * as collab from '../../areas/documents/collab.service.js';
import { MAX_CONTENT_BYTES } from '../../areas/documents/documents.schemas.js';
import type { CredentialGate } from './revalidate.js';
import {
  MESSAGE_AWARENESS, MESSAGE_DOCUMENT_DELETED, MESSAGE_QUERY_AWARENESS, MESSAGE_SYNC,
  awarenessMessage, collabChannel, documentDeletedMessage, syncStep1Message, syncStep2Message, syncUpdateMessage,
} from '../../areas/documents/collab-messages.js';
import {
  COLLAB_MESSAGE_BURST, COLLAB_MESSAGES_PER_SECOND, LIMIT_CLOSE, LimitRefusal, MAX_AWARENESS_CLIENTS_PER_SOCKET, MAX_PENDING_BYTES, MAX_ROOM_AWARENESS_BYTES,
  QUERY_AWARENESS_INTERVAL_MS, STATE_REQUEST_INTERVAL_MS,
  readAwarenessUpdate, type AwarenessEntry,
} from './collab-limits.js';
import { sendBounded } from './send-bounded.js';
import { messageRateLimit } from './message-rate.js';
import { tooManyOpen } from './socket-quota.js';

const SAVE_DEBOUNCE_MS = 300;
/** The origin of changes heard from another node: relayed to this node's sockets, neither stored nor published again. */
const REMOTE = Symbol('another node');
/** A room asks the other nodes for what it lacks at most this often (later asks wait for the next slot). */
const ASK_MIN_INTERVAL_MS = 1_000;
/**
 * The whole CRDT state of a document (its `content` text with its history, and any other shared type) is bounded at
 * three times the content limit: room for the text at its limit and for the CRDT's own bookkeeping, not for data
 * without end.
 */
export const MAX_STATE_BYTES = 3 * MAX_CONTENT_BYTES;
/**
 * How much an update may grow the encoded state per byte of its own: an edit inside existing text splits the items
 * it lands in (measured: deleting every other character grew the state 5.3 times the update's size), so the
 * estimate counts 8 and is corrected by a measurement near the limit.
 */
const STATE_GROWTH_PER_BYTE = 8;
/** A write-back that failed (the database or the moderation service out of reach) is tried again this much later. */
const SAVE_RETRY_MS = 2_000;

/**
 * A socket of the room: `clientIds` are the awareness client ids it introduced (the only ones it may set or remove
 * states of; kept after it removed their states, so that it cannot go through ids without end, each leaving its
 * entry in the awareness' meta data), `lastQueryAt` when its last query-awareness was answered, `lastStateAt` when its
 * last state request was, and `deferredState` the newest request waiting for the end of that interval.
 */
interface Conn {
  session: collab.CollabSession; clientIds: Set<number>; lastQueryAt: number;
  lastStateAt: number; deferredState?: { timer: NodeJS.Timeout; request: Uint8Array };
}

/** What a room tells its registry. */
interface RoomHooks {
  /** Its last socket left. */
  empty(room: Room): void;
  /** Another node deleted the document. */
  deleted(room: Room): void;
}

/**
 * One shared Y.Doc per open document on this node: relays sync and awareness messages between the
 * document's sockets, appends every update to PostgreSQL (compacting past COMPACT_AFTER rows) and
 * writes the `content` text back to the document shortly after changes stop. With REDIS_URL it also relays them to
 * the document's rooms on other nodes (platform.fanout): each node stores the updates its own sockets made, and
 * every node's sockets see every update.
 */
export class Room {
  readonly doc: Y.Doc;
  readonly awareness: awarenessProtocol.Awareness;
  readonly conns = new Map<WebSocket, Conn>();
  private chain: Promise<void> = Promise.resolve();
  private saveTimer: NodeJS.Timeout | null = null;
  private compacting = false;
  private discarded = false;
  private readonly channel: string;
  private lastAskAt = 0;
  private askTimer: NodeJS.Timeout | null = null;
  /**
   * An estimate (meant as an upper bound) of the size of the document's whole CRDT state, every shared type and not
   * only the `content` text: measured at open, then grown by STATE_GROWTH_PER_BYTE times every update's size;
   * measured again only near MAX_STATE_BYTES.
   */
  private stateBytes: number;
  /** The size of the document's state when the room opened (what the registry counts against the node's budget). */
  readonly openedBytes: number;
  /** The size of each awareness state the room holds (its JSON text), and their sum. */
  private readonly awarenessSizes = new Map<number, number>();
  private awarenessBytes = 0;
  /** The sizes of the states being applied, read by the awareness `update` listener. */
  private incoming: Map<number, number> | null = null;

  /**
   * `unsubscribe` ends the room's subscription to its fan-out channel, which the registry opened before it read the
   * state (so nothing published meanwhile is missed) and which delivers to onRemote() and resync().
   */
  constructor(private readonly platform: Platform, readonly orgId: string, readonly documentId: string, doc: Y.Doc,
    private readonly hooks: RoomHooks, private readonly unsubscribe: () => void) {
    this.doc = doc;
    this.channel = collabChannel(orgId, documentId);
    this.stateBytes = this.openedBytes = Y.encodeStateAsUpdate(doc).length;
    this.awareness = new awarenessProtocol.Awareness(doc);
    this.awareness.setLocalState(null);
    doc.on('update', (update: Uint8Array, origin: unknown) => this.onUpdate(update, origin));
    this.awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
      for (const id of [...added, ...updated]) this.setAwarenessSize(id, this.incoming?.get(id) ?? this.awarenessSizes.get(id) ?? 0);
      for (const id of removed) this.setAwarenessSize(id, 0);
      // Called from socket close events and the awareness' own timer too: nothing may throw out of it.
      try {
        const msg = awarenessMessage(awarenessProtocol.encodeAwarenessUpdate(this.awareness, [...added, ...updated, ...removed]));
        this.broadcast(msg);
        if (origin !== REMOTE) this.platform.fanout.publish(this.channel, msg);
      } catch (err) {
        this.platform.log.error({ err, documentId: this.documentId }, 'collaboration awareness change not relayed');
      }
    });
    // What other nodes' rooms have and the database does not yet (updates they are still storing), they send in
    // answer to the state vector.
    if (platform.fanout.shared) this.askForState();
  }

  private onUpdate(update: Uint8Array, origin: unknown): void {
    this.stateBytes += update.length * STATE_GROWTH_PER_BYTE;
    if (this.discarded) return;
    const msg = syncUpdateMessage(update);
    this.broadcast(msg, origin as WebSocket);
    // The update is stored by the node its socket came to (a REST write stored it with its content, and published
    // it: origin STORED); the content write-back below runs on every node with the room open (see save()).
    if (origin !== REMOTE && origin !== collab.STORED) this.store(update, msg);
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => { this.saveTimer = null; void this.save(); }, SAVE_DEBOUNCE_MS);
  }

  /** Appends an update made on this node to PostgreSQL and tells the document's rooms on other nodes. */
  private store(update: Uint8Array, msg: Uint8Array): void {
    this.platform.fanout.publish(this.channel, msg);
    this.chain = this.chain.then(async () => {
      const rows = await collab.appendUpdate(this.platform, this.orgId, this.documentId, update);
      if (rows > collab.COMPACT_AFTER && !this.compacting) {
        this.compacting = true;
        try { await collab.compact(this.platform, this.orgId, this.documentId); } finally { this.compacting = false; }
      }
    }).catch((err) => this.platform.log.error({ err, documentId: this.documentId }, 'collaboration update not persisted'));
  }

  /** Asks the document's rooms on other nodes for what this one lacks (they answer a sync step 1 with a step 2). */
  private askForState(): void {
    if (this.discarded) return;
    this.lastAskAt = Date.now();
    this.platform.fanout.publish(this.channel, syncStep1Message(this.doc));
  }

  /** askForState() now, or at the next slot when it asked within ASK_MIN_INTERVAL_MS (one ask waits, never more). */
  private askSoon(): void {
    if (this.askTimer || this.discarded) return;
    const wait = Math.max(0, this.lastAskAt + ASK_MIN_INTERVAL_MS - Date.now());
    if (wait === 0) { this.askForState(); return; }
    this.askTimer = setTimeout(() => { this.askTimer = null; this.askForState(); }, wait);
  }

  /**
   * Messages may have been lost between this node and the others (its Redis connection dropped, or a publish failed,
   * here or on another node): it asks the others' rooms for what it lacks, sends its delete set, which a state
   * vector does not show (an edit that only deleted text changes no clock, so nobody would ask for it), and reads
   * the stored updates (the node that stored what it missed may have closed its room since).
   */
  resync(): void {
    if (this.discarded) return;
    this.askSoon();
    this.platform.fanout.publish(this.channel, syncStep2Message(Y.encodeStateAsUpdate(this.doc, Y.encodeStateVector(this.doc))));
    this.chain = this.chain.then(async () => {
      const { doc } = await collab.loadStateThrough(this.platform, this.orgId, this.documentId);
      try {
        if (!this.discarded) Y.applyUpdate(this.doc, Y.encodeStateAsUpdate(doc, Y.encodeStateVector(this.doc)), REMOTE);
      } finally { doc.destroy(); }
    }).catch((err) => this.platform.log.warn({ err, documentId: this.documentId }, 'collaboration room could not read the stored updates'));
  }

  /** A message from the document's room on another node; one that cannot be read is logged and dropped. */
  onRemote(msg: Uint8Array): void {
    if (this.discarded) return;
    try { this.applyRemote(msg); } catch (err) {
      this.platform.log.warn({ err, documentId: this.documentId }, 'unreadable collaboration message from another node dropped');
    }
  }

  private applyRemote(msg: Uint8Array): void {
    const dec = decoding.createDecoder(msg);
    const type = decoding.readVarUint(dec);
    if (type === MESSAGE_DOCUMENT_DELETED) { this.hooks.deleted(this); return; }
    if (type === MESSAGE_AWARENESS) {
      // Checked as a socket's (another node runs the same checks on its sockets, but may run older code): a state
      // past the bounds throws (logged and dropped by onRemote).
      const update = decoding.readVarUint8Array(dec);
      const entries = readAwarenessUpdate(update, this.platform.config.jsonMaxDepth, Number.POSITIVE_INFINITY);
      if (this.fitsAwarenessBudget(entries)) this.applyAwareness(update, entries, REMOTE);
      else this.platform.log.warn({ documentId: this.documentId }, 'awareness from another node dropped: the room holds its most awareness data');
      return;
    }
    if (type !== MESSAGE_SYNC) return;
    if (decoding.readVarUint(dec) === syncProtocol.messageYjsSyncStep1) {
      const theirs = decoding.readVarUint8Array(dec);
      const diff = Y.encodeStateAsUpdate(this.doc, theirs);
      if (diff.length > 2) this.platform.fanout.publish(this.channel, syncStep2Message(diff));
      // They have updates this room lacks (stored by their sockets while this node was cut off): ask back.
      if (hasMore(Y.decodeStateVector(theirs), Y.decodeStateVector(Y.encodeStateVector(this.doc)))) this.askSoon();
      return;
    }
    Y.applyUpdate(this.doc, decoding.readVarUint8Array(dec), REMOTE);
    // An update that depends on one this room never heard (lost while Redis was out of reach) waits in the doc:
    // the missing ones are asked for (the answer carries what was dropped here past the bound, too).
    const waiting = this.pendingBytes();
    if (waiting > MAX_PENDING_BYTES) this.dropPending();
    if (waiting > 0) this.askSoon();
  }

  /**
   * The size of what Yjs keeps waiting in the doc: updates (and deletions) it cannot integrate before the changes
   * they depend on arrive. They count in no state bound (the doc grows only once they integrate) and Yjs merges every
   * new one into them, so they are bounded apart (MAX_PENDING_BYTES).
   */
  private pendingBytes(): number {
    const store = this.doc.store as unknown as { pendingStructs: { update: Uint8Array } | null; pendingDs: Uint8Array | null };
    return (store.pendingStructs?.update.length ?? 0) + (store.pendingDs?.length ?? 0);
  }

  /**
   * Forgets what waits: none of it was applied, stored or relayed, and a client that sent it sends it again when it
   * next syncs (its sync step 2 carries everything the room lacks).
   */
  private dropPending(): void {
    const store = this.doc.store as unknown as { pendingStructs: unknown; pendingDs: unknown };
    store.pendingStructs = null;
    store.pendingDs = null;
  }

  private async save(): Promise<void> {
    if (this.discarded) return;
    const text = this.doc.getText(collab.CONTENT_TEXT).toString();
    // With other nodes (REDIS_URL), this room may not have heard every stored update (a message lost while Redis was
    // out of reach): the text written back is then built from the stored updates, so that it says what it covers.
    this.chain = this.chain.then(() => (this.platform.fanout.shared
      ? collab.saveStoredContent(this.platform, this.orgId, this.documentId)
      : collab.saveContent(this.platform, this.orgId, this.documentId, text)))
      .catch((err) => { this.platform.log.error({ err, documentId: this.documentId }, 'collaboration content not saved'); this.retrySave(); });
    await this.chain;
  }

  /**
   * Tries a failed write-back again while the room is open (without it, the content stayed stale until the next edit
   * or until the room closed); once the room has closed, the reconcile job (collab-reconcile.ts) takes over.
   */
  private retrySave(): void {
    if (this.discarded || this.saveTimer || this.conns.size === 0) return;
    this.saveTimer = setTimeout(() => { this.saveTimer = null; void this.save(); }, SAVE_RETRY_MS);
  }

  private broadcast(msg: Uint8Array, except?: WebSocket): void {
    for (const ws of this.conns.keys()) if (ws !== except) send(ws, msg);
  }

  /**
   * Adds a socket: sends sync step 1 and the current awareness, then handles its messages through `gate` (held while
   * its credential is re-checked after a change, dropped once that failed).
   */
  join(ws: WebSocket, session: collab.CollabSession, gate: CredentialGate): void {
    this.conns.set(ws, { session, clientIds: new Set(), lastQueryAt: 0, lastStateAt: 0 });
    ws.binaryType = 'arraybuffer';
    // Past the rate the socket is closed (1008); its client reconnects and syncs what the room lacks, so nothing is lost.
    const withinRate = messageRateLimit(ws, COLLAB_MESSAGES_PER_SECOND, COLLAB_MESSAGE_BURST);
    ws.on('message', (data: ArrayBuffer | Buffer) => {
      if (!withinRate()) return;
      const bytes = new Uint8Array(data instanceof ArrayBuffer ? data : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
      gate.run(() => {
        try { this.onMessage(ws, bytes); } catch (err) {
          if (err instanceof LimitRefusal) { ws.close(LIMIT_CLOSE, err.message); return; }
          this.platform.log.warn({ err }, 'bad collaboration message');
          ws.close(1003, 'bad message');
        }
      }, bytes.byteLength);
    });
    ws.on('close', () => this.leave(ws));
    send(ws, syncStep1Message(this.doc));
    if (this.awareness.getStates().size) this.sendAwareness(ws);
  }

  /** Sends a socket every awareness state of the room; one that cannot be encoded closes the socket (1011), never throws. */
  private sendAwareness(ws: WebSocket): void {
    let msg: Uint8Array;
    try {
      msg = awarenessMessage(awarenessProtocol.encodeAwarenessUpdate(this.awareness, [...this.awareness.getStates().keys()]));
    } catch (err) {
      this.platform.log.error({ err, documentId: this.documentId }, 'collaboration awareness could not be encoded');
      ws.close(1011, 'unavailable');
      return;
    }
    send(ws, msg);
  }

  /**
   * A socket's awareness update, checked before it is applied (readAwarenessUpdate's bounds, LimitRefusal past them).
   * A socket may set and remove the states of the client ids it introduced, at most MAX_AWARENESS_CLIENTS_PER_SOCKET
   * over its life (its first entry for an id no one holds introduces it); an update naming an id that another socket, here or on
   * another node, holds is dropped (a spoofed presence, or a client that reconnected before its old socket was seen
   * gone: its state shows once that one has left and it renews it), as is one that would take the room's states
   * past MAX_ROOM_AWARENESS_BYTES.
   */
  private onAwareness(ws: WebSocket, conn: Conn, update: Uint8Array): void {
    const entries = readAwarenessUpdate(update, this.platform.config.jsonMaxDepth, MAX_AWARENESS_CLIENTS_PER_SOCKET);
    const claims = new Set(conn.clientIds);
    for (const e of entries) {
      if (conn.clientIds.has(e.clientId)) continue;
      if (this.awareness.getStates().has(e.clientId) || [...this.conns.values()].some((c) => c.clientIds.has(e.clientId))) {
        this.platform.log.info({ documentId: this.documentId, clientId: e.clientId }, 'awareness for a client id held by another socket dropped');
        return;
      }
      claims.add(e.clientId);
    }
    if (claims.size > MAX_AWARENESS_CLIENTS_PER_SOCKET) throw new LimitRefusal(`awareness for over ${MAX_AWARENESS_CLIENTS_PER_SOCKET} client ids`);
    if (!this.fitsAwarenessBudget(entries)) {
      this.platform.log.warn({ documentId: this.documentId }, 'awareness dropped: the room holds its most awareness data');
      return;
    }
    for (const id of claims) conn.clientIds.add(id);
    this.applyAwareness(update, entries, ws);
  }

  /** Whether the room's awareness states stay within MAX_ROOM_AWARENESS_BYTES with these, or at least do not grow. */
  private fitsAwarenessBudget(entries: AwarenessEntry[]): boolean {
    let after = this.awarenessBytes;
    for (const e of entries) after += (e.removal ? 0 : e.bytes) - (this.awarenessSizes.get(e.clientId) ?? 0);
    return after <= MAX_ROOM_AWARENESS_BYTES || after <= this.awarenessBytes;
  }

  private applyAwareness(update: Uint8Array, entries: AwarenessEntry[], origin: unknown): void {
    this.incoming = new Map(entries.map((e) => [e.clientId, e.bytes]));
    try { awarenessProtocol.applyAwarenessUpdate(this.awareness, update, origin); } finally { this.incoming = null; }
  }

  private setAwarenessSize(clientId: number, bytes: number): void {
    this.awarenessBytes += bytes - (this.awarenessSizes.get(clientId) ?? 0);
    if (bytes > 0) this.awarenessSizes.set(clientId, bytes); else this.awarenessSizes.delete(clientId);
  }

  /** What the registry counts against the node's budget: the state as loaded and the awareness states held. */
  budgetBytes(): number {
    return this.openedBytes + this.awarenessBytes;
  }

  private onMessage(ws: WebSocket, msg: Uint8Array): void {
    const conn = this.conns.get(ws);
    // A closing socket (refused by a credential re-check, or over the limit) applies nothing more.
    if (!conn || ws.readyState !== 1) return;
    const dec = decoding.createDecoder(msg);
    const enc = encoding.createEncoder();
    const type = decoding.readVarUint(dec);
    if (type === MESSAGE_SYNC) {
      encoding.writeVarUint(enc, MESSAGE_SYNC);
      // A state request (every client sends one on connecting, read-only ones too) changes nothing: paced, no other limit.
      if (decoding.peekVarUint(dec) === syncProtocol.messageYjsSyncStep1) { this.requestState(ws, conn, msg); return; }
      // Read-only sockets may ask for state, but their edits (step 2, updates) are dropped.
      if (conn.session.capability === 'read') return;
      if (!this.fitsContentLimit(msg)) {
        // Spec 8 "document save content 10 MB", as on REST: the edit is not applied, and the socket closes (1009,
        // "message too big") so the client learns why; its local copy keeps the edit, the server's does not.
        ws.close(1009, `content over ${MAX_CONTENT_BYTES} bytes`);
        return;
      }
      if (!this.fitsStateLimit(msg)) {
        // Shared types other than `content` (an editor's own, or anything a client makes up) are stored and sent to
        // every collaborator too: the whole state is bounded, or one client could grow a document without limit.
        ws.close(1009, `document state over ${MAX_STATE_BYTES} bytes`);
        return;
      }
      syncProtocol.readSyncMessage(dec, enc, this.doc, ws);
      if (this.pendingBytes() > MAX_PENDING_BYTES) {
        // Updates that depend on changes nobody sent, past the bound: a stock client never leaves more than a few
        // edits waiting (it sends what the room lacks when it connects).
        this.dropPending();
        throw new LimitRefusal(`over ${MAX_PENDING_BYTES} bytes of updates waiting for missing ones`);
      }
      if (encoding.length(enc) > 1) send(ws, encoding.toUint8Array(enc));
    } else if (type === MESSAGE_AWARENESS) {
      this.onAwareness(ws, conn, decoding.readVarUint8Array(dec));
    } else if (type === MESSAGE_QUERY_AWARENESS) {
      // Each answer carries every state of the room: one per interval, more are dropped.
      const now = Date.now();
      if (now - conn.lastQueryAt < QUERY_AWARENESS_INTERVAL_MS) return;
      conn.lastQueryAt = now;
      this.sendAwareness(ws);
    }
  }

  /**
   * Whether the document's text stays within MAX_CONTENT_BYTES of UTF-8 once this sync message is applied. An update
   * adds at most its own size in bytes, so far from the limit nothing is measured; near it, the message is tried on
   * a copy of the document (deletions shrink the text, so only the result tells).
   */
  private fitsContentLimit(msg: Uint8Array): boolean {
    const text = this.doc.getText(collab.CONTENT_TEXT);
    if (text.length * 3 + msg.length <= MAX_CONTENT_BYTES) return true;
    const current = text.toString();
    if (Buffer.byteLength(current, 'utf8') + msg.length <= MAX_CONTENT_BYTES) return true;
    const copy = new Y.Doc();
    Y.applyUpdate(copy, Y.encodeStateAsUpdate(this.doc));
    const dec = decoding.createDecoder(msg);
    decoding.readVarUint(dec); // the message type (sync)
    syncProtocol.readSyncMessage(dec, encoding.createEncoder(), copy, null);
    const fits = Buffer.byteLength(copy.getText(collab.CONTENT_TEXT).toString(), 'utf8') <= MAX_CONTENT_BYTES;
    copy.destroy();
    return fits;
  }

  /**
   * Whether the document's whole CRDT state stays within MAX_STATE_BYTES once this message is applied, or at least
   * does not grow (a document at the limit can still be edited down). Far from the limit the estimate answers;
   * near it, the message is tried on a copy of the document and the result measured, which also corrects the
   * estimate.
   */
  private fitsStateLimit(msg: Uint8Array): boolean {
    if (this.stateBytes + msg.length * STATE_GROWTH_PER_BYTE <= MAX_STATE_BYTES) return true;
    const before = Y.encodeStateAsUpdate(this.doc);
    const copy = new Y.Doc();
    Y.applyUpdate(copy, before);
    const dec = decoding.createDecoder(msg);
    decoding.readVarUint(dec); // the message type (sync)
    syncProtocol.readSyncMessage(dec, encoding.createEncoder(), copy, null);
    const after = Y.encodeStateAsUpdate(copy).length;
    copy.destroy();
    this.stateBytes = Math.max(before.length, after);
    return after <= MAX_STATE_BYTES || after <= before.length;
  }

  /**
   * Answers a state request (sync step 1: the client's state vector) with what the room holds beyond it, at most once
   * per STATE_REQUEST_INTERVAL_MS a socket: one within the interval waits for its end, the newest of those answered.
   */
  private requestState(ws: WebSocket, conn: Conn, request: Uint8Array): void {
    const wait = conn.lastStateAt + STATE_REQUEST_INTERVAL_MS - Date.now();
    if (wait > 0) {
      if (conn.deferredState) { conn.deferredState.request = request; return; }
      const timer = setTimeout(() => {
        const deferred = conn.deferredState;
        conn.deferredState = undefined;
        if (!deferred || this.conns.get(ws) !== conn || ws.readyState !== 1) return;
        // Off the message handler's catch: a malformed request closes the socket here (a throw in a timer would end the process).
        try { this.requestState(ws, conn, deferred.request); } catch (err) {
          this.platform.log.warn({ err }, 'bad collaboration message');
          ws.close(1003, 'bad message');
        }
      }, wait);
      timer.unref();
      conn.deferredState = { timer, request };
      return;
    }
    conn.lastStateAt = Date.now();
    const dec = decoding.createDecoder(request);
    decoding.readVarUint(dec); // MESSAGE_SYNC
    decoding.readVarUint(dec); // messageYjsSyncStep1
    const enc = encoding.createEncoder();
    encoding.writeVarUint(enc, MESSAGE_SYNC);
    syncProtocol.readSyncStep1(dec, enc, this.doc);
    send(ws, encoding.toUint8Array(enc));
  }

  private leave(ws: WebSocket): void {
    const conn = this.conns.get(ws);
    if (!conn) return;
    if (conn.deferredState) clearTimeout(conn.deferredState.timer);
    this.conns.delete(ws);
    awarenessProtocol.removeAwarenessStates(this.awareness, [...conn.clientIds], null);
    if (this.conns.size === 0) this.hooks.empty(this);
  }

  /** Persists what is pending (appends and the content write-back). */
  async flush(): Promise<void> {
    if (this.saveTimer) { clearTimeout(this.saveTimer); this.saveTimer = null; }
    await this.save();
  }

  /** Applies a REST write of the text, stored and published by its writer (collab.roomsHear). */
  hear(update: Uint8Array): void {
    if (!this.discarded) Y.applyUpdate(this.doc, update, collab.STORED);
  }

  /** Whether a change waits for its write-back. */
  unsaved(): boolean {
    return this.saveTimer !== null;
  }

  /** Stops persisting (the document is gone). */
  discard(): void {
    if (this.saveTimer) { clearTimeout(this.saveTimer); this.saveTimer = null; }
    if (this.askTimer) { clearTimeout(this.askTimer); this.askTimer = null; }
    this.discarded = true;
  }

  /** Closes the room if no socket joined it (the one it was opened for closed while it loaded). */
  releaseIfUnused(): void {
    if (this.conns.size === 0) this.hooks.empty(this);
  }

  destroy(): void {
    if (this.saveTimer) { clearTimeout(this.saveTimer); this.saveTimer = null; }
    if (this.askTimer) { clearTimeout(this.askTimer); this.askTimer = null; }
    this.unsubscribe();
    for (const ws of this.conns.keys()) ws.close(1001, 'server closing');
    this.awareness.destroy();
    this.doc.destroy();
  }
}

/** Whether a state vector has an update (a client's clock) past another's. */
function hasMore(a: Map<number, number>, b: Map<number, number>): boolean {
  for (const [client, clock] of a) if (clock > (b.get(client) ?? 0)) return true;
  return false;
}

/**
 * Sends a message to a socket unless its peer is far behind (it does not read, or reads slower than the room changes):
 * that socket is closed instead (1013, send-bounded.ts), so that what a room sends cannot pile up in the server's
 * memory. Its client reconnects and syncs. The bound counts beyond the largest message the socket was sent (a whole
 * document state, up to 30 MiB, comes in one message when a client connects).
 */
function send(ws: WebSocket, msg: Uint8Array): void {
  sendBounded(ws, msg);
}

/** How long a client refused for too many open rooms is asked to wait (rooms close when their last socket leaves). */
export const ROOMS_RETRY_AFTER_SECONDS = 30;

/**
 * Rooms of one platform on this node; a room loads once and closes when its last socket leaves. Each holds its
 * document's whole state in memory (up to MAX_STATE_BYTES), so one organization may have at most
 * `collabMaxRoomsPerOrg` rooms open (or opening) on the node, and no room opens while the open ones hold
 * `collabRoomsMaxBytes`: without a bound, one tenant opening sockets on many large documents grows the process until
 * it fails for every tenant.
 */
export class RoomRegistry {
  private rooms = new Map<string, Promise<Room>>();
  /** The rooms of `rooms` that have loaded (looked up without waiting). */
  private loaded = new Map<string, Room>();
  constructor(private readonly platform: Platform) {}

  /**
   * 429 RATE_LIMIT_EXCEEDED (with Retry-After) when opening this document would take its organization past its open
   * rooms on this node, 503 SERVICE_UNAVAILABLE when the node's rooms already hold their memory budget; joining a
   * room already open is always allowed.
   */
  checkRoomLimit(orgId: string, documentId: string): void {
    if (this.rooms.has(collab.roomKey(orgId, documentId))) return;
    const max = this.platform.config.collabMaxRoomsPerOrg;
    let open = 0;
    for (const key of this.rooms.keys()) if (key.startsWith(`${orgId}:`)) open++;
    if (open >= max) {
      throw tooManyOpen(`This organization has ${max} documents open for collaboration on this server, the most it may; retry once one has closed`,
        max, 'COLLAB_ROOMS', ROOMS_RETRY_AFTER_SECONDS);
    }
    this.checkMemory();
  }

  /**
   * The node's budget: the rooms' states as they were loaded, with the awareness states they hold. A room still
   * loading counts once it has loaded, so the check runs again then (get): of rooms opened at once, those that finish
   * loading after the budget is reached are refused too, and the rooms exceed it by one room's size at most.
   */
  private checkMemory(): void {
    let bytes = 0;
    for (const room of this.loaded.values()) bytes += room.budgetBytes();
    if (bytes < this.platform.config.collabRoomsMaxBytes) return;
    throw new AppError('SERVICE_UNAVAILABLE', 'This server holds as many documents open for collaboration as it may; retry shortly',
      { retryAfterSeconds: ROOMS_RETRY_AFTER_SECONDS, reason: 'COLLAB_MEMORY' }, { headers: { 'Retry-After': String(ROOMS_RETRY_AFTER_SECONDS) } });
  }

  /** The document's room, opened (loaded) if it is not open yet; rejects with checkRoomLimit's 429 or 503 past a bound. */
  get(orgId: string, documentId: string): Promise<Room> {
    const key = collab.roomKey(orgId, documentId);
    let r = this.rooms.get(key);
    if (!r) {
      try { this.checkRoomLimit(orgId, documentId); } catch (err) { return Promise.reject(err); }
      // Subscribed before the state is read, so that nothing another node publishes meanwhile is missed: what it
      // sends before the room exists is applied once it does. Registered before it too, for REST writes on this node
      // (collab.roomsHear): one committed after the state was read is applied once the room exists, and one
      // committed before is in the state read.
      let room: Room | undefined;
      const early: Uint8Array[] = [];
      const heard: Uint8Array[] = [];
      const unsubscribe = this.platform.fanout.subscribe(collabChannel(orgId, documentId), {
        message: (m) => { if (room) room.onRemote(m); else early.push(m); },
        resync: () => room?.resync(),
      });
      const entry: collab.LiveRoom = { doc: undefined, hear: (u) => { if (room) room.hear(u); else heard.push(u); } };
      collab.liveRooms(this.platform).set(key, entry);
      r = collab.loadState(this.platform, orgId, documentId).then((doc) => {
        try { this.checkMemory(); } catch (err) { doc.destroy(); throw err; }
        room = new Room(this.platform, orgId, documentId, doc, {
          empty: (empty) => void this.close(key, empty),
          deleted: () => void this.evict(orgId, documentId, { fromAnotherNode: true }),
        }, unsubscribe);
        for (const m of early.splice(0)) room.onRemote(m);
        for (const u of heard.splice(0)) room.hear(u);
        entry.doc = doc;
        if (this.rooms.get(key) === r) this.loaded.set(key, room); // not when evicted while it loaded
        return room;
      });
      r.catch(() => {
        unsubscribe();
        if (this.rooms.get(key) === r) this.rooms.delete(key);
        if (collab.liveRooms(this.platform).get(key) === entry) collab.liveRooms(this.platform).delete(key);
      });
      this.rooms.set(key, r);
    }
    return r;
  }

  private async close(key: string, room: Room): Promise<void> {
    // A REST write heard while the room saved (delivered after its commit) is saved too before the room goes: the
    // last check and the removal run in one turn, so none is heard in between.
    do { await room.flush(); } while (room.unsaved() && room.conns.size === 0);
    if (room.conns.size > 0) return; // someone joined while saving
    if (this.loaded.get(key) !== room) return;
    this.rooms.delete(key);
    this.loaded.delete(key);
    collab.liveRooms(this.platform).delete(key);
    room.destroy();
  }

  /**
   * The document was deleted: its sockets close (4404) and nothing more is persisted, on this node and (unless the
   * news came from one) on the others.
   */
  async evict(orgId: string, documentId: string, opts: { fromAnotherNode?: boolean } = {}): Promise<void> {
    if (!opts.fromAnotherNode) this.platform.fanout.publish(collabChannel(orgId, documentId), documentDeletedMessage());
    const key = collab.roomKey(orgId, documentId);
    const pending = this.rooms.get(key);
    if (!pending) return;
    this.rooms.delete(key);
    this.loaded.delete(key);
    collab.liveRooms(this.platform).delete(key);
    const room = await pending.catch(() => null);
    if (!room) return;
    room.discard();
    for (const ws of room.conns.keys()) ws.close(4404, 'document deleted');
    room.destroy();
  }

  async closeAll(): Promise<void> {
    const all = await Promise.allSettled([...this.rooms.values()]);
    this.rooms.clear();
    this.loaded.clear();
    for (const r of all) {
      if (r.status !== 'fulfilled') continue;
      await r.value.flush();
      collab.liveRooms(this.platform).delete(collab.roomKey(r.value.orgId, r.value.documentId));
      r.value.destroy();
    }
  }
}
