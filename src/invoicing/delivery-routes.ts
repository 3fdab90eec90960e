import type { FastifyRequest, RouteShorthandOptions } from 'fastify';
import { ok, type App } from '../platform/http.js';
import type { DeliveryLog } from './delivery-log.js';
import { DeliveryDetailSchema, DeliveryList, DeliveryListQuery, DeliveryParams, DeliverySummary, RecoverBody, RecoverResult } from './delivery-schemas.js';
import { Envelope, ErrorEnvelope } from './schemas.js';

type Hooks = Pick<RouteShorthandOptions, 'onRequest' | 'preValidation'>;

const tags = ['Deliveries'];
const security = [{ accessToken: [] as string[] }];
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorEnvelope]));
const doc = (summary: string, description: string) => ({ tags, summary, description, security });

/**
 * The delivery log (docs/reference.md, "Deliveries"), with the invoicing routes' token hooks:
 * reading needs any member of the team, redelivery and recovery a manager or an owner.
 */
export function deliveryRoutes(app: App, d: { log: DeliveryLog; hooks: Hooks; writeHooks: Hooks; storeOf: (req: FastifyRequest) => string }): void {
  const { log, storeOf } = d;
  app.get('/app/v1/deliveries', {
    ...d.hooks,
    schema: {
      ...doc('List the store\'s callbacks and webhooks, newest first', 'Filters: kind, status, since (creation time), transSeqNo, billId. size at most 100 (default 20); pass nextCursor as cursor for the next page.'),
      querystring: DeliveryListQuery, response: { 200: Envelope(DeliveryList), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await log.list(storeOf(req), req.query)));

  app.get('/app/v1/deliveries/:id', {
    ...d.hooks,
    schema: {
      ...doc('One delivery: the request as sent and every attempt', 'Headers are shown without the signature. Each attempt: time, trigger (scheduled or manual), HTTP status, duration, the answer cut to 2 KB, error. Another store\'s delivery: 404 / -10.'),
      params: DeliveryParams, response: { 200: Envelope(DeliveryDetailSchema), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await log.detail(storeOf(req), req.params.id)));

  app.post('/app/v1/deliveries/:id/redeliver', {
    ...d.writeHooks,
    schema: {
      ...doc('Send a delivery again now', 'Queues a manual attempt with the same delivery number and body, signed afresh; if it fails, the job retries on the usual schedule. A failed delivery is pending again. A viewer: 403 / -4.'),
      params: DeliveryParams, response: { 200: Envelope(DeliverySummary), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await log.redeliver(storeOf(req), req.params.id)));

  app.post('/app/v1/deliveries/recover', {
    ...d.writeHooks,
    schema: {
      ...doc('Re-queue every failed delivery since a time', 'Every failed delivery of the store created at or after since is pending again with a manual attempt queued (at most 1000 a call; more: true asks for another call). A viewer: 403 / -4.'),
      body: RecoverBody, response: { 200: Envelope(RecoverResult), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await log.recover(storeOf(req), req.body.since)));
}
