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

/** In-process event bus; areas publish, alert rules and notifications subscribe. */
export class EventBus {
  private emitter = new EventEmitter({ captureRejections: true });
  constructor() { this.emitter.setMaxListeners(100); }
  publish(event: PlatformEvent): void { this.emitter.emit('event', event); }
  subscribe(fn: (e: PlatformEvent) => void | Promise<void>): () => void {
    const wrapped = (e: PlatformEvent) => { void Promise.resolve().then(() => fn(e)).catch(() => {}); };
    this.emitter.on('event', wrapped);
    return () => this.emitter.off('event', wrapped);
  }
}
