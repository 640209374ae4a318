import * as decoding from 'lib0/decoding';
import { jsonDepthExceeds } from '../../core/http/json-parser.js';

/**
 * Bounds of the collaboration sockets (documents and decks), each in docs/documents.md ("Limits of a collaboration
 * socket"): what one socket may make the server hold or send, so that no member of one organization can grow the
 * process (or crash it) for every tenant.
 */
const MIB = 1024 * 1024;

/** The largest frame a socket may send (the WebSocket server's maxPayload; larger ones close it with 1009). */
export const MAX_FRAME_BYTES = 16 * MIB;
/**
 * Messages a socket may send per second on average, and in one burst (message-rate.ts; past them it is closed 1008).
 * Above the sheet socket's: a stock client sends an update per edit and an awareness change per cursor move, and a
 * script may apply many small edits in a row.
 */
export const COLLAB_MESSAGES_PER_SECOND = 200;
export const COLLAB_MESSAGE_BURST = 400;
/** Frames a socket may send while its room loads (they wait for it), at most this many and this many bytes. */
export const EARLY_MAX_FRAMES = 64;
export const EARLY_MAX_BYTES = MAX_FRAME_BYTES;
/** One client's awareness state (its JSON text, in UTF-8). */
export const MAX_AWARENESS_STATE_BYTES = 64 * 1024;
/** Client ids one socket may announce states for (a stock y-websocket client has one). */
export const MAX_AWARENESS_CLIENTS_PER_SOCKET = 4;
/** All awareness states a room holds together (counted in the node's COLLAB_ROOMS_MAX_MB budget too). */
export const MAX_ROOM_AWARENESS_BYTES = 2 * MIB;
/** A socket's query-awareness messages are answered at most once per this interval; the others are dropped. */
export const QUERY_AWARENESS_INTERVAL_MS = 1_000;
/**
 * A socket's state requests (sync step 1) are answered at most once per this interval. Each answer encodes what the
 * room holds beyond the client's state vector: for an empty one the whole document, up to MAX_STATE_BYTES, so a
 * socket repeating it at its message rate made the node encode megabytes hundreds of times a second. A stock client
 * asks once when it connects (and every `resyncInterval`, when set: seconds). A request within the interval is
 * answered when the interval ends, and requests meanwhile replace it: one answer, for the newest, never none.
 */
export const STATE_REQUEST_INTERVAL_MS = 1_000;
/**
 * Updates the room cannot integrate yet (they depend on changes it has not received) that it keeps waiting: past
 * this, the waiting data is dropped and the socket whose update took it there is closed.
 */
export const MAX_PENDING_BYTES = 1 * MIB;

/** Close code of a socket that went past one of these bounds (RFC 6455 "policy violation"). */
export const LIMIT_CLOSE = 1008;

/** A message refused for a bound: its socket is closed with LIMIT_CLOSE and this message as the reason. */
export class LimitRefusal extends Error {}

export interface AwarenessEntry { clientId: number; bytes: number; removal: boolean }

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads an awareness update (y-protocols: varuint count, then per client varuint client id, varuint clock and a
 * varstring JSON state) without applying it. Throws LimitRefusal for more than `maxEntries` entries, a repeated
 * client id, a state over MAX_AWARENESS_STATE_BYTES or nested deeper than `maxDepth` (the HTTP body bound,
 * JSON_MAX_DEPTH: y-protocols parses a state at any depth but re-encodes it recursively, which a deep one overflows);
 * another error for one that is malformed (bad UTF-8 or JSON, truncated). What it accepts y-protocols applies
 * without throwing.
 */
export function readAwarenessUpdate(update: Uint8Array, maxDepth: number, maxEntries: number): AwarenessEntry[] {
  const dec = decoding.createDecoder(update);
  const count = decoding.readVarUint(dec);
  if (count > maxEntries) throw new LimitRefusal(`awareness update for over ${maxEntries} clients`);
  const entries: AwarenessEntry[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < count; i++) {
    const clientId = decoding.readVarUint(dec);
    decoding.readVarUint(dec); // clock
    const raw = decoding.readVarUint8Array(dec);
    if (seen.has(clientId)) throw new LimitRefusal('awareness update names a client twice');
    seen.add(clientId);
    if (raw.length > MAX_AWARENESS_STATE_BYTES) throw new LimitRefusal(`awareness state over ${MAX_AWARENESS_STATE_BYTES} bytes`);
    const text = utf8.decode(raw);
    if (jsonDepthExceeds(text, maxDepth)) throw new LimitRefusal(`awareness state nested deeper than ${maxDepth} levels`);
    entries.push({ clientId, bytes: raw.length, removal: JSON.parse(text) === null });
  }
  return entries;
}
