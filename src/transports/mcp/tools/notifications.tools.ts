import { defineTools, listResult } from './define.js';
import * as notifications from '../../../areas/workspace/notifications/notifications.service.js';
import type { ListQueryInput, UpdateInput } from '../../../areas/workspace/notifications/notifications.schemas.js';

// Lives here until the workspace area owns its tools file.
export const notificationsTools = defineTools([
  {
    name: 'notifications.list', title: 'List notifications', access: 'read', route: 'GET /v1/notifications',
    description: "The caller's notifications, newest first, with the unread count; filter by is_read, is_archived, notification_type, channel.",
    keywords: ['inbox', 'alerts', 'unread', 'messages', 'updates'],
    run: async (ctx, a) => {
      const q = a as ListQueryInput;
      const r = await notifications.listNotifications(ctx, q);
      return { ...listResult(r.notifications, { total: r.total, limit: q.limit, offset: q.offset }), unread_count: r.unread_count };
    },
  },
  {
    name: 'notifications.update', title: 'Mark a notification', access: 'write', route: 'PUT /v1/notifications/:id',
    description: 'Mark a notification read or unread (is_read) and archive or unarchive it (is_archived).',
    keywords: ['read', 'seen', 'archive', 'dismiss', 'inbox'],
    run: (ctx, a) => { const { id, ...patch } = a; return notifications.updateNotification(ctx, id as string, patch as UpdateInput); },
  },
  {
    name: 'notifications.delete', title: 'Delete a notification', access: 'write', route: 'DELETE /v1/notifications/:id',
    description: 'Delete one of your notifications.',
    keywords: ['remove', 'dismiss', 'inbox'],
    run: (ctx, a) => notifications.deleteNotification(ctx, a.id as string),
  },
]);
