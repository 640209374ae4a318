import { describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { MAX_BUFFERED_BYTES, sendBounded } from './send-bounded.js';
import { TokenBucket, messageRateLimit } from './message-rate.js';

/** A socket as the helpers see it: its state, what it has queued, what was sent and how it was closed. */
const fakeSocket = (bufferedAmount: number) => {
  const ws = { readyState: 1, bufferedAmount, send: vi.fn(), close: vi.fn((code: number, reason: string) => { ws.readyState = 2; void code; void reason; }) };
  return ws as typeof ws & WebSocket;
};

describe('sendBounded', () => {
  it('sends while the peer keeps up; past the bound closes the socket with 1013 and queues nothing more', () => {
    const ws = fakeSocket(MAX_BUFFERED_BYTES);
    expect(sendBounded(ws, 'a')).toBe(true);
    expect(ws.send).toHaveBeenCalledWith('a');
    ws.bufferedAmount = MAX_BUFFERED_BYTES + 1; // + the largest message sent, 1 byte
    expect(sendBounded(ws, 'b')).toBe(true);
    ws.bufferedAmount = MAX_BUFFERED_BYTES + 2;
    expect(sendBounded(ws, 'c')).toBe(false);
    expect(ws.close).toHaveBeenCalledWith(1013, 'too slow: messages sent were not read');
    expect(sendBounded(ws, 'd')).toBe(false);
    expect(ws.send).toHaveBeenCalledTimes(2);
    expect(ws.close).toHaveBeenCalledTimes(1);
  });

  it('one large message waiting alone is not slowness: the bound is beyond the largest message the socket was sent', () => {
    const ws = fakeSocket(0);
    const snapshot = 'x'.repeat(20 * 1024 * 1024);
    expect(sendBounded(ws, snapshot)).toBe(true);
    ws.bufferedAmount = snapshot.length; // not read yet
    expect(sendBounded(ws, '{"type":"pong"}')).toBe(true);
    ws.bufferedAmount = snapshot.length + MAX_BUFFERED_BYTES + 1;
    expect(sendBounded(ws, '{"type":"pong"}')).toBe(false);
    expect(ws.close).toHaveBeenCalledWith(1013, 'too slow: messages sent were not read');
  });
});

describe('message rate limit', () => {
  it('a token bucket allows its burst, then its rate', () => {
    let now = 0;
    const bucket = new TokenBucket(50, 100, () => now);
    expect(Array.from({ length: 101 }, () => bucket.take()).filter(Boolean)).toHaveLength(100);
    now += 100; // 5 tokens back
    expect(Array.from({ length: 10 }, () => bucket.take()).filter(Boolean)).toHaveLength(5);
    now += 60_000; // never more than the burst
    expect(Array.from({ length: 200 }, () => bucket.take()).filter(Boolean)).toHaveLength(100);
  });

  it('a socket past the rate is closed with 1008 "too many messages"', () => {
    const ws = fakeSocket(0);
    const withinRate = messageRateLimit(ws, 50, 100);
    const allowed = Array.from({ length: 150 }, () => withinRate()).filter(Boolean).length;
    expect(allowed).toBeGreaterThanOrEqual(100);
    expect(allowed).toBeLessThan(150);
    expect(ws.close).toHaveBeenCalledWith(1008, 'too many messages');
    expect(ws.close).toHaveBeenCalledTimes(1);
  });
});
