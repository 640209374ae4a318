import { describe, expect, it } from 'vitest';
import { moderationConfigured, moderationFromEnv } from './index.js';

describe('moderation from the environment', () => {
  it('counts as configured with a hosted API (URL and key) or a blocklist, not with the built-in rule alone', () => {
    expect(moderationConfigured({})).toBe(false);
    expect(moderationConfigured({ MODERATION_API_URL: 'http://127.0.0.1:1' })).toBe(false);
    expect(moderationConfigured({ MODERATION_API_URL: 'http://127.0.0.1:1', MODERATION_API_KEY: 'k' })).toBe(true);
    expect(moderationConfigured({ MODERATION_BLOCKLIST: 'bad word' })).toBe(true);
    expect(moderationConfigured({ MODERATION_BLOCKLIST_FILE: '/etc/blocklist' })).toBe(true);
    expect(moderationFromEnv({}).name).toBe('local');
    expect(moderationFromEnv({ MODERATION_API_URL: 'http://127.0.0.1:1', MODERATION_API_KEY: 'k' }).name).not.toBe('local');
  });
});
