import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { uuidv7 } from '../ids.js';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (an unknown method token, a malformed request line,
 * headers over the size limit, a request that never finished) still get the error envelope: 431
 * PAYLOAD_TOO_LARGE for oversize headers, 408 and 400 VALIDATION_ERROR otherwise. No request exists yet, so no
 * rate-limit budget is counted (nor its headers sent); the answer carries an X-Request-Id of its own, as every answer
 * does. Fastify's clientErrorHandler option.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'PAYLOAD_TOO_LARGE', 'Request headers are larger than the server accepts']
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'VALIDATION_ERROR', 'The request was not completed in time']
    : err.code === 'HPE_INVALID_METHOD' ? [400, 'VALIDATION_ERROR', 'Unknown HTTP method']
    : [400, 'VALIDATION_ERROR', 'Malformed HTTP request'];
  if (!socket.writable) { socket.destroy(err); return; }
  const body = JSON.stringify({ success: false, error: { code, message } });
  socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n`
    + `X-Request-Id: ${uuidv7()}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(err);
}
