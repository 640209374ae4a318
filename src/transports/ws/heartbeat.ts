import type { WebSocket, WebSocketServer } from 'ws';

/**
 * Drops dead peers on every socket `wss` accepts (collaboration, decks and sheets share it): every `intervalMs` each
 * socket is pinged, and one that answered nothing since the previous ping (no pong, no message) is terminated. A
 * peer that vanished without FIN/RST (a closed laptop lid, a NAT or load balancer dropping an idle flow, a frozen
 * client) never fires `close` by itself, and its room, credential gate and sheet sets were then kept for ever (and
 * counted against COLLAB_MAX_ROOMS_PER_ORG); `terminate()` fires `close`, so that cleanup runs, within two intervals.
 * Browsers and `ws` clients answer pings by themselves. The timer is unref'd; call the returned function on close.
 */
export function dropDeadPeers(wss: WebSocketServer, intervalMs: number): () => void {
  const answered = new WeakSet<WebSocket>();
  wss.on('connection', (ws: WebSocket) => {
    answered.add(ws);
    const alive = () => answered.add(ws);
    ws.on('pong', alive);
    ws.on('message', alive);
  });
  const timer = setInterval(() => {
    for (const ws of wss.clients) {
      if (!answered.delete(ws)) { ws.terminate(); continue; }
      ws.ping();
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
