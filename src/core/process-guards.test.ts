import { describe, expect, it, vi } from 'vitest';
import { onUncaughtException, onUnhandledRejection } from './process-guards.js';

const logger = () => ({ error: vi.fn(), fatal: vi.fn() });

describe('process guards', () => {
  it('an unhandled rejection is logged as an error with its reason, and nothing stops', () => {
    const log = logger();
    const reason = new RangeError('Maximum call stack size exceeded');
    onUnhandledRejection(log)(reason);
    expect(log.error).toHaveBeenCalledWith({ err: reason }, 'unhandled promise rejection (a defect; the server goes on)');
    expect(log.fatal).not.toHaveBeenCalled();
  });

  it('an uncaught exception is logged as fatal and starts one stop, however many follow', () => {
    const log = logger();
    const stop = vi.fn();
    const handler = onUncaughtException(log, stop);
    const first = new Error('boom');
    handler(first);
    handler(new Error('again'));
    expect(log.fatal).toHaveBeenCalledTimes(2);
    expect(log.fatal).toHaveBeenNthCalledWith(1, { err: first }, 'uncaught exception (a defect); stopping');
    expect(stop).toHaveBeenCalledTimes(1);
    expect(stop).toHaveBeenCalledWith('uncaughtException');
  });
});
