import { Type } from '@sinclair/typebox';
import { DELIVERY_KINDS, DELIVERY_STATES } from '../jobs/job-state.js';
import { Nullable as N } from '../platform/schemas.js';

/** Shapes of the delivery log (docs/reference.md, "Deliveries"). */
const DeliveryId = Type.String({ pattern: '^dlv_[0-9a-f]{32}$', 'x-reason': 'must be a delivery id (dlv_ and 32 hex digits)', examples: ['dlv_5f0c2a9e7b1d4c38a6e2f1b0c9d8e7a6'] });
const Since = Type.String({
  minLength: 16, maxLength: 40, description: 'ISO 8601 date-time; without an offset it is KST', examples: ['2026-11-22T09:00:00+09:00'],
});

export const DeliveryParams = Type.Object({ id: DeliveryId });

export const DeliveryListQuery = Type.Object({
  kind: Type.Optional(Type.Union(DELIVERY_KINDS.map((k) => Type.Literal(k)), { 'x-reason': 'must be callback or webhook' })),
  status: Type.Optional(Type.Union(DELIVERY_STATES.map((s) => Type.Literal(s)), { 'x-reason': 'must be pending, delivered or failed' })),
  since: Type.Optional(Since),
  transSeqNo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The payment\'s TRANS_SEQNO', examples: ['B20261122000123'] })),
  billId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The invoice\'s uniqueId', examples: ['3f6c1c2e-8a4b-4f7e-9d2a-1b5e6c7d8e9f'] })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'nextCursor of the previous page' })),
  size: Type.Optional(Type.String({ pattern: '^([1-9]\\d?|100)$', 'x-reason': 'must be a whole number from 1 to 100', description: 'At most 100 (default 20)' })),
});

const DeliveryExample = {
  id: 'dlv_5f0c2a9e7b1d4c38a6e2f1b0c9d8e7a6', kind: 'webhook', number: '1042', status: 'failed', event: 'bill.paid', transSeqNo: 'B20261122000123',
  billId: '3f6c1c2e-8a4b-4f7e-9d2a-1b5e6c7d8e9f', url: 'https://academy.example.com/hooks/sunap', attempts: 5, lastAttemptAt: '2026-11-22T12:41:07',
  createdAt: '2026-11-22T09:38:02',
};

const deliveryFields = {
  id: DeliveryId,
  kind: Type.Union(DELIVERY_KINDS.map((k) => Type.Literal(k))),
  number: Type.String({ description: 'What the receiver deduplicates by: X-Service-Delivery of a webhook, TRANS_SEQNO of a callback. The same on every attempt.' }),
  status: Type.Union(DELIVERY_STATES.map((s) => Type.Literal(s))),
  event: N(Type.String({ description: 'bill.paid or bill.canceled (webhooks)' })),
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
  attemptNo: Type.Integer({ description: 'The attempt of its job (a redelivery or recovery starts a new job at 1)' }),
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
      body: '{"event":"bill.paid","billId":"3f6c1c2e-8a4b-4f7e-9d2a-1b5e6c7d8e9f","requestId":null,"transSeqNo":"B20261122000123","status":"DONE","amount":128000,"reason":"11월 수강료","paidAt":"2026-11-22T09:38:01","canceledAt":null,"occurredAt":"2026-11-22T09:38:02"}',
    },
    attemptLog: [
      { at: '2026-11-22T09:38:02', trigger: 'scheduled', attemptNo: 1, statusCode: 503, durationMs: 41, responseBody: 'Service Unavailable', error: 'HTTP 503' },
      { at: '2026-11-22T12:55:30', trigger: 'manual', attemptNo: 1, statusCode: 200, durationMs: 38, responseBody: '{"ok":true}', error: null },
    ],
  }],
});

export const RecoverBody = Type.Object({ since: Since });
export const RecoverResult = Type.Object({
  requeued: Type.Integer({ description: 'Failed deliveries made pending again, each with a new manual attempt queued' }),
  more: Type.Boolean({ description: 'More than 1000 matched: call again for the rest' }),
}, { examples: [{ requeued: 3, more: false }] });
