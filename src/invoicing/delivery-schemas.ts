import { Type } from '@sinclair/typebox';
import { ENDPOINT_EVENTS } from '../gateway/index.js';
import { DELIVERY_KINDS, DELIVERY_STATES } from '../jobs/job-state.js';
import { SKIP_REASONS } from './delivery-log.js';
import { Nullable as N } from '../platform/schemas.js';

/** Shapes of the delivery log (docs/reference.md, "Deliveries"). */
const DeliveryId = Type.String({ pattern: '^dlv_[0-9a-f]{32}$', 'x-reason': 'must be a delivery id (dlv_ and 32 hex digits)', examples: ['dlv_5f0c2a9e7b1d4c38a6e2f1b0c9d8e7a6'] });
const Since = Type.String({
  minLength: 16, maxLength: 40, description: 'ISO 8601 date-time; without an offset it is KST', examples: ['2026-11-22T09:00:00+09:00'],
});

export const DeliveryParams = Type.Object({ id: DeliveryId });

export const DeliveryListQuery = Type.Object({
  kind: Type.Optional(Type.Union(DELIVERY_KINDS.map((k) => Type.Literal(k)))),
  status: Type.Optional(Type.Union(DELIVERY_STATES.map((s) => Type.Literal(s)))),
  since: Type.Optional(Since),
  transSeqNo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The payment\'s TRANS_SEQNO', examples: ['B20261122000123'] })),
  billId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The invoice\'s uniqueId', examples: ['3f6c1c2e-8a4b-4f7e-9d2a-1b5e6c7d8e9f'] })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'nextCursor of the previous page' })),
  size: Type.Optional(Type.String({ pattern: '^([1-9]\\d?|100)$', 'x-reason': 'must be a whole number from 1 to 100', description: 'At most 100 (default 20)' })),
});

const DeliveryExample = {
  id: 'dlv_5f0c2a9e7b1d4c38a6e2f1b0c9d8e7a6', kind: 'webhook', number: '1042', status: 'failed', event: 'bill.paid', endpointId: null, transSeqNo: 'INV43TZLMJM2U7HMVSZXJNLQTCM',
  billId: '3f6c1c2e-8a4b-4f7e-9d2a-1b5e6c7d8e9f', url: 'https://academy.example.com/hooks/sunap', attempts: 5, lastAttemptAt: '2026-11-22T12:41:07',
  createdAt: '2026-11-22T09:38:02',
};

const deliveryFields = {
  id: DeliveryId,
  kind: Type.Union(DELIVERY_KINDS.map((k) => Type.Literal(k))),
  number: Type.String({ description: 'What the receiver deduplicates by: X-Service-Delivery of a webhook, TRANS_SEQNO of a callback. The same on every attempt.' }),
  status: Type.Union(DELIVERY_STATES.map((s) => Type.Literal(s))),
  event: N(Type.String({ description: 'Webhooks: bill.paid, bill.canceled, payment.approved, payment.canceled or webhook.test' })),
  endpointId: N(Type.String({ description: 'The store endpoint it goes to; null for a callback or an invoice\'s webhookUrl' })),
  transSeqNo: N(Type.String()),
  billId: N(Type.String()),
  url: Type.String(),
  attempts: Type.Integer(),
  lastAttemptAt: N(Type.String({ description: 'KST' })),
  createdAt: Type.String({ description: 'KST' }),
};

export const DeliverySummary = Type.Object(deliveryFields, { examples: [DeliveryExample] });

export const DeliveryList = Type.Object({
  deliveries: Type.Array(DeliverySummary),
  nextCursor: N(Type.String({ description: 'Pass as cursor for the next page; null on the last page' })),
});

const Attempt = Type.Object({
  at: Type.String({ description: 'KST' }),
  trigger: Type.Union([Type.Literal('scheduled'), Type.Literal('manual')]),
  attemptNo: Type.Integer({ description: 'The attempt\'s number in the delivery\'s one sequence, scheduled and manual alike: a redelivery after attempts 1 to 3 is attempt 4' }),
  statusCode: N(Type.Integer({ description: 'null when no answer came (timeout, connection refused)' })),
  durationMs: Type.Integer(),
  responseBody: N(Type.String({ description: 'The answer\'s first 2 KB' })),
  error: N(Type.String()),
});

export const DeliveryDetailSchema = Type.Object({
  ...deliveryFields,
  request: Type.Object({
    url: Type.String(),
    headers: Type.Record(Type.String(), Type.String(), { description: 'As sent, without the signature' }),
    body: Type.String({ description: 'The body bytes as sent (UTF-8)' }),
  }),
  attemptLog: Type.Array(Attempt),
}, {
  examples: [{
    ...DeliveryExample,
    request: {
      url: 'https://academy.example.com/hooks/sunap',
      headers: { 'content-type': 'application/json', 'x-service-event': 'bill.paid', 'x-service-delivery': '1042' },
      body: '{"event":"bill.paid","billId":"3f6c1c2e-8a4b-4f7e-9d2a-1b5e6c7d8e9f","requestId":null,"transSeqNo":"INV43TZLMJM2U7HMVSZXJNLQTCM","status":"DONE","amount":128000,"reason":"11월 수강료","paidAt":"2026-11-22T09:38:01","canceledAt":null,"occurredAt":"2026-11-22T09:38:02"}',
    },
    attemptLog: [
      { at: '2026-11-22T09:38:02', trigger: 'scheduled', attemptNo: 1, statusCode: 503, durationMs: 41, responseBody: 'Service Unavailable', error: 'HTTP 503' },
      { at: '2026-11-22T12:55:30', trigger: 'manual', attemptNo: 2, statusCode: 200, durationMs: 38, responseBody: '{"ok":true}', error: null },
    ],
  }],
});

export const RecoverBody = Type.Object({ since: Since });
export const RecoverResult = Type.Object({
  requeued: Type.Integer({ description: 'Failing deliveries re-queued: each failed one pending again with a manual attempt queued, each one still being retried after a failure with its next attempt brought forward to now' }),
  more: Type.Boolean({ description: 'More were left (1000 re-queued, or 5000 looked at): call again for the rest' }),
  skipped: Type.Array(Type.Object({
    id: Type.String(), number: Type.String(), kind: Type.Union([Type.Literal('callback'), Type.Literal('webhook')]), event: N(Type.String()),
    reason: Type.Union(SKIP_REASONS.map((r) => Type.Literal(r)), {
      description: 'delivered: delivered meanwhile; on_its_way: its next attempt is already due or running; endpoint_disabled / endpoint_removed: its store endpoint is off or gone',
    }),
  }), { description: 'Failing deliveries left alone, each with why' }),
}, { examples: [{ requeued: 3, more: false, skipped: [{ id: 'dlv_5f0c2b7e9a1d4c3b8e6f0a2d4c6e8b1a', number: '1043', kind: 'webhook', event: 'bill.paid', reason: 'on_its_way' }] }] });

// ---- store webhook endpoints --------------------------------------------------------------

const EndpointId = Type.String({ pattern: '^we_[0-9a-f]{32}$', 'x-reason': 'must be an endpoint id (we_ and 32 hex digits)', examples: ['we_9b2f4c1d7e8a4b6c9d0e1f2a3b4c5d6e'] });
const EndpointUrl = Type.String({ maxLength: 500, pattern: '^https://', 'x-reason': 'must start with https://', examples: ['https://academy.example.com/hooks/sunap'] });
// The answers name the events and the counts themselves ("must be one of …", "must have at most 4 entries").
const Events = Type.Array(Type.Union(ENDPOINT_EVENTS.map((e) => Type.Literal(e))), {
  minItems: 1, maxItems: ENDPOINT_EVENTS.length, examples: [['bill.paid', 'payment.approved']],
});

export const EndpointParams = Type.Object({ id: EndpointId });
export const EndpointCreateBody = Type.Object({ url: EndpointUrl, events: Events });
export const EndpointUpdateBody = Type.Object({
  url: Type.Optional(EndpointUrl), events: Type.Optional(Events), enabled: Type.Optional(Type.Boolean({ description: 'true enables (and forgets a failing streak), false disables' })),
});

const endpointFields = {
  id: EndpointId,
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabledReason: N(Type.String({ description: 'Why it is disabled: by the store, 410 Gone, or every attempt failed for 3 days' })),
  rotating: Type.Boolean({ description: 'A rotated-out secret still signs beside the current one (24 h after a rotation)' }),
  failingSince: N(Type.String({ description: 'KST; since when every attempt failed' })),
  createdAt: Type.String({ description: 'KST' }),
};
const EndpointExample = {
  id: 'we_9b2f4c1d7e8a4b6c9d0e1f2a3b4c5d6e', url: 'https://academy.example.com/hooks/sunap', events: ['bill.paid', 'payment.approved'], enabled: true,
  disabledReason: null, rotating: false, failingSince: null, createdAt: '2026-11-22T09:00:00',
};
export const EndpointSchema = Type.Object(endpointFields, { examples: [EndpointExample] });
export const EndpointWithSecret = Type.Object({
  ...endpointFields,
  secret: Type.String({ description: 'whsec_ and base64: shown this once; verify webhook-signature with it (Standard Webhooks)' }),
}, { examples: [{ ...EndpointExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2ZkHY0S6h8c=' }] });
export const TestEventResult = Type.Object({ deliveryId: Type.String() }, { examples: [{ deliveryId: 'dlv_5f0c2a9e7b1d4c38a6e2f1b0c9d8e7a6' }] });
