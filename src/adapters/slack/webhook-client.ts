import { SlackWebhookError, type SlackWebhook } from './port.js';

/**
 * Real client: `POST <url>` with `Content-Type: application/json` and `{"text": ...}`, as Slack's incoming
 * webhooks expect. Redirects are not followed (a webhook that redirects is misconfigured, and following
 * would let a URL bounce the request elsewhere); the request times out after `timeoutMs`.
 */
export function createSlackWebhook(opts: { timeoutMs?: number } = {}): SlackWebhook {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return {
    async post(url, message) {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs),
          headers: { 'content-type': 'application/json', 'user-agent': 'platform-api-alerts/1.0' },
          body: JSON.stringify({ text: message.text }),
        });
      } catch (err) {
        throw new SlackWebhookError(`Slack webhook unreachable: ${(err as Error).message}`, null);
      }
      const body = (await res.text().catch(() => '')).slice(0, 200);
      if (res.status < 200 || res.status >= 300) {
        throw new SlackWebhookError(`Slack webhook answered HTTP ${res.status}${body ? `: ${body}` : ''}`, res.status);
      }
    },
  };
}
