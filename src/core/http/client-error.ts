import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (an unknown method token, a malformed request line,
 * headers over the size limit, a request that never finished) still get the error envelope: 431
 * PAYLOAD_TOO_LARGE for oversize headers, 408 and 400 VALIDATION_ERROR otherwise. They cannot carry a request id or
 * rate-limit headers: no request exists yet. Fastify's clientErrorHandler option.
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
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(err);
}
