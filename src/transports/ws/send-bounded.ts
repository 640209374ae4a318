import type { WebSocket } from 'ws';

/**
 * Most bytes a socket may have queued and not yet taken by its peer (`bufferedAmount`: the socket's write buffer and
 * what the `ws` sender holds back) before another message is sent to it, beyond the largest single message it was
 * sent (a sheet's snapshot may alone be tens of MB: a client that sends a ping before it has read it is not slow). A
 * peer that does not read would otherwise make the server keep every message for it in memory, without end.
 */
export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Per socket, the largest message sendBounded sent it (bytes of its text, or of its binary data). */
const largest = new WeakMap<WebSocket, number>();

/**
 * Sends `data` on an open socket, unless the peer is that far behind: then the socket is closed with 1013 ("try
 * again later": a client that reconnects gets the state afresh) and nothing is queued. Returns whether it was sent.
 */
export function sendBounded(ws: WebSocket, data: string | Uint8Array, limit = MAX_BUFFERED_BYTES): boolean {
  if (ws.readyState !== 1) return false;
  const biggest = largest.get(ws) ?? 0;
  if (ws.bufferedAmount > limit + biggest) {
    ws.close(1013, 'too slow: messages sent were not read');
    return false;
  }
  const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  if (bytes > biggest) largest.set(ws, bytes);
  ws.send(data);
  return true;
}
