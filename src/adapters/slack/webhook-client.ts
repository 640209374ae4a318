import http from 'node:http';
import https from 'node:https';
import { privateUrlProblem, publicOnlyLookup } from '../../core/net/public-address.js';
import { SlackWebhookError, type SlackWebhook } from './port.js';

export interface SlackWebhookOptions {
  timeoutMs?: number;
  /**
   * Whether the webhook may be on a loopback, private or link-local address. Off in production: the URL is a
   * tenant's input, and the server must not call internal hosts for it (WEBHOOK_ALLOW_PRIVATE_HOSTS, docs/workspace.md).
   */
  allowPrivateHosts: boolean;
  /** DNS resolution (dns.lookup's signature); tests give a fake one. */
  resolve?: Parameters<typeof publicOnlyLookup>[0];
}

/**
 * Real client: `POST <url>` with `Content-Type: application/json` and `{"text": ...}`, as Slack's incoming
 * webhooks expect. Redirects are not followed (a webhook that redirects is misconfigured, and following would let a
 * URL bounce the request elsewhere); the request times out after `timeoutMs`. Unless private hosts are allowed, an
 * address literal must be public and a name must resolve to public addresses only, and the connection goes to the
 * address that was checked.
 */
export function createSlackWebhook(opts: SlackWebhookOptions): SlackWebhook {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const lookup = opts.allowPrivateHosts ? opts.resolve : publicOnlyLookup(opts.resolve);
  return {
    async post(url, message) {
      if (!opts.allowPrivateHosts) {
        const problem = privateUrlProblem(url);
        if (problem) throw new SlackWebhookError(`Slack webhook refused: the URL ${problem}`, null);
      }
      const target = new URL(url);
      const body = JSON.stringify({ text: message.text });
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = (target.protocol === 'https:' ? https : http).request(target, {
          method: 'POST', timeout: timeoutMs, ...(lookup ? { lookup: lookup as never } : {}),
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'platform-api-alerts/1.0' },
        }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => { if (text.length < 200) text += chunk; });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: text.slice(0, 200) }));
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(body);
      }).catch((err: Error) => { throw new SlackWebhookError(`Slack webhook unreachable: ${err.message}`, null); });
      if (status < 200 || status >= 300) {
        throw new SlackWebhookError(`Slack webhook answered HTTP ${status}${text ? `: ${text}` : ''}`, status);
      }
    },
  };
}
