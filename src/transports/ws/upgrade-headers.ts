import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** The headers the core guard sets on every answer (part 8 rate-limit headers, request id, legacy-key Deprecation). */
const CARRIED = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id', 'Deprecation'];
const REPLY = Symbol('upgradeReply');

/**
 * Spec part 8: every response carries the `X-RateLimit-*` headers. The `101 Switching Protocols` of a WebSocket
 * upgrade is written by the socket library, not through Fastify's reply, so the headers the guard set on the reply
 * are copied into it (ws's `headers` event, just before the 101 is written). Call once, after the WebSocket plugin.
 */
export function carryGuardHeadersIntoUpgrades(app: FastifyInstance): void {
  app.addHook('preHandler', (req, reply, done) => {
    if (req.ws) (req.raw as IncomingMessage & { [REPLY]?: FastifyReply })[REPLY] = reply;
    done();
  });
  app.websocketServer.on('headers', (headers: string[], raw: IncomingMessage & { [REPLY]?: FastifyReply }) => {
    const reply = raw[REPLY];
    if (!reply) return;
    for (const name of CARRIED) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers.push(`${name}: ${String(value)}`);
    }
  });
}
