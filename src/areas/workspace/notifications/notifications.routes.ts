import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, ok, okList } from '../../../core/http/envelope.js';
import * as S from './notifications.schemas.js';
import * as svc from './notifications.service.js';

const read = { scope: 'notifications:read', permission: 'notification.view' } as const;
const write = { scope: 'notifications:write', permission: 'notification.view', fixture: 'notification' } as const;

export default async function notificationRoutes(app: FastifyInstance) {
  app.get('/v1/notifications', { config: read, schema: { summary: 'Your notifications, newest first (limit default 25, max 100)', querystring: S.ListQuery, response: { 200: ListEnvelope(S.ListOut) } } },
    async (req) => {
      const q = req.query as S.ListQueryInput;
      const { total, ...data } = await svc.listNotifications(req.ctx, q);
      return okList(data, { total, limit: q.limit, offset: q.offset });
    });
  app.put('/v1/notifications/:id', { config: write, schema: { summary: 'Mark read/unread or archive/unarchive (at least one field)', params: S.IdParams, body: S.UpdateBody, response: { 200: Envelope(S.NotificationOut) } } },
    async (req) => ok(await svc.updateNotification(req.ctx, (req.params as { id: string }).id, req.body as S.UpdateInput)));
  app.delete('/v1/notifications/:id', { config: write, schema: { summary: 'Delete a notification', params: S.IdParams, response: { 200: Envelope(Type.Object({ id: Type.String({ format: 'uuid' }), deleted: Type.Boolean() })) } } },
    async (req) => ok(await svc.deleteNotification(req.ctx, (req.params as { id: string }).id)));
}
