import { describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { lazyChildLogger } from './lazy-child-logger.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level }, { write: (s: string) => { lines.push(JSON.parse(s)); } }) as unknown as FastifyBaseLogger;
  return { logger, lines, child: vi.spyOn(logger, 'child') };
}

describe('lazyChildLogger', () => {
  it('makes no child for a request that logs nothing or only below the level', () => {
    const { logger, lines, child } = capture('warn');
    const log = lazyChildLogger(logger, { reqId: 'r1' }, {});
    log.info('not written');
    log.debug('not written');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(log.level).toBe('warn');
  });

  it('logs through a real child bound to the request id once a line is written', () => {
    const { logger, lines, child } = capture('info');
    const log = lazyChildLogger(logger, { reqId: 'r2' }, {});
    log.info({ a: 1 }, 'one');
    log.error('two');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((l) => [l.reqId, l.msg, l.level])).toEqual([['r2', 'one', 30], ['r2', 'two', 50]]);
    expect(lines[0]!.a).toBe(1);
    log.child({ x: 'y' }).warn('three');
    expect(lines[2]).toMatchObject({ reqId: 'r2', x: 'y', msg: 'three' });
  });

  it('a route with its own level gets a real child at once', () => {
    const { logger, lines } = capture('warn');
    const log = lazyChildLogger(logger, { reqId: 'r3' }, { level: 'debug' });
    log.debug('written');
    expect(lines.map((l) => l.msg)).toEqual(['written']);
  });
});
