import type { WebSocket } from 'ws';

/** Messages a socket may send per second, on average, and in one burst. */
export const SOCKET_MESSAGES_PER_SECOND = 50;
export const SOCKET_MESSAGE_BURST = 100;

/** A token bucket: `burst` tokens, refilled at `perSecond`; each take() spends one when there is one. */
export class TokenBucket {
  private tokens: number;
  private at: number;
  constructor(private readonly perSecond: number, private readonly burst: number, private readonly now: () => number = Date.now) {
    this.tokens = burst;
    this.at = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.at) * this.perSecond) / 1000);
    this.at = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * The message rate limit of one socket: call the returned function for each message it sends; it answers whether
 * the message may be handled. Past the rate the socket is closed with 1008 "too many messages" (and what it still
 * sends is not handled): each message may cost a transaction and a recalculation, queued without end otherwise.
 */
export function messageRateLimit(ws: WebSocket, perSecond = SOCKET_MESSAGES_PER_SECOND, burst = SOCKET_MESSAGE_BURST): () => boolean {
  const bucket = new TokenBucket(perSecond, burst);
  return () => {
    if (bucket.take()) return true;
    if (ws.readyState === 1) ws.close(1008, 'too many messages');
    return false;
  };
}
