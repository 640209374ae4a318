import { EventEmitter } from 'node:events';

/** A domain event: `<resource>.<event>` (for example `task.assigned`), emitted after its transaction commits. */
export interface PlatformEvent {
  type: string;
  orgId: string;
  actorUserId: string | null;
  targetType: string;
  targetId: string;
  /** Users the event concerns (assignee, mentioned user...), for notifications. */
  recipients?: string[];
  data: Record<string, unknown>;
  at: string;
}

/**
 * In-process event bus; areas publish, alert rules and notifications subscribe. Handlers run after the publisher's
 * turn (the request is answered without waiting for them); the bus keeps track of the ones running, so a shutdown can
 * let them finish their writes before the pools close, and a test can wait for them before it counts rows.
 */
export class EventBus {
  private emitter = new EventEmitter({ captureRejections: true });
  private running = new Set<Promise<void>>();
  constructor() { this.emitter.setMaxListeners(100); }
  publish(event: PlatformEvent): void { this.emitter.emit('event', event); }
  subscribe(fn: (e: PlatformEvent) => void | Promise<void>): () => void {
    const wrapped = (e: PlatformEvent) => {
      const run: Promise<void> = Promise.resolve().then(() => fn(e)).catch(() => {}).finally(() => { this.running.delete(run); });
      this.running.add(run);
    };
    this.emitter.on('event', wrapped);
    return () => this.emitter.off('event', wrapped);
  }

  /** Resolves once no handler is running, including handlers of events published by handlers meanwhile. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
