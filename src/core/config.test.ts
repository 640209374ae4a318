import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('loadConfig: defaults of new organizations', () => {
  it('DEFAULT_PLAN_TIER: pro by default, any tier of spec 2.9, anything else refused at start', () => {
    expect(loadConfig({}).defaultPlanTier).toBe('pro');
    expect(loadConfig({ DEFAULT_PLAN_TIER: 'business' }).defaultPlanTier).toBe('business');
    expect(() => loadConfig({ DEFAULT_PLAN_TIER: 'gold' })).toThrow(/DEFAULT_PLAN_TIER must be one of academic_free, pro, team, business, enterprise/);
  });

  it('DEFAULT_SUBSCRIPTION_STATUS: active, none with NODE_ENV=production; DEFAULT_FEATURES: all, or the list given', () => {
    expect(loadConfig({}).defaultSubscriptionStatus).toBe('active');
    expect(loadConfig({ NODE_ENV: 'production' }).defaultSubscriptionStatus).toBe('none');
    expect(loadConfig({}).defaultFeatures).toHaveLength(12);
    expect(loadConfig({ DEFAULT_FEATURES: 'documents, mcp' }).defaultFeatures).toEqual(['documents', 'mcp']);
    expect(() => loadConfig({ DEFAULT_FEATURES: 'documents,teleport' })).toThrow(/teleport/);
  });
});
