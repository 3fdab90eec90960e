import { Type } from '@sinclair/typebox';
import { AppError, GatewayCodes, GatewayError } from '../platform/errors.js';
import type { App } from '../platform/http.js';
import { Nullable } from '../platform/schemas.js';
import { EASY_PAYS, PAY_METHODS } from '../ports/checkout.js';
import { TERMINAL_PAY_PATHS } from './payment-state.js';
import { DEFAULT_SANDBOX_CARD } from './sandbox-pay.js';
import type { GatewayService } from './service.js';

const PayBody = Type.Object({
  PLATFORM_CODE: Type.String({ minLength: 1 }),
  STORE_CODE: Type.String({ minLength: 1 }),
  method: Type.Optional(Type.Union(PAY_METHODS.map((m) => Type.Literal(m)), { description: 'How the customer pays (default CARD); any method, whatever the store offers', examples: ['CARD'] })),
  easyPay: Type.Optional(Type.Union(EASY_PAYS.map((e) => Type.Literal(e)), { description: 'With EASY_PAY: the provider (default 토스페이)', examples: ['토스페이'] })),
  cardNumber: Type.Optional(Type.String({ pattern: '^\\d{13,19}$', 'x-reason': 'must be 13 to 19 digits', description: 'With CARD: a sandbox test card (default 4242…)', examples: ['4242424242424242'] })),
  installmentMonth: Type.Optional(Type.String({ pattern: '^\\d{2}$', 'x-reason': 'must be two digits, 00 for a lump sum', examples: ['00'] })),
}, { examples: [{ PLATFORM_CODE: 'PC1A2B3C4D5E', STORE_CODE: 'SD9F8E7D6C5B' }, { PLATFORM_CODE: 'PC1A2B3C4D5E', STORE_CODE: 'SD9F8E7D6C5B', method: 'EASY_PAY', easyPay: '카카오페이' }, { PLATFORM_CODE: 'PC1A2B3C4D5E', STORE_CODE: 'SD9F8E7D6C5B', method: 'VIRTUAL_ACCOUNT' }] });

const StoreBody = Type.Object({ PLATFORM_CODE: Type.String({ minLength: 1 }), STORE_CODE: Type.String({ minLength: 1 }) });

const PayAnswer = Type.Object({
  approved: Type.Boolean({ examples: [true] }),
  APPROVE_STATUS: Type.String({ examples: ['APPROVE_COMPLETE'] }),
  message: Type.Optional(Type.String({ examples: ['승인되었습니다'] })),
  VBANK_NAME: Type.Optional(Type.String({ examples: ['신한은행'] })),
  VBANK_ACCOUNT: Type.Optional(Type.String({ examples: ['56211234567890'] })),
  VBANK_HOLDER: Type.Optional(Type.String({ examples: ['행복 피아노 학원'] })),
  VBANK_DUE: Type.Optional(Nullable(Type.String({ examples: ['20261129143005'] }))),
});

const TerminalBody = Type.Object({
  PLATFORM_CODE: Type.String({ minLength: 1 }),
  STORE_CODE: Type.String({ minLength: 1 }),
  TRANS_SEQNO: Type.String({ minLength: 1, maxLength: 64 }),
  APPROVAL_AMOUNT: Type.String({ pattern: '^\\d{1,12}$', 'x-reason': 'must be a string of 1 to 12 digits' }),
  MOBILE_NO: Type.String({ pattern: '^\\d{9,11}$', 'x-reason': 'must be 9 to 11 digits' }),
  PAY_PATH: Type.Union(TERMINAL_PAY_PATHS.map((p) => Type.Literal(p))),
});

export { DEFAULT_SANDBOX_CARD };

/** Sandbox gateway calls: the customer pays, or a terminal approves. */
export function sandboxGatewayRoutes(app: App, gw: GatewayService): void {
  const tags = ['Sandbox'];

  const Seq = Type.Object({ TRANS_SEQNO: Type.String({ maxLength: 64 }) });
  app.post('/sandbox/payments/:TRANS_SEQNO/pay', {
    schema: {
      tags, summary: 'The customer pays, through the same code as the payment page (default: a card, 4242…)',
      description: 'method CARD (default; cardNumber a test card), EASY_PAY (easyPay, default 토스페이), TRANSFER, MOBILE_PHONE, or VIRTUAL_ACCOUNT (issues an account due 7 days later on the service clock; the answer carries VBANK_NAME, VBANK_ACCOUNT, VBANK_HOLDER, VBANK_DUE). A key-in store\'s card goes through its card form\'s code, everything else through the sandbox\'s window. An unknown payment answers 404 / -10.',
      params: Seq, body: PayBody, response: { 200: PayAnswer },
    },
  }, async (req) => {
    const b = req.body;
    const p = await gw.findByStore(b.PLATFORM_CODE, b.STORE_CODE, req.params.TRANS_SEQNO);
    if (!p) throw new AppError('NOT_FOUND', 'TRANS_SEQNO: no such payment for this platform and store');
    return gw.sandboxPay(p, { method: b.method, easyPay: b.easyPay, cardNumber: b.cardNumber, installmentMonth: b.installmentMonth });
  });

  app.post('/sandbox/payments/:TRANS_SEQNO/deposit', {
    schema: {
      tags, summary: 'The bank deposits the full amount into the payment\'s open virtual account',
      description: 'The sandbox processor posts its deposit notice to Sunap, which looks the order up: the payment becomes APPROVE_COMPLETE (APPROVAL_DATETIME = now) with its callback (and bill.paid for an invoice). 404 / -10 without an open account (none issued, closed, or past its due time).',
      params: Seq, body: StoreBody, response: { 200: PayAnswer },
    },
  }, async (req) => {
    const b = req.body;
    const p = await gw.findByStore(b.PLATFORM_CODE, b.STORE_CODE, req.params.TRANS_SEQNO);
    const paid = p && (await gw.sandboxDeposit(p));
    if (!paid) throw new AppError('NOT_FOUND', 'TRANS_SEQNO: no open virtual account for this payment (none issued, closed, or past its due time)');
    return { approved: paid.state === 'APPROVE_COMPLETE', APPROVE_STATUS: paid.state, message: '입금되었습니다' };
  });

  app.post('/sandbox/payments/:TRANS_SEQNO/dashboard-cancel', {
    schema: {
      tags, summary: 'The payment is cancelled in the processor\'s own dashboard (not through Sunap)',
      description: 'The sandbox processor cancels it and posts its status notice; Sunap looks the order up and records CANCEL_COMPLETE with what a cancel causes (bill.canceled, payment.canceled). 404 / -10 for a payment the sandbox processor did not take or that is not paid.',
      params: Seq, body: StoreBody, response: { 200: PayAnswer },
    },
  }, async (req) => {
    const b = req.body;
    const p = await gw.findByStore(b.PLATFORM_CODE, b.STORE_CODE, req.params.TRANS_SEQNO);
    const canceled = p && (await gw.sandboxDashboardCancel(p));
    if (!canceled) throw new AppError('NOT_FOUND', 'TRANS_SEQNO: no paid payment of the sandbox processor with this number');
    return { approved: false, APPROVE_STATUS: canceled.state, message: '결제사에서 취소되었습니다' };
  });

  app.post('/sandbox/terminal-payments', {
    schema: { tags, summary: 'Record a payment approved on a terminal (KIOSK, VAN or CARD)', body: TerminalBody },
  }, async (req) => {
    const b = req.body;
    try {
      const p = await gw.recordTerminalPayment({
        platformCode: b.PLATFORM_CODE, storeCode: b.STORE_CODE, transSeqNo: b.TRANS_SEQNO,
        amount: Number(b.APPROVAL_AMOUNT), mobileNo: b.MOBILE_NO, payPath: b.PAY_PATH,
      });
      return { TRANS_SEQNO: p.trans_seqno, APPROVE_STATUS: p.state, PAY_PATH: p.pay_path, APPROVAL_AMOUNT: p.amount };
    } catch (err) {
      // Sandbox errors use the invoicing envelope like every other /sandbox answer.
      if (err instanceof GatewayError) {
        throw new AppError(err.resultCode === GatewayCodes.STORE ? 'NOT_FOUND' : err.resultCode === GatewayCodes.DUPLICATE ? 'STATE' : 'VALIDATION', err.message);
      }
      throw err;
    }
  });
}
