import { AppError } from '../../core/errors.js';
import { fetchFailureCode } from '../../core/net/fetch-failure.js';
import type { ModerationPort, ModerationVerdict } from './port.js';

/**
 * A hosted moderation API speaking OpenAI's protocol: POST {base}/v1/moderations with a bearer key,
 * body {model?, input: string[]}, answer {results: [{flagged, categories: {name: bool}}]}.
 * Any failure of the provider is 503 SERVICE_UNAVAILABLE (fail closed: nothing unchecked is stored).
 */
/**
 * Why the provider failed, for the operator's log line only (an enumerable `cause`, which the request's error line
 * carries; the client's answer does not): the status and the provider's error code (`invalid_api_key`,
 * `rate_limit_exceeded`), or the network error's code, or TIMEOUT. Never the key.
 */
export interface ModerationCause { status?: number; code: string }

const unavailable = (what: string, cause: ModerationCause) => new AppError('SERVICE_UNAVAILABLE', `The moderation service ${what}; retry later`, undefined, { cause });

/** The provider's error code from an OpenAI-style error body (`{"error": {"code": ..., "type": ...}}`), else HTTP_<status>. */
async function providerErrorCode(res: Response): Promise<string> {
  const body = await res.json().catch(() => null) as { error?: { code?: unknown; type?: unknown } } | null;
  const code = body?.error?.code ?? body?.error?.type;
  return typeof code === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(code) ? code : `HTTP_${res.status}`;
}

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
    } catch (err) {
      const timedOut = (err as Error | null)?.name === 'TimeoutError';
      throw unavailable(timedOut ? 'did not answer in time' : 'cannot be reached', { code: timedOut ? 'TIMEOUT' : fetchFailureCode(err) });
    }
    if (!res.ok) throw unavailable(`answered ${res.status}`, { status: res.status, code: await providerErrorCode(res) });
    const body = await res.json().catch(() => null) as { results?: Array<{ flagged?: boolean; categories?: Record<string, boolean> }> } | null;
    if (!body || !Array.isArray(body.results) || body.results.length === 0) {
      throw unavailable('gave an unreadable answer', { status: res.status, code: 'UNREADABLE_ANSWER' });
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
