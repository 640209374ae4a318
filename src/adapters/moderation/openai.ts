import { AppError } from '../../core/errors.js';
import type { ModerationPort, ModerationVerdict } from './port.js';

/**
 * A hosted moderation API speaking OpenAI's protocol: POST {base}/v1/moderations with a bearer key,
 * body {model?, input: string[]}, answer {results: [{flagged, categories: {name: bool}}]}.
 * Any failure of the provider is 503 SERVICE_UNAVAILABLE (fail closed: nothing unchecked is stored).
 */
export class HostedModeration implements ModerationPort {
  readonly name = 'hosted';
  constructor(private readonly opts: { baseUrl: string; apiKey: string; model?: string; timeoutMs?: number }) {}

  async check(texts: string[]): Promise<ModerationVerdict> {
    const input = texts.filter((t) => t.length > 0);
    if (input.length === 0) return { flagged: false, categories: [] };
    let res: Response;
    try {
      res = await fetch(`${this.opts.baseUrl.replace(/\/+$/, '')}/v1/moderations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.opts.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...(this.opts.model ? { model: this.opts.model } : {}), input }),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
      });
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The moderation service cannot be reached; retry later');
    }
    if (!res.ok) throw new AppError('SERVICE_UNAVAILABLE', `The moderation service answered ${res.status}; retry later`);
    const body = await res.json().catch(() => null) as { results?: Array<{ flagged?: boolean; categories?: Record<string, boolean> }> } | null;
    if (!body || !Array.isArray(body.results) || body.results.length === 0) {
      throw new AppError('SERVICE_UNAVAILABLE', 'The moderation service gave an unreadable answer; retry later');
    }
    const categories = new Set<string>();
    let flagged = false;
    for (const r of body.results) {
      if (r.flagged) flagged = true;
      for (const [k, v] of Object.entries(r.categories ?? {})) if (v) categories.add(k);
    }
    return { flagged, categories: [...categories] };
  }
}
