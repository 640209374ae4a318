import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import type { Platform } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { CredentialGate, CredentialWatch, HELD_MAX_BYTES, HELD_MAX_MESSAGES, RECHECK_CONCURRENCY, closeFor } from './revalidate.js';

/** The part of a socket the gate uses: its state and close(); records what the gate closed it with. */
function socket() {
  const closed: Array<[number, string]> = [];
  return { closed, ws: { readyState: 1, close(code: number, reason: string) { closed.push([code, reason]); this.readyState = 3; } } };
}
const warnings: unknown[] = [];
const platform = { log: { warn: (o: unknown) => { warnings.push(o); } } } as unknown as Platform;
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('closeFor', () => {
  it('maps a re-check failure to its close code: 401 -> 4401, 402/403 -> 4403, 404 -> 4404, anything else 1011', () => {
    expect(closeFor(new AppError('AUTH_TOKEN_INVALID', 'x'))).toEqual([4401, 'AUTH_TOKEN_INVALID']);
    expect(closeFor(new AppError('PERMISSION_DENIED', 'x'))).toEqual([4403, 'PERMISSION_DENIED']);
    expect(closeFor(new AppError('FEATURE_DISABLED', 'x'))).toEqual([4403, 'FEATURE_DISABLED']);
    expect(closeFor(new AppError('NOT_FOUND', 'x'))).toEqual([4404, 'NOT_FOUND']);
    expect(closeFor(new Error('connection refused'))).toEqual([1011, 'credential check unavailable']);
  });
});

describe('CredentialGate', () => {
  it('a re-check that cannot run (database down) closes the socket with 1011, drops held messages and logs a warning', async () => {
    const { ws, closed } = socket();
    const gate = new CredentialGate(ws as unknown as WebSocket, async () => { throw new Error('connection refused'); }, platform);
    const handled: string[] = [];
    gate.changed();
    gate.run(() => handled.push('after the change'), 1);
    await settle();
    expect(closed).toEqual([[1011, 'credential check unavailable']]);
    expect(handled).toEqual([]);
    expect(warnings).toHaveLength(1);
  });

  it('holds messages during a re-check and runs them in order once it passes', async () => {
    const { ws, closed } = socket();
    let release!: () => void;
    const gate = new CredentialGate(ws as unknown as WebSocket, () => new Promise<void>((r) => { release = r; }), platform);
    const handled: number[] = [];
    gate.run(() => handled.push(1), 1);
    gate.changed();
    gate.run(() => handled.push(2), 1);
    gate.run(() => handled.push(3), 1);
    await settle();
    expect(handled).toEqual([1]);
    release();
    await settle();
    expect(handled).toEqual([1, 2, 3]);
    expect(closed).toEqual([]);
  });
});

describe('CredentialGate: what it holds during a re-check is bounded', () => {
  const OVER = [1013, 'over 1000 messages or 16777216 bytes sent during a credential re-check'];

  it('past HELD_MAX_MESSAGES (1,000) held messages the socket closes with 1013 and nothing held runs, even once the check passes', async () => {
    expect(HELD_MAX_MESSAGES).toBe(1000);
    const { ws, closed } = socket();
    let release!: () => void;
    const gate = new CredentialGate(ws as unknown as WebSocket, () => new Promise<void>((r) => { release = r; }), platform);
    let handled = 0;
    gate.changed();
    for (let i = 0; i < HELD_MAX_MESSAGES; i++) gate.run(() => handled++, 1);
    expect(closed).toEqual([]);
    gate.run(() => handled++, 1);
    expect(closed).toEqual([OVER]);
    await settle(); // the re-check starts
    release();
    await settle();
    expect(handled).toBe(0);
    expect(closed).toEqual([OVER]);
  });

  it('past HELD_MAX_BYTES (16 MiB) held the socket closes with 1013; one frame of the largest size fits, and each re-check counts afresh', async () => {
    expect(HELD_MAX_BYTES).toBe(16 * 1024 * 1024);
    const { ws, closed } = socket();
    let release!: () => void;
    const gate = new CredentialGate(ws as unknown as WebSocket, () => new Promise<void>((r) => { release = r; }), platform);
    const handled: string[] = [];
    gate.changed();
    gate.run(() => handled.push('largest frame'), HELD_MAX_BYTES);
    await settle();
    release();
    await settle();
    expect(handled).toEqual(['largest frame']);
    gate.changed();
    gate.run(() => handled.push('largest frame again'), HELD_MAX_BYTES);
    expect(closed).toEqual([]);
    gate.run(() => handled.push('one byte more'), 1);
    expect(closed).toEqual([OVER]);
    await settle();
    release();
    await settle();
    expect(handled).toEqual(['largest frame']);
  });
});

describe('CredentialWatch', () => {
  it('re-checks every open socket periodically without any change: a session that expired closes its socket with 4401', async () => {
    const listeners: Array<() => void> = [];
    const watching = { ...platform, credentials: { changes: 0, onChange: (f: () => void) => { listeners.push(f); return () => {}; } } } as unknown as Platform;
    const watch = new CredentialWatch(watching, 30);
    const { ws, closed } = socket();
    const on = (ws as unknown as { on?: unknown });
    on.on = () => {};
    let expired = false;
    let checks = 0;
    watch.watch(ws as unknown as WebSocket, 0, async () => {
      checks++;
      if (expired) throw new AppError('AUTH_TOKEN_EXPIRED', 'The session has expired');
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(checks).toBeGreaterThan(0); // swept while valid: stays open
    expect(closed).toEqual([]);
    expired = true;
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toEqual([[4401, 'AUTH_TOKEN_EXPIRED']]);
    expect(listeners).toHaveLength(1);
    watch.close();
  });

  it('re-checks at most RECHECK_CONCURRENCY sockets at once after a change, and every one of them', async () => {
    const listeners: Array<() => void> = [];
    const watching = { ...platform, credentials: { changes: 0, onChange: (f: () => void) => { listeners.push(f); return () => {}; } } } as unknown as Platform;
    const watch = new CredentialWatch(watching, 60_000);
    let running = 0;
    let most = 0;
    let checked = 0;
    const sockets = Array.from({ length: 50 }, () => socket());
    for (const { ws } of sockets) {
      (ws as unknown as { on: unknown }).on = () => {};
      watch.watch(ws as unknown as WebSocket, 0, async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 1));
        running--;
        checked++;
      });
    }
    listeners[0](); // a credential changed somewhere
    await new Promise((r) => setTimeout(r, 300));
    expect([most, checked, running]).toEqual([RECHECK_CONCURRENCY, 50, 0]);
    expect(sockets.flatMap((s) => s.closed)).toEqual([]);
    watch.close();
  });
});
