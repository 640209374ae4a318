import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level } from 'pino';

const LEVELS: Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * Fastify's childLoggerFactory: every request gets a logger bound to its request id, but pino's child() serializes
 * the bindings when it is made, about a microsecond per request, and at the default level (info, no request logging
 * below warn in production) most requests never log. This child is made for real only when the request logs at a
 * level the parent has enabled. A route with its own log level or serializers gets a real child at once.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  if (opts.level || opts.serializers) return logger.child(bindings, opts);
  let real: FastifyBaseLogger | undefined;
  const get = () => (real ??= logger.child(bindings, opts));
  const enabled = (level: Level) => (logger as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true;
  const lazy = {
    get level() { return real?.level ?? logger.level; },
    set level(level: string) { get().level = level; },
    silent: () => {},
    child: (b: Bindings, o?: ChildLoggerOptions) => get().child(b, o),
  } as Record<string, unknown>;
  for (const level of LEVELS) {
    lazy[level] = (...args: unknown[]) => {
      if (real || enabled(level)) (get()[level] as (...a: unknown[]) => void)(...args);
    };
  }
  return lazy as unknown as FastifyBaseLogger;
}
