import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact-url.js';

describe('redactUrl', () => {
  it('replaces the values of token, ticket, sig and access_token in the query, and nothing else', () => {
    expect(redactUrl('/v1/sheet/abc/export?format=csv&token=eyJhbGciOi.x.y')).toBe('/v1/sheet/abc/export?format=csv&token=[REDACTED]');
    expect(redactUrl('/v1/collaboration/ws/d?ticket=ab12&x=1')).toBe('/v1/collaboration/ws/d?ticket=[REDACTED]&x=1');
    expect(redactUrl('/v1/documents/d/file?org=o&exp=1&sig=deadbeef')).toBe('/v1/documents/d/file?org=o&exp=1&sig=[REDACTED]');
    expect(redactUrl('/v1/x?TOKEN=svc_live_a_b&access_token=j')).toBe('/v1/x?TOKEN=[REDACTED]&access_token=[REDACTED]');
    expect(redactUrl('/v1/projects?limit=5&tokenizer=1')).toBe('/v1/projects?limit=5&tokenizer=1');
    expect(redactUrl('/v1/token/abc')).toBe('/v1/token/abc');
  });
});
