import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayCodes as C, GatewayError, gatewayEnvelope } from '../platform/errors.js';
import { isPlainObject } from '../platform/validation.js';
import {
  CancelPaymentBody, CancelResult, gatewayEnvelopeSchema, PaymentRecord, RequestPaymentBody, RequestPaymentResult, SearchPaymentBody,
} from './schemas.js';
import type { GatewayService } from './service.js';

const OK_MSG = '정상 처리되었습니다';

/** Body validation happens in the service, in the order decisions §4 prescribes; the schema documents it. */
const documentedOnly = () => () => true;

export function notJsonObject() {
  return { result_code: -1, result_msg: 'invalid request body', result_data: { RESULT_CODE: C.VALIDATION, RESULT_MSG: 'body: must be a JSON object' } };
}

async function call(req: FastifyRequest, reply: FastifyReply, fn: (b: Record<string, unknown>) => Promise<Record<string, unknown>>) {
  if (!isPlainObject(req.body)) {
    req.resultCode = C.VALIDATION;
    return reply.code(400).send(notJsonObject());
  }
  try {
    const data = await fn(req.body);
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

export function gatewayRoutes(app: FastifyInstance, svc: GatewayService): void {
  const tags = ['Gateway'];
  app.post('/api/requestPayment', {
    validatorCompiler: documentedOnly,
    schema: {
      tags, summary: 'Create a payment and get the payment page link (REDIRECT_URL)',
      body: RequestPaymentBody, response: { 200: gatewayEnvelopeSchema(RequestPaymentResult) },
    },
  }, (req, reply) => call(req, reply, (b) => svc.requestPayment(b)));

  app.post('/api/searchPayment', {
    validatorCompiler: documentedOnly,
    schema: {
      tags, summary: 'Look up a payment: the only proof of approval',
      body: SearchPaymentBody, response: { 200: gatewayEnvelopeSchema(PaymentRecord) },
    },
  }, (req, reply) => call(req, reply, (b) => svc.searchPayment(b)));

  app.post('/api/requestPaymentCancel', {
    validatorCompiler: documentedOnly,
    schema: {
      tags, summary: 'Cancel an approved payment in full (CANCEL) or close an unpaid one (DELETE)',
      body: CancelPaymentBody, response: { 200: gatewayEnvelopeSchema(CancelResult) },
    },
  }, (req, reply) => call(req, reply, (b) => svc.cancelPayment(b)));
}

