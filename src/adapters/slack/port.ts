/** Slack incoming-webhook port: POST a JSON message to a URL the workspace gave the organization. */
export interface SlackWebhook {
  /** Resolves on a 2xx answer; rejects with SlackWebhookError otherwise (callers retry). */
  post(url: string, message: { text: string }): Promise<void>;
}

export class SlackWebhookError extends Error {
  constructor(message: string, readonly status: number | null) { super(message); this.name = 'SlackWebhookError'; }
}
