import type * as Y from 'yjs';
import * as syncProtocol from 'y-protocols/sync';
import * as encoding from 'lib0/encoding';

// y-websocket message types (y-websocket/src/y-websocket.js).
export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const MESSAGE_QUERY_AWARENESS = 3;
/** Between nodes only (never sent to a client): the document was deleted, its rooms close. */
export const MESSAGE_DOCUMENT_DELETED = 100;

/**
 * The fan-out channel of a document's collaboration rooms (one per node that has sockets on it): the nodes relay
 * y-websocket messages to each other on it (docs/decisions.md, "Several nodes").
 */
export const collabChannel = (orgId: string, documentId: string) => `collab:${orgId}:${documentId}`;

/** A y-websocket sync message carrying a document update. */
export function syncUpdateMessage(update: Uint8Array): Uint8Array {
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, MESSAGE_SYNC);
  syncProtocol.writeUpdate(enc, update);
  return encoding.toUint8Array(enc);
}

/** A y-websocket sync step 1 (this state vector: "send me what I lack"). */
export function syncStep1Message(doc: Y.Doc): Uint8Array {
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, MESSAGE_SYNC);
  syncProtocol.writeSyncStep1(enc, doc);
  return encoding.toUint8Array(enc);
}

/** A y-websocket sync step 2 carrying `diff` (the answer to a step 1). */
export function syncStep2Message(diff: Uint8Array): Uint8Array {
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, MESSAGE_SYNC);
  encoding.writeVarUint(enc, syncProtocol.messageYjsSyncStep2);
  encoding.writeVarUint8Array(enc, diff);
  return encoding.toUint8Array(enc);
}

/** An awareness message (y-websocket) carrying an encoded awareness update. */
export function awarenessMessage(update: Uint8Array): Uint8Array {
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, MESSAGE_AWARENESS);
  encoding.writeVarUint8Array(enc, update);
  return encoding.toUint8Array(enc);
}

export const documentDeletedMessage = (): Uint8Array => Uint8Array.of(MESSAGE_DOCUMENT_DELETED);
