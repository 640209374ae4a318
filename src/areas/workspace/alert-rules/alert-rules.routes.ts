import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ErrorEnvelope, ListEnvelope, ok, okList } from '../../../core/http/envelope.js';
import { OffsetQuery } from '../../../core/pagination.js';
import * as S from './alert-rules.schemas.js';
import * as svc from './alert-rules.service.js';

const read = { scope: 'notifications:read', permission: 'notification.view' } as const;
const Page = Type.Object(OffsetQuery(50, 100));

export default async function alertRuleRoutes(app: FastifyInstance) {
  app.get('/v1/alert-rules', { config: read, schema: { summary: 'Alert rules of the organization, newest first', querystring: Page, response: { 200: ListEnvelope(Type.Array(S.AlertRuleOut)) } } },
    async (req) => {
      const q = req.query as { limit: number; offset: number };
      const { items, total } = await svc.listAlertRules(req.ctx, q);
      return okList(items, { total, ...q });
    });
  app.post('/v1/alert-rules', { config: { scope: 'notifications:write', permission: 'alert_rule.manage' }, schema: { summary: 'Create an alert rule (event_type or trigger_type; channels default in_app)', body: S.CreateAlertRuleBody, response: { 201: Envelope(S.AlertRuleOut) } } },
    async (req, reply) => reply.code(201).send(ok(await svc.createAlertRule(req.ctx, req.body as S.CreateAlertRuleInput))));
  app.get('/v1/alert-rules/:alertRuleId/deliveries', { config: { ...read, fixture: 'alert_rule' }, schema: { summary: 'Deliveries of a rule: channel, status, attempts, last error', params: S.RuleIdParams, querystring: Page, response: { 200: ListEnvelope(Type.Array(S.DeliveryOut)) } } },
    async (req) => {
      const q = req.query as { limit: number; offset: number };
      const { items, total } = await svc.listDeliveries(req.ctx, (req.params as { alertRuleId: string }).alertRuleId, q);
      return okList(items, { total, ...q });
    });
  // Reserved (spec 4.6, 9): "always" 501, for any id, UUID or not (see the service), any body and any credential
  // that authenticates (no scope or permission is asked: 501 is the answer whoever asks). Their own context, whose
  // one content-type parser reads nothing, so no body (not JSON, any content type) can turn the 501 into a 400.
  await app.register(async (reservedRoutes) => {
    reservedRoutes.removeAllContentTypeParsers();
    reservedRoutes.addContentTypeParser('*', (_req, payload, done) => { payload.resume(); payload.on('end', () => done(null, undefined)); payload.on('error', done); });
    const reserved = (verb: string) => ({
      config: { fixture: 'alert_rule' },
      schema: { summary: `${verb} an alert rule: reserved, answers 501 NOT_IMPLEMENTED whatever the id and body`,
        params: Type.Object({ alertRuleId: Type.String({ description: 'Any id, a UUID or not: the answer is 501 whatever it is' }) }),
        response: { 501: { ...ErrorEnvelope, description: 'Always (spec 4.6): reserved for a future version' } } },
    });
    reservedRoutes.put('/v1/alert-rules/:alertRuleId', reserved('Update'), async (req) => svc.reservedRuleOperation(req.ctx, (req.params as { alertRuleId: string }).alertRuleId));
    reservedRoutes.delete('/v1/alert-rules/:alertRuleId', reserved('Delete'), async (req) => svc.reservedRuleOperation(req.ctx, (req.params as { alertRuleId: string }).alertRuleId));
  });
}
