import type { Platform } from '../../core/context.js';
import type { Mailer } from '../../adapters/smtp/port.js';
import type { SlackWebhook } from '../../adapters/slack/port.js';
import { platformMailer } from '../../adapters/smtp/platform-mailer.js';
import { createSlackWebhook } from '../../adapters/slack/webhook-client.js';

export interface WorkspaceAdapters { mailer: Mailer; slack: SlackWebhook }

const byPlatform = new WeakMap<Platform, WorkspaceAdapters>();

/** The outside services the workspace uses, built once per platform from its configuration. */
export function workspaceAdapters(platform: Platform): WorkspaceAdapters {
  let a = byPlatform.get(platform);
  if (!a) {
    a = { mailer: platformMailer(platform), slack: createSlackWebhook({ allowPrivateHosts: platform.config.webhookAllowPrivateHosts }) };
    byPlatform.set(platform, a);
  }
  return a;
}
