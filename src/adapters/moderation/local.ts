import { readFileSync } from 'node:fs';
import type { ModerationPort, ModerationVerdict } from './port.js';

/**
 * Built-in rules: a marker string operators and tests can use to see the gate work end to end.
 * Real deployments add their own terms (MODERATION_BLOCKLIST / MODERATION_BLOCKLIST_FILE) or a hosted API.
 */
export const DEFAULT_BLOCKLIST = ['x-content-policy-test-violation'];

export interface LocalRule { name: string; re: RegExp }

/** One rule per entry: `re:<regex>` is a case-insensitive regular expression, anything else a whole-word phrase. */
export function compileRules(entries: string[]): LocalRule[] {
  return entries.map((e) => e.trim()).filter((e) => e && !e.startsWith('#')).map((e) => {
    if (e.startsWith('re:')) return { name: e, re: new RegExp(e.slice(3), 'iu') };
    const escaped = e.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
    return { name: e, re: new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu') };
  });
}

/** A local, configurable rule set: no network, deterministic. */
export class LocalModeration implements ModerationPort {
  readonly name = 'local';
  private readonly rules: LocalRule[];
  constructor(entries: string[]) { this.rules = compileRules(entries); }

  async check(texts: string[]): Promise<ModerationVerdict> {
    const categories: string[] = [];
    for (const rule of this.rules) {
      if (texts.some((t) => rule.re.test(t.normalize('NFKC')))) categories.push(rule.name);
    }
    return { flagged: categories.length > 0, categories };
  }
}

/** Rules from MODERATION_BLOCKLIST (comma separated) and MODERATION_BLOCKLIST_FILE (one per line), plus the default marker. */
export function localRulesFromEnv(env: NodeJS.ProcessEnv): string[] {
  const entries = [...DEFAULT_BLOCKLIST];
  if (env.MODERATION_BLOCKLIST) entries.push(...env.MODERATION_BLOCKLIST.split(','));
  if (env.MODERATION_BLOCKLIST_FILE) entries.push(...readFileSync(env.MODERATION_BLOCKLIST_FILE, 'utf8').split(/\r?\n/));
  return entries;
}
