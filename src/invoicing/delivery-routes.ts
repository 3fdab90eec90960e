import { Type } from '@sinclair/typebox';
import type { FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { EndpointService } from '../gateway/index.js';
import { ok, type App } from '../platform/http.js';
import type { DeliveryLog } from './delivery-log.js';
import {
  DeliveryDetailSchema, DeliveryList, DeliveryListQuery, DeliveryParams, DeliverySummary, EndpointCreateBody, EndpointParams, EndpointSchema, EndpointUpdateBody,
  EndpointWithSecret, RecoverBody, RecoverResult, TestEventResult,
} from './delivery-schemas.js';
import { Envelope, ErrorEnvelope } from './schemas.js';

type Hooks = Pick<RouteShorthandOptions, 'onRequest' | 'preValidation'>;

const tags = ['Deliveries'];
const security = [{ accessToken: [] as string[] }];
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorEnvelope]));
const doc = (summary: string, description: string) => ({ tags, summary, description, security });

/**
 * The delivery log (docs/reference.md, "Deliveries"), with the invoicing routes' token hooks:
 * the role each call needs is its action's in API_ROUTES (src/invoicing/access.ts).
 */
export function deliveryRoutes(app: App, d: { log: DeliveryLog; endpoints: EndpointService; hooks: Hooks; storeOf: (req: FastifyRequest) => string }): void {
  const { log, endpoints, storeOf } = d;
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
    ...d.hooks,
    schema: {
      ...doc('Send a delivery again now', 'Queues a manual attempt with the same delivery number and body, signed afresh; if it fails, the job retries on the usual schedule. A failed delivery is pending again. A viewer: 403 / -4.'),
      params: DeliveryParams, response: { 200: Envelope(DeliverySummary), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await log.redeliver(storeOf(req), req.params.id)));

  app.post('/app/v1/deliveries/recover', {
    ...d.hooks,
    schema: {
      ...doc('Re-queue every failing delivery since a time', 'Every failing delivery of the store created at or after since (failed, or still being retried after a failed attempt: what the console\'s overview counts) is re-queued: a failed one becomes pending with a manual attempt queued, a retrying one has its next attempt brought forward to now (never a second job). At most 1000 a call; more: true asks for another call. skipped lists the failing ones left alone and why. Two calls at once re-queue each delivery once. A viewer: 403 / -4.'),
      body: RecoverBody, response: { 200: Envelope(RecoverResult), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await log.recover(storeOf(req), req.body.since)));

  // ---- store webhook endpoints ---------------------------------------------------------------

  const etags = ['Webhook endpoints'];
  const edoc = (summary: string, description: string) => ({ tags: etags, summary, description, security });
  app.get('/app/v1/webhook-endpoints', {
    ...d.hooks,
    schema: { ...edoc('The store\'s webhook endpoints', 'Secrets are never listed.'), response: { 200: Envelope(Type.Array(EndpointSchema)), ...errors(401, 403) } },
  }, async (req) => ok(req, await endpoints.list(storeOf(req))));

  app.post('/app/v1/webhook-endpoints', {
    ...d.hooks,
    schema: {
      ...edoc('Register a webhook endpoint', 'Events: bill.paid, bill.canceled, payment.approved, payment.canceled. The answer carries the secret (whsec_...) this once. Deliveries carry webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks) and X-Service-Event, X-Service-Delivery, X-Service-Signature. At most 10 per store.'),
      body: EndpointCreateBody, response: { 200: Envelope(EndpointWithSecret), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await endpoints.create(storeOf(req), req.body)));

  app.get('/app/v1/webhook-endpoints/:id', {
    ...d.hooks,
    schema: { ...edoc('One webhook endpoint', 'Another store\'s endpoint: 404 / -10.'), params: EndpointParams, response: { 200: Envelope(EndpointSchema), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await endpoints.get(storeOf(req), req.params.id)));

  app.patch('/app/v1/webhook-endpoints/:id', {
    ...d.hooks,
    schema: {
      ...edoc('Change, enable or disable an endpoint', 'enabled: false stops its deliveries (queued ones fail with "not sent"); true enables it again.'),
      params: EndpointParams, body: EndpointUpdateBody, response: { 200: Envelope(EndpointSchema), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await endpoints.update(storeOf(req), req.params.id, req.body)));

  app.delete('/app/v1/webhook-endpoints/:id', {
    ...d.hooks,
    schema: { ...edoc('Remove an endpoint', 'Its deliveries stay in the log.'), params: EndpointParams, response: { 200: Envelope(Type.Null()), ...errors(400, 401, 403, 404) } },
  }, async (req) => {
    await endpoints.remove(storeOf(req), req.params.id);
    return ok(req);
  });

  app.post('/app/v1/webhook-endpoints/:id/rotate-secret', {
    ...d.hooks,
    schema: {
      ...edoc('Rotate the endpoint\'s secret', 'The answer carries the new secret this once. For 24 hours deliveries carry two signatures in webhook-signature (new and old), so a receiver can switch without losing any. Two rotations at once take turns; one beaten by others five times in a row answers 409 / -24 and changes nothing.'),
      params: EndpointParams, response: { 200: Envelope(EndpointWithSecret), ...errors(400, 401, 403, 404, 409) },
    },
  }, async (req) => ok(req, await endpoints.rotate(storeOf(req), req.params.id)));

  app.post('/app/v1/webhook-endpoints/:id/test', {
    ...d.hooks,
    schema: {
      ...edoc('Send a test event', 'Delivers {"event":"webhook.test",...} to the endpoint now, signed like every delivery; follow it with GET /app/v1/deliveries/{deliveryId}. A disabled endpoint: 409 / -24.'),
      params: EndpointParams, response: { 200: Envelope(TestEventResult), ...errors(400, 401, 403, 404, 409) },
    },
  }, async (req) => ok(req, await endpoints.sendTest(storeOf(req), req.params.id)));
}
