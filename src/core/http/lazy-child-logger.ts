import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type LogFn = (...args: unknown[]) => void;
type Parent = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger that becomes a real pino child only when the request writes a line at a level the parent has
 * enabled. Methods live on the prototype, so a request that never logs costs one small object.
 */
class LazyChild {
  private real: FastifyBaseLogger | undefined;
  constructor(private readonly parent: Parent, private readonly bindings: Bindings) {}

  private get logger(): FastifyBaseLogger { return (this.real ??= this.parent.child(this.bindings)); }
  private write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    if (this.real || this.parent.isLevelEnabled(level)) (this.logger[level] as LogFn)(...args);
  }

  get level(): string { return this.real?.level ?? this.parent.level; }
  set level(level: string) { this.logger.level = level; }
  fatal(...args: unknown[]) { this.write('fatal', args); }
  error(...args: unknown[]) { this.write('error', args); }
  warn(...args: unknown[]) { this.write('warn', args); }
  info(...args: unknown[]) { this.write('info', args); }
  debug(...args: unknown[]) { this.write('debug', args); }
  trace(...args: unknown[]) { this.write('trace', args); }
  silent() {}
  child(bindings: Bindings, opts?: ChildLoggerOptions) { return this.logger.child(bindings, opts); }
}

/**
 * Fastify's childLoggerFactory: every request gets a logger bound to its request id, but pino's child() serializes
 * the bindings when it is made, about a microsecond per request, and at the default level most requests never log.
 * A route with its own log level or serializers, or a logger without isLevelEnabled, gets a real child at once.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  if (opts.level || opts.serializers || typeof (logger as Partial<Parent>).isLevelEnabled !== 'function') return logger.child(bindings, opts);
  return new LazyChild(logger as Parent, bindings) as unknown as FastifyBaseLogger;
}
