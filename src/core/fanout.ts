/** What a subscription of the fan-out hears. */
export interface FanoutSubscriber {
  /** A message another node published on the channel. */
  message(msg: Uint8Array): void;
  /**
   * The connection to the other nodes was lost and is back: messages published meanwhile (by them or by this node)
   * may be lost, so the subscriber brings its state up to date with theirs.
   */
  resync(): void;
}

/**
 * Messages between the nodes of a deployment for the state they keep in memory: WebSocket rooms and sockets.
 * With one node there is nobody to tell (`LocalFanout`); with REDIS_URL every node publishes and hears on Redis
 * (src/adapters/redis/fanout.ts). Delivery is at most once and in order per publishing node; a node never hears its
 * own messages.
 */
export interface Fanout {
  /** Whether other nodes can hear this one (REDIS_URL is set). */
  readonly shared: boolean;
  /** Sends msg to the channel's subscribers on every other node; failures are logged, never thrown. */
  publish(channel: string, msg: Uint8Array): void;
  /** Hears the channel until the returned function is called. */
  subscribe(channel: string, sub: FanoutSubscriber): () => void;
  close(): Promise<void>;
}

/** One node: nothing to share. */
export class LocalFanout implements Fanout {
  readonly shared = false;
  publish(): void {}
  subscribe(): () => void { return () => {}; }
  async close(): Promise<void> {}
}
