import { Type } from '@sinclair/typebox';
import { AppError, GatewayCodes, GatewayError } from '../platform/errors.js';
import type { App } from '../platform/http.js';
import { LUMP_SUM } from './installments.js';
import { TERMINAL_PAY_PATHS } from './payment-state.js';
import type { GatewayService } from './service.js';

const PayBody = Type.Object({
  PLATFORM_CODE: Type.String({ minLength: 1 }),
  STORE_CODE: Type.String({ minLength: 1 }),
  cardNumber: Type.Optional(Type.String({ pattern: '^\\d{13,19}$', 'x-reason': 'must be 13 to 19 digits', examples: ['4242424242424242'] })),
  installmentMonth: Type.Optional(Type.String({ pattern: '^\\d{2}$', 'x-reason': 'must be two digits, 00 for a lump sum', examples: ['00'] })),
});

const TerminalBody = Type.Object({
  PLATFORM_CODE: Type.String({ minLength: 1 }),
  STORE_CODE: Type.String({ minLength: 1 }),
  TRANS_SEQNO: Type.String({ minLength: 1, maxLength: 64 }),
  APPROVAL_AMOUNT: Type.String({ pattern: '^\\d{1,12}$', 'x-reason': 'must be a string of 1 to 12 digits' }),
  MOBILE_NO: Type.String({ pattern: '^\\d{9,11}$', 'x-reason': 'must be 9 to 11 digits' }),
  PAY_PATH: Type.Union(TERMINAL_PAY_PATHS.map((p) => Type.Literal(p))),
});

/** The card the sandbox pay call uses when none is given (docs/reference.md, "Sandbox"). */
export const DEFAULT_SANDBOX_CARD = { number: '4242424242424242', expiryMonth: '12', expiryYear: '99', holderId: '900101', passwordDigits: '00' };

/** Sandbox gateway calls: the customer pays, or a terminal approves. */
export function sandboxGatewayRoutes(app: App, gw: GatewayService): void {
  const tags = ['Sandbox'];

  app.post('/sandbox/payments/:TRANS_SEQNO/pay', {
    schema: {
      tags, summary: 'The customer pays, through the same code as the payment page (default card 4242…)',
      params: Type.Object({ TRANS_SEQNO: Type.String({ maxLength: 64 }) }), body: PayBody,
    },
  }, async (req) => {
    const b = req.body;
    const p = await gw.findByStore(b.PLATFORM_CODE, b.STORE_CODE, req.params.TRANS_SEQNO);
    if (!p) throw new AppError('NOT_FOUND', 'TRANS_SEQNO: no such payment for this platform and store');
    const r = await gw.pay(p.id, { ...DEFAULT_SANDBOX_CARD, number: b.cardNumber ?? DEFAULT_SANDBOX_CARD.number }, b.installmentMonth ?? LUMP_SUM);
    const message = r.outcome === 'APPROVED' ? '승인되었습니다'
      : r.outcome === 'STATE' ? `이미 처리된 결제입니다 (${r.payment.state})` : r.message;
    return { approved: r.outcome === 'APPROVED', APPROVE_STATUS: r.payment.state, message };
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
