import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

describe('loadConfig: a bad value names its variable and what it accepts', () => {
  it('whole-number variables: the message names the variable, the accepted range and the value given', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(new Error('PORT must be a whole number from 0 to 65535, got "abc"'));
    expect(() => loadConfig({ PORT: '70000' })).toThrow(new Error('PORT must be a whole number from 0 to 65535, got "70000"'));
    expect(() => loadConfig({ RATE_LIMIT_MAX: 'x' })).toThrow(new Error('RATE_LIMIT_MAX must be a whole number of 0 or more, got "x"'));
    expect(() => loadConfig({ JOB_POLL_MS: '-1' })).toThrow(new Error('JOB_POLL_MS must be a whole number of 0 or more, got "-1"'));
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '1.5' })).toThrow(new Error('SHUTDOWN_TIMEOUT_MS must be a whole number of 0 or more, got "1.5"'));
    expect(() => loadConfig({ DB_POOL_SIZE: '0' })).toThrow(new Error('DB_POOL_SIZE must be a whole number of 1 or more, got "0"'));
    expect(() => loadConfig({ RATE_LIMIT_WINDOW_MS: '0' })).toThrow(new Error('RATE_LIMIT_WINDOW_MS must be a whole number of 1 or more, got "0"'));
    expect(() => loadConfig({ COLLAB_MAX_ROOMS_PER_ORG: '0' })).toThrow(new Error('COLLAB_MAX_ROOMS_PER_ORG must be a whole number of 1 or more, got "0"'));
    for (const name of ['PORT', 'EMBEDDED_PG_PORT', 'BODY_LIMIT_BYTES', 'JSON_MAX_DEPTH', 'RATE_LIMIT_MAX', 'RATE_LIMIT_AUTH_MAX',
      'RATE_LIMIT_WINDOW_MS', 'CREDENTIAL_CACHE_TTL_MS', 'DB_POOL_SIZE', 'JOB_POLL_MS', 'SHUTDOWN_TIMEOUT_MS', 'SHUTDOWN_DRAIN_MS', 'FILE_STORAGE_QUOTA_BYTES', 'COLLAB_MAX_ROOMS_PER_ORG', 'COLLAB_ROOMS_MAX_MB', 'WS_HEARTBEAT_MS', 'WS_MAX_SOCKETS_PER_USER', 'DB_STATEMENT_TIMEOUT_MS']) {
      expect(() => loadConfig({ [name]: 'ten' }), name).toThrow(new RegExp(`^${name} must be a whole number (of \\d+ or more|from \\d+ to \\d+), got "ten"$`));
    }
    // unset or empty: the default; 0 where it means something (a free port, the job runner off)
    expect(loadConfig({ PORT: '' }).port).toBe(8080);
    expect(loadConfig({ PORT: '0', JOB_POLL_MS: '0' })).toMatchObject({ port: 0, jobPollMs: 0 });
    // The request pool's statement time limit: 30 s unless set; 0 = none.
    expect(loadConfig({}).dbStatementTimeoutMs).toBe(30_000);
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0' }).dbStatementTimeoutMs).toBe(0);
    expect(loadConfig({ DB_POOL_SIZE: '1', PORT: '65535' })).toMatchObject({ dbPoolSize: 1, port: 65535 });
    expect(loadConfig({}).fileStorageQuotaBytes).toBe(10 * 1024 ** 3);
    expect(() => loadConfig({ FILE_STORAGE_QUOTA_BYTES: '0' })).toThrow(new Error('FILE_STORAGE_QUOTA_BYTES must be a whole number of 1 or more, got "0"'));
    expect(loadConfig({}).collabMaxRoomsPerOrg).toBe(50);
    expect(loadConfig({ COLLAB_MAX_ROOMS_PER_ORG: '3' }).collabMaxRoomsPerOrg).toBe(3);
    expect(loadConfig({}).collabRoomsMaxBytes).toBe(1024 * 1024 * 1024);
    expect(loadConfig({ COLLAB_ROOMS_MAX_MB: '2' }).collabRoomsMaxBytes).toBe(2 * 1024 * 1024);
    expect(loadConfig({}).wsHeartbeatMs).toBe(30_000);
    expect(loadConfig({ WS_HEARTBEAT_MS: '5000' }).wsHeartbeatMs).toBe(5000);
    expect(() => loadConfig({ WS_HEARTBEAT_MS: '0' })).toThrow(new Error('WS_HEARTBEAT_MS must be a whole number of 1 or more, got "0"'));
    expect(loadConfig({}).wsMaxSocketsPerUser).toBe(100);
    expect(loadConfig({ WS_MAX_SOCKETS_PER_USER: '3' }).wsMaxSocketsPerUser).toBe(3);
    expect(() => loadConfig({ WS_MAX_SOCKETS_PER_USER: '0' })).toThrow(new Error('WS_MAX_SOCKETS_PER_USER must be a whole number of 1 or more, got "0"'));
    expect(() => loadConfig({ WS_MAX_SOCKETS_PER_USER: '2.5' })).toThrow(new Error('WS_MAX_SOCKETS_PER_USER must be a whole number of 1 or more, got "2.5"'));
    expect(loadConfig({}).shutdownDrainMs).toBe(0);
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '15000' }).shutdownDrainMs).toBe(15_000);
    expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: '15s' })).toThrow(new Error('SHUTDOWN_DRAIN_MS must be a whole number from 0 to 600000, got "15s"'));
    expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: '600001' })).toThrow(new Error('SHUTDOWN_DRAIN_MS must be a whole number from 0 to 600000, got "600001"'));
  });

  it('yes/no variables take true/false, 1/0, yes/no, on/off (any case) and refuse anything else, naming the variable', () => {
    for (const [name, key] of [['ALLOW_SIGNUP', 'allowSignup'], ['WEBHOOK_ALLOW_PRIVATE_HOSTS', 'webhookAllowPrivateHosts']] as const) {
      for (const v of ['true', 'TRUE', '1', 'yes', 'on']) expect(loadConfig({ [name]: v })[key], `${name}=${v}`).toBe(true);
      for (const v of ['false', 'False', '0', 'no', 'OFF']) expect(loadConfig({ [name]: v })[key], `${name}=${v}`).toBe(false);
      expect(() => loadConfig({ [name]: 'maybe' })).toThrow(new Error(`${name} must be true or false (or 1/0, yes/no, on/off), got "maybe"`));
    }
    expect(loadConfig({}).allowSignup).toBe(true);
    expect(loadConfig({ ALLOW_SIGNUP: '' }).allowSignup).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).webhookAllowPrivateHosts).toBe(true);
  });

  it('TRUST_PROXY: false, true (one proxy in front), a number of proxies (1-10) or their addresses and CIDRs; never every hop', () => {
    const trust = (v?: string) => loadConfig(v === undefined ? {} : { TRUST_PROXY: v }).trustProxy;
    expect([undefined, '', 'false', 'OFF', '0', 'no'].map(trust)).toEqual([false, false, false, false, false, false]);
    expect(['true', 'YES', 'on', '1'].map(trust)).toEqual([1, 1, 1, 1]);
    expect(['2', '10'].map(trust)).toEqual([2, 10]);
    expect(trust('10.0.0.0/8, 127.0.0.1,::1,fd00::/8')).toBe('10.0.0.0/8,127.0.0.1,::1,fd00::/8');
    for (const bad of ['maybe', '11', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.300', 'proxy.example.com']) {
      expect(() => trust(bad), bad).toThrow(new Error(`TRUST_PROXY must be false, true (one proxy in front), the number of proxies in front (1-10) or their addresses (e.g. 10.0.0.0/8,127.0.0.1), got "${bad}"`));
    }
  });

  it('URLs are checked at start, naming the variable: DATABASE_URL, DATABASE_APP_URL (PostgreSQL), PUBLIC_BASE_URL (http or https, no query)', () => {
    for (const name of ['DATABASE_URL', 'DATABASE_APP_URL']) {
      for (const bad of ['notaurl', 'mysql://u@h/db']) expect(() => loadConfig({ [name]: bad }), bad).toThrow(new Error(`${name} must be a URL such as postgres://user:password@host:5432/database`));
    }
    expect(loadConfig({ DATABASE_URL: 'postgresql://u:p@db:5432/platform' }).databaseUrl).toBe('postgresql://u:p@db:5432/platform');
    for (const bad of ['notaurl', 'ftp://x/y', 'https://api.example.com/?a=1', 'https://api.example.com/#x', 'https://u:p@api.example.com']) {
      const shown = bad.replace('u:p@', '***@'); // the password is not repeated
      expect(() => loadConfig({ PUBLIC_BASE_URL: bad }), bad).toThrow(new Error(`PUBLIC_BASE_URL must be an http or https URL without query, fragment or credentials, such as https://api.example.com, got "${shown}"`));
    }
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://example.com/api' }).publicBaseUrl).toBe('https://example.com/api');
  });

  it('SMTP_URL (smtp:// or smtps://) and SMTP_FROM (an address) are checked at start and go together; a password is never repeated', () => {
    const from = { SMTP_FROM: 'noreply@example.com' };
    for (const bad of ['notaurl', 'mail.example.com:587', 'http://user:hunter2@mail.example.com', 'smtp://', 'smtp://mail.example.com#x']) {
      expect(() => loadConfig({ ...from, SMTP_URL: bad }), bad).toThrow(new Error('SMTP_URL must be an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587'));
    }
    for (const bad of ['noreply', 'noreply@', 'a@example.com, b@example.com', 'Platform <noreply>']) {
      expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com', SMTP_FROM: bad }), bad).toThrow(new Error(`SMTP_FROM must be an e-mail address, such as noreply@example.com or Platform <noreply@example.com>, got "${bad}"`));
    }
    expect(loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', SMTP_FROM: 'Platform <noreply@example.com>' })).toMatchObject({ smtpUrl: 'smtps://u:p@mail.example.com:465', smtpFrom: 'Platform <noreply@example.com>' });
    // One without the other was e-mail silently off.
    expect(() => loadConfig({ SMTP_URL: 'smtp://u:secret@mail.example.com' })).toThrow(new Error('SMTP_URL is set without SMTP_FROM: e-mail needs SMTP_URL and SMTP_FROM (or none of them)'));
    expect(() => loadConfig(from)).toThrow(new Error('SMTP_FROM is set without SMTP_URL: e-mail needs SMTP_URL and SMTP_FROM (or none of them)'));
    expect(loadConfig({})).toMatchObject({ smtpUrl: null, smtpFrom: null });
  });

  it('S3_*: all four or none (a part of them was the local disk store, silently); the endpoint, bucket and region are checked at start', () => {
    const s3 = { S3_ENDPOINT: 'https://s3.eu-west-1.amazonaws.com', S3_BUCKET: 'platform-files', S3_ACCESS_KEY_ID: 'AKIAEXAMPLE', S3_SECRET_ACCESS_KEY: 'top-secret' };
    expect(() => loadConfig({ ...s3, S3_REGION: 'eu-west-1' })).not.toThrow();
    expect(() => loadConfig({ ...s3, S3_ENDPOINT: 'http://127.0.0.1:9000/prefix', S3_BUCKET: 'Legacy_Bucket.1', S3_REGION: 'auto' })).not.toThrow();
    expect(() => loadConfig({ S3_BUCKET: 'platform-files' })).toThrow(new Error(
      'S3_BUCKET is set without S3_ENDPOINT, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: the S3 file store needs S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or none of them)'));
    expect(() => loadConfig({ ...s3, S3_SECRET_ACCESS_KEY: '' })).toThrow(new Error(
      'S3_ENDPOINT, S3_BUCKET and S3_ACCESS_KEY_ID are set without S3_SECRET_ACCESS_KEY: the S3 file store needs S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or none of them)'));
    expect(() => loadConfig({ S3_REGION: 'eu-west-1' })).toThrow(/^S3_REGION is set without S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: /);
    for (const bad of ['s3.amazonaws.com', 'ftp://s3.example.com', 'https://AKIA:top-secret@s3.example.com', 'https://s3.example.com/?x=1']) {
      expect(() => loadConfig({ ...s3, S3_ENDPOINT: bad }), bad).toThrow(new Error(
        'S3_ENDPOINT must be an http or https URL without credentials, query or fragment, such as https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000 (the bucket goes in S3_BUCKET)'));
    }
    for (const bad of ['s3://platform-files', 'platform files', 'a/b', 'ab']) {
      expect(() => loadConfig({ ...s3, S3_BUCKET: bad }), bad).toThrow(new Error(`S3_BUCKET must be a bucket name of 3 to 255 letters, digits, dots, hyphens or underscores, such as platform-files, got "${bad}"`));
    }
    expect(() => loadConfig({ ...s3, S3_REGION: 'eu west/1' })).toThrow(new Error('S3_REGION must be a region name such as us-east-1 (or auto), got "eu west/1"'));
  });

  it('MODERATION_API_URL: the API base (http or https, not ending in /v1), with MODERATION_API_KEY; checked at start', () => {
    const key = { MODERATION_API_KEY: 'sk-secret' };
    expect(() => loadConfig({ ...key, MODERATION_API_URL: 'https://api.openai.com' })).not.toThrow();
    expect(() => loadConfig({ ...key, MODERATION_API_URL: 'http://127.0.0.1:9/proxy/' })).not.toThrow();
    for (const bad of ['api.openai.com', 'https://api.openai.com/v1', 'https://api.openai.com/v1/moderations', 'https://u:p@api.openai.com', 'ws://api.openai.com']) {
      expect(() => loadConfig({ ...key, MODERATION_API_URL: bad }), bad).toThrow(new Error(
        'MODERATION_API_URL must be an http or https URL without credentials, query or fragment, the base the API\'s /v1/moderations is under, such as https://api.openai.com'));
    }
    // Either alone was the local rules, silently.
    expect(() => loadConfig({ MODERATION_API_URL: 'https://api.openai.com' })).toThrow(new Error(
      'MODERATION_API_URL is set without MODERATION_API_KEY: the hosted moderation API needs MODERATION_API_URL and MODERATION_API_KEY (or none of them)'));
    expect(() => loadConfig({ ...key, MODERATION_MODEL: 'omni-moderation-latest' })).toThrow(/^MODERATION_API_KEY and MODERATION_MODEL are set without MODERATION_API_URL: /);
  });

  it('CORS_ORIGINS: * or origins as browsers send them (scheme://host[:port]); anything else is refused at start', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: '' }).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:3000,http://[::1]:8080' }).corsOrigins).toEqual(['https://app.example.com', 'http://localhost:3000', 'http://[::1]:8080']);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    const refusal = (shown: string) => new Error(`CORS_ORIGINS must be * or origins separated by commas, each scheme://host[:port] in lower case without a path or trailing slash, such as https://app.example.com,http://localhost:3000, got "${shown}"`);
    // A path, a trailing slash, upper case or a default port never equals a browser's Origin header: it matched nothing, silently.
    for (const bad of ['https://app.example.com/', 'https://app.example.com/app', 'https://App.example.com', 'https://app.example.com:443', 'app.example.com', 'localhost:3000', 'null', 'ftp://files.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: `https://ok.example.com,${bad}` }), bad).toThrow(refusal(bad));
    }
    expect(() => loadConfig({ CORS_ORIGINS: 'https://user:hunter2@app.example.com' })).toThrow(refusal('https://***@app.example.com'));
  });

  it('PRICING_FILE: a missing file, non-JSON or a wrong shape stops the start naming the file and the fault', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pricing-'));
    const file = (name: string, text: string) => { const f = path.join(dir, name); writeFileSync(f, text); return f; };
    try {
      const tier = { tier: 'pro', name: 'Pro', price_cents_monthly: 1, currency: 'usd', limits: { max_projects: 1, max_members: null, credits_monthly: 0 }, features: ['documents'] };
      expect(() => loadConfig({ PRICING_FILE: file('ok.json', JSON.stringify([tier])) })).not.toThrow();
      const cases: Array<[string, string]> = [
        [file('bad.json', 'not json'), 'is not JSON'],
        [file('object.json', '{}'), 'must be a JSON array of plan tiers'],
        [file('tier.json', JSON.stringify([{ ...tier, tier: 'gold' }])), 'tier 0: "tier" must be one of academic_free, pro, team, business, enterprise'],
        [file('limits.json', JSON.stringify([{ ...tier, limits: { max_projects: -1, max_members: 1, credits_monthly: 1 } }])), 'tier 0: "limits" must hold max_projects, max_members and credits_monthly, each a whole number of 0 or more, or null'],
      ];
      for (const [f, what] of cases) expect(() => loadConfig({ PRICING_FILE: f }), f).toThrow(new Error(`PRICING_FILE ${f}: ${what}`));
      const missing = path.join(dir, 'missing.json');
      expect(() => loadConfig({ PRICING_FILE: missing })).toThrow(new Error(`PRICING_FILE ${missing}: cannot be read (ENOENT)`));
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });

  it('HOST: an IP address or a host name; anything else is refused naming it', () => {
    expect(['0.0.0.0', '::', '127.0.0.1', 'localhost', 'api.internal', ''].map((HOST) => loadConfig({ HOST }).host)).toEqual(['0.0.0.0', '::', '127.0.0.1', 'localhost', 'api.internal', '0.0.0.0']);
    for (const bad of ['999.1.1.1', 'no space', 'a..b', '-x']) {
      expect(() => loadConfig({ HOST: bad }), bad).toThrow(new Error(`HOST must be an IP address or a host name to listen on, such as 0.0.0.0, ::, 127.0.0.1 or localhost, got "${bad}"`));
    }
  });

  it('DEFAULT_SUBSCRIPTION_STATUS and DEFAULT_PLAN_TIER: empty is the default; another value is named in the refusal', () => {
    expect(loadConfig({ DEFAULT_SUBSCRIPTION_STATUS: '' }).defaultSubscriptionStatus).toBe('active');
    expect(loadConfig({ DEFAULT_SUBSCRIPTION_STATUS: '', NODE_ENV: 'production' }).defaultSubscriptionStatus).toBe('none');
    expect(() => loadConfig({ DEFAULT_SUBSCRIPTION_STATUS: 'gold' })).toThrow(new Error('DEFAULT_SUBSCRIPTION_STATUS must be one of none, active, past_due, cancelled, got "gold"'));
    expect(loadConfig({ DEFAULT_PLAN_TIER: '' }).defaultPlanTier).toBe('pro');
    expect(() => loadConfig({ DEFAULT_PLAN_TIER: 'gold' })).toThrow(/^DEFAULT_PLAN_TIER must be one of .*, got "gold"$/);
  });

  it('DEFAULT_FEATURES: an unknown feature is named with the known ones', () => {
    expect(() => loadConfig({ DEFAULT_FEATURES: 'documents,teleport' })).toThrow(new Error(
      'DEFAULT_FEATURES has unknown features: teleport (known: documents, chat, iam, compliance, proof-printout, rdp, containers, mail, calendar, saas-builder, vision, mcp)'));
  });

  it('LOG_LEVEL: a pino level; another is refused with the list', () => {
    expect(loadConfig({ LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(loadConfig({}).logLevel).toBe('info');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(new Error('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'));
  });
});
