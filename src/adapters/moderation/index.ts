import type { ModerationPort } from './port.js';
import { LocalModeration, localRulesFromEnv } from './local.js';
import { HostedModeration } from './openai.js';

export type { ModerationPort, ModerationVerdict } from './port.js';

/** The hosted API when MODERATION_API_URL and MODERATION_API_KEY are set (loadConfig refuses one alone), else the local rule set. */
export function moderationFromEnv(env: NodeJS.ProcessEnv = process.env): ModerationPort {
  if (env.MODERATION_API_URL && env.MODERATION_API_KEY) {
    return new HostedModeration({ baseUrl: env.MODERATION_API_URL, apiKey: env.MODERATION_API_KEY, model: env.MODERATION_MODEL || undefined });
  }
  return new LocalModeration(localRulesFromEnv(env));
}

/** Whether the operator gave the safety gate rules of their own (a hosted API or a blocklist). */
export function moderationConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!((env.MODERATION_API_URL && env.MODERATION_API_KEY) || env.MODERATION_BLOCKLIST || env.MODERATION_BLOCKLIST_FILE);
}
