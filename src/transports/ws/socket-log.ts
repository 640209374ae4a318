import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { redactUrl } from '../../core/http/redact-url.js';

/**
 * The log lines of an accepted WebSocket: an upgrade answers 101 and never reaches the "request completed" line, so
 * without these an open socket (and which credential opened it: a ticket or the deprecated `token`, seen in the
 * redacted URL) left no trace. One line when it opens and one when it closes, with the request's id.
 */
export function logSocket(socket: WebSocket, req: FastifyRequest, who: { orgId: string; userId: string }): void {
  const opened = Date.now();
  const url = redactUrl(req.url);
  req.log.info({ url, orgId: who.orgId, userId: who.userId }, 'socket opened');
  socket.once('close', (code: number) => { req.log.info({ url, code, ms: Date.now() - opened }, 'socket closed'); });
}
