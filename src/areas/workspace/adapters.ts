import { perPlatform } from '../../core/per-platform.js';
import type { Mailer } from '../../adapters/smtp/port.js';
import type { SlackWebhook } from '../../adapters/slack/port.js';
import { platformMailer } from '../../adapters/smtp/platform-mailer.js';
import { createSlackWebhook } from '../../adapters/slack/webhook-client.js';

export interface WorkspaceAdapters { mailer: Mailer; slack: SlackWebhook }

/** The outside services the workspace uses, built once per platform from its configuration. */
export const workspaceAdapters = perPlatform((platform): WorkspaceAdapters => ({
  mailer: platformMailer(platform), slack: createSlackWebhook({ allowPrivateHosts: platform.config.webhookAllowPrivateHosts }),
}));
