import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayCodes as C, GatewayError, gatewayEnvelope, gatewayRefusal } from '../platform/errors.js';
import type { App } from '../platform/http.js';
import { isPlainObject } from '../platform/validation.js';
import {
  CancelPaymentBody, CancelResult, gatewayEnvelopeSchema, GatewayRefusal, PaymentRecord, RequestPaymentBody, RequestPaymentResult, SearchPaymentBody,
} from './schemas.js';
import type { GatewayService } from './service.js';

const OK_MSG = '정상 처리되었습니다';

/** Body validation happens in the service, in the order the gateway's contract prescribes; the schema documents it. */
const documentedOnly = () => () => true;

export function notJsonObject() {
  return gatewayRefusal('body: must be a JSON object');
}

async function call(req: FastifyRequest, reply: FastifyReply, fn: (b: Record<string, unknown>) => Promise<Record<string, unknown>>) {
  const body: unknown = req.body;
  if (!isPlainObject(body)) {
    req.resultCode = C.VALIDATION;
    return reply.code(400).send(notJsonObject());
  }
  try {
    const data = await fn(body);
    req.resultCode = C.OK;
    return gatewayEnvelope(C.OK, OK_MSG, data);
  } catch (err) {
    if (err instanceof GatewayError) {
      req.resultCode = err.resultCode;
      return gatewayEnvelope(err.resultCode, err.message);
    }
    throw err;
  }
}

/** Thin routes: one service call each, the gateway envelope with HTTP 200 (docs/reference.md, "Conventions"). */
export function gatewayRoutes(app: App, svc: GatewayService): void {
  const tags = ['Gateway'];
  const refusals = { 400: GatewayRefusal, 413: GatewayRefusal, 500: GatewayRefusal };
  app.post('/api/requestPayment', {
    validatorCompiler: documentedOnly,
    schema: {
      tags, summary: 'Create a payment and get the payment page link (REDIRECT_URL)',
      description: 'Answers HTTP 200; the outcome is result_data.RESULT_CODE: 0000, or 3001, 4001, 4002, 4005, 5001 (docs/reference.md).',
      body: RequestPaymentBody, response: { 200: gatewayEnvelopeSchema(RequestPaymentResult), ...refusals },
    },
  }, (req, reply) => call(req, reply, (b) => svc.requestPayment(b)));

  app.post('/api/searchPayment', {
    validatorCompiler: documentedOnly,
    schema: {
      tags, summary: 'Look up a payment: the only proof of approval',
      description: 'Answers HTTP 200; the outcome is result_data.RESULT_CODE: 0000, or 3001, 4002, 4003, 4005.',
      body: SearchPaymentBody, response: { 200: gatewayEnvelopeSchema(PaymentRecord), ...refusals },
    },
  }, (req, reply) => call(req, reply, (b) => svc.searchPayment(b)));

  app.post('/api/requestPaymentCancel', {
    validatorCompiler: documentedOnly,
    schema: {
      tags, summary: 'Cancel an approved payment in full (CANCEL) or close an unpaid one (DELETE)',
      description: 'Answers HTTP 200; the outcome is result_data.RESULT_CODE: 0000, or 3001, 4002, 4004, 4005, 4006, 4007, 4008, 4009.',
      body: CancelPaymentBody, response: { 200: gatewayEnvelopeSchema(CancelResult), ...refusals },
    },
  }, (req, reply) => call(req, reply, (b) => svc.cancelPayment(b)));
}
