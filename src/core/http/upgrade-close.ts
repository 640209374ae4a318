import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A request with `Upgrade: websocket` reaches every route through the WebSocket plugin's `upgrade` listener, and Node
 * then no longer manages its connection (no keep-alive or request timeout, not closed at shutdown). A WebSocket route
 * upgrades it, or the plugin closes it after a refusal; any other route (`GET /v1/health` sent with the upgrade
 * headers, an unknown path) answered over it and left it open for as long as the client kept it, one connection per
 * such request. Called by the guard (and by frameworkErrorHandler, which answers before any hook runs) for upgrade
 * requests only (an ordinary request pays one property read): once the
 * answer is written, the connection is ended and then destroyed. A request that is upgraded writes no answer through
 * `reply`, so its WebSocket is untouched.
 */
export function closeAfterAnswer(req: FastifyRequest, reply: FastifyReply): void {
  const socket: Socket = req.raw.socket;
  reply.raw.once('finish', () => {
    socket.end();
    if (socket.writableFinished) socket.destroy(); else socket.once('finish', () => socket.destroy());
  });
}
