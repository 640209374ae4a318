import { randomBytes } from 'node:crypto';
import type { Fanout, FanoutSubscriber } from '../../core/fanout.js';
import { connectRedis, firstConnect, redisClient } from './client.js';

/** Channel names are prefixed so that a Redis shared with other software keeps them apart. */
const PREFIX = 'platform:fanout:';
/** Bytes of the node id that starts every message: a node drops what it published itself. */
const NODE_ID_BYTES = 16;
/** The byte after the node id: a subscriber's message, or the notice that one of the sender's messages was lost. */
const DATA = 0;
const LOST = 1;
/** How long after a failed publish the channel's subscribers catch up (they publish again, and retry from there). */
const RESYNC_AFTER_FAILURE_MS = 2_000;

/**
 * The fan-out over Redis pub/sub (REDIS_URL), on two connections of its own: one publishes (apart from the rate-limit
 * and ticket commands, so that a slow burst of publishes cannot fail those, nor they the publishes), the other
 * listens in subscriber mode (a subscribed connection can send no other command). node-redis subscribes again by
 * itself after a reconnect; since messages published while a node was cut off are lost to it, every subscriber is
 * told to resync then. A channel whose publish failed is resynced a little later (once, however many failed), on
 * this node and, by a notice published on the channel, on every other (the message they missed may be one no later
 * message would make them ask for, and its sender may have closed its room since).
 */
export async function connectRedisFanout(url: string, log: (err: Error, what: string) => void): Promise<Fanout> {
  const nodeId = randomBytes(NODE_ID_BYTES);
  const channels = new Map<string, Set<FanoutSubscriber>>();
  /** Channels waiting to resync after a failed publish: one timer each. */
  const resyncTimers = new Map<string, NodeJS.Timeout>();
  let closed = false;
  const publisher = await connectRedis(url, (err) => log(err, 'Redis fan-out connection error; reconnecting'));
  const sub = redisClient(url, (err) => log(err, 'Redis subscriber connection error; reconnecting'));
  // node-redis keeps the listeners of a subscribed client and subscribes them again after a reconnect, also those
  // subscribed while it was down (tested); a subscriber only has to catch up with what it missed.
  const subscribe = (channel: string) => {
    sub.subscribe(PREFIX + channel, listener, true).catch((err: Error) => log(err, 'fan-out subscribe failed'));
  };
  let readyBefore = false;
  sub.on('ready', () => {
    if (readyBefore) for (const subs of channels.values()) for (const s of subs) s.resync();
    readyBefore = true;
  });

  const listener = (message: Buffer, channel: Buffer) => {
    if (message.length <= NODE_ID_BYTES || message.subarray(0, NODE_ID_BYTES).equals(nodeId)) return;
    const subs = channels.get(channel.toString('utf8').slice(PREFIX.length));
    const kind = message[NODE_ID_BYTES];
    const body = new Uint8Array(message.buffer, message.byteOffset + NODE_ID_BYTES + 1, message.length - NODE_ID_BYTES - 1);
    for (const s of subs ?? []) {
      try {
        if (kind === DATA) s.message(body);
        else if (kind === LOST) s.resync();
      } catch (err) { log(err as Error, 'fan-out subscriber failed on a message'); }
    }
  };
  const send = (channel: string, kind: number, msg: Uint8Array) => {
    if (closed) return;
    publisher.publish(PREFIX + channel, Buffer.concat([nodeId, Uint8Array.of(kind), msg])).catch((err: Error) => {
      log(err, 'fan-out publish failed');
      if (!closed) resyncLater(channel);
    });
  };
  try { await firstConnect(sub, url); } catch (err) { await publisher.close().catch(() => {}); throw err; }
  const resyncLater = (channel: string) => {
    if (resyncTimers.has(channel)) return;
    const t = setTimeout(() => {
      resyncTimers.delete(channel);
      for (const s of channels.get(channel) ?? []) s.resync();
      send(channel, LOST, new Uint8Array(0)); // fails again while Redis is out of reach: then once more later
    }, RESYNC_AFTER_FAILURE_MS);
    t.unref();
    resyncTimers.set(channel, t);
  };

  return {
    shared: true,
    publish(channel, msg) { send(channel, DATA, msg); },
    subscribe(channel, s) {
      let subs = channels.get(channel);
      if (!subs) {
        subs = new Set();
        channels.set(channel, subs);
        subscribe(channel);
      }
      subs.add(s);
      return () => {
        const current = channels.get(channel);
        if (!current?.delete(s) || current.size > 0) return;
        channels.delete(channel);
        // A pending resync timer stays: the other nodes still need the notice of what this one failed to send.
        if (!closed) sub.unsubscribe(PREFIX + channel, listener, true).catch((err: Error) => log(err, 'fan-out unsubscribe failed'));
      };
    },
    async close() {
      closed = true;
      for (const t of resyncTimers.values()) clearTimeout(t);
      channels.clear();
      if (sub.isOpen) await sub.close().catch(() => sub.destroy());
      else sub.destroy();
      await publisher.close().catch(() => {});
    },
  };
}
