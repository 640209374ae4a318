import { describe, expect, it } from 'vitest';
import { ticketStoreKind } from './deps.js';

describe('the documents area configuration', () => {
  it('COLLAB_TICKET_STORE: postgres (default) or memory; another is refused at start, not read as postgres', () => {
    expect([ticketStoreKind(undefined), ticketStoreKind(''), ticketStoreKind('postgres'), ticketStoreKind('memory')]).toEqual(['postgres', 'postgres', 'postgres', 'memory']);
    expect(() => ticketStoreKind('redis')).toThrow(new Error('COLLAB_TICKET_STORE must be postgres or memory, got "redis"'));
  });
});
