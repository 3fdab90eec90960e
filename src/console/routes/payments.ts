import { Type } from '@sinclair/typebox';
import { maskedCard, ORDER_TYPES, PAY_PATHS, PAYMENT_STATES, type PaymentFilter, type PaymentListRow } from '../../gateway/index.js';
import { can, maskPhone } from '../../invoicing/index.js';
import { PAYMENT_STATE_LABEL } from '../../pages/labels.js';
import { AppError, GatewayCodes, GatewayError } from '../../platform/errors.js';
import { BANKS } from '../../ports/banks.js';
import type { App } from '../../platform/http.js';
import { kstIso } from '../../platform/kst.js';
import { streamCsv, type Column } from '../csv.js';
import { hasErrors, textProblems, type FieldErrors } from '../field-errors.js';
import { Csrf, cursorParam, digits, FORM_BODY_LIMIT, kstDayStart, parseCursor, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, storeKey, userOf, type ConsoleDeps } from '../http.js';
import { phone } from '../views/format.js';
import { cancelConfirm, deleteConfirm, ORDER_TYPE_LABEL, PAY_PATH_LABEL, paymentDetail, paymentList, type PaymentQuery } from '../views/payments.js';

export const PAGE_SIZE = 50;
const DAY_MS = 86_400_000;

const ListQuery = Type.Object({ q: Str(64), state: Str(20), from: Str(10), to: Str(10), payPath: Str(10), orderType: Str(10), after: Str(100), notice: Str(20) });
const SeqParams = Type.Object({ seq: Type.String({ minLength: 1, maxLength: 64 }) });

const pick = <T extends string>(values: readonly T[], v: string | undefined): T | undefined => (values as readonly string[]).includes(v ?? '') ? (v as T) : undefined;

/** The filter of a list query; unknown values are ignored (the form only offers known ones). */
export function paymentFilter(q: PaymentQuery): PaymentFilter {
  const to = kstDayStart(q.to);
  return {
    q: q.q?.trim() || undefined, state: pick(PAYMENT_STATES, q.state), payPath: pick(PAY_PATHS, q.payPath), orderType: pick(ORDER_TYPES, q.orderType),
    from: kstDayStart(q.from), to: to === undefined ? undefined : to + DAY_MS,
  };
}

function queryString(q: PaymentQuery, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...q, ...extra })) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

const NOTICES: Record<string, string> = { canceled: '결제를 취소했습니다.', deleted: '결제 요청을 삭제했습니다.' };

const kst = (ms: number | null) => (ms === null ? null : kstIso(Number(ms)).replace('T', ' '));

/** The export's columns: codes for machines, labels for people, amounts as numbers. */
export const PAYMENT_COLUMNS: Column<PaymentListRow>[] = [
  { header: '거래번호', value: (p) => p.trans_seqno },
  { header: '상태 코드', value: (p) => p.state },
  { header: '상태', value: (p) => PAYMENT_STATE_LABEL[p.state] },
  { header: '금액', value: (p) => Number(p.amount) },
  { header: '결제자', value: (p) => p.pay_user_name },
  { header: '전화번호', value: (p) => phone(p.mobile_no) },
  { header: '내용', value: (p) => p.request_reason },
  { header: '주문 유형', value: (p) => ORDER_TYPE_LABEL[p.order_type] },
  { header: '결제 경로', value: (p) => PAY_PATH_LABEL[p.pay_path] },
  { header: '카드사', value: (p) => p.issuer_name },
  { header: '카드번호', value: (p) => maskedCard(p.card_bin, p.card_last4) },
  { header: '할부 개월', value: (p) => p.installment_month },
  { header: '승인번호', value: (p) => p.approval_number },
  { header: '승인 시각', value: (p) => kst(p.approval_at) },
  { header: '취소 시각', value: (p) => kst(p.cancel_at) },
  { header: '취소 금액', value: (p) => Number(p.cancel_amount) },
  { header: '취소 사유', value: (p) => p.cancel_reason },
  { header: '요청 시각', value: (p) => kst(p.created_at) },
];

/** Payments (docs/console.md, "Payments"): list and search, CSV export, detail with its timeline, cancel and delete. */
export function paymentRoutes(app: App, deps: ConsoleDeps): void {
  app.get('/payments', { schema: { hide: true, querystring: ListQuery } }, async (req, reply) => {
    const user = userOf(req);
    const { after, notice, ...query } = req.query;
    const cursor = parseCursor(after);
    const page = await deps.payments.search(storeKey(user), paymentFilter(query), cursor, PAGE_SIZE);
    const body = paymentList({
      query, rows: page.rows, nextHref: page.next ? `/console/payments${queryString(query, { after: cursorParam(page.next) })}` : null,
      firstHref: cursor ? `/console/payments${queryString(query)}` : null, exportHref: `/console/payments.csv${queryString(query)}`,
    });
    return renderPage(req, reply, { title: '결제', active: 'payments', body, notice: NOTICES[notice ?? ''] });
  });

  app.get('/payments.csv', { schema: { hide: true, querystring: ListQuery } }, async (req, reply) => {
    const user = userOf(req);
    const { after: _a, notice: _n, ...query } = req.query;
    await deps.audit.record(user, req.ip, 'payment.export', null, queryString(query));
    const name = `sunap-payments-${kstIso(deps.clock.nowMs()).slice(0, 10)}.csv`;
    // A viewer reads the list but takes no customer's phone number away: masked in its export.
    const columns = can(user.member, 'payments.export.phones') ? PAYMENT_COLUMNS
      : PAYMENT_COLUMNS.map((c) => (c.header === '전화번호' ? { ...c, value: (p: PaymentListRow) => (p.mobile_no ? maskPhone(p.mobile_no) : '') } : c));
    return streamCsv(reply, name, columns, deps.payments.all(storeKey(user), paymentFilter(query)), (err) => req.log.error({ err: err.message }, 'payment export failed'));
  });

  app.get('/payments/:seq', { schema: { hide: true, params: SeqParams, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const t = await deps.payments.timeline(storeKey(user), req.params.seq);
    const inv = await deps.invoicing.console.invoiceOfPayment(user.tenant.id, t.payment.id, user.store.code);
    const body = paymentDetail({
      ...t, canAct: can(user.member, 'payment.cancel'), csrf: await csrfToken(req, reply), invoiceHref: inv && inv !== 'OTHER' ? `/console/invoices/${inv}` : null,
    });
    return renderPage(req, reply, { title: `결제 ${t.payment.trans_seqno}`, active: 'payments', body, notice: NOTICES[req.query.notice ?? ''] });
  });

  const found = async (req: { params: { seq: string } } & Parameters<typeof userOf>[0]) => {
    const user = userOf(req);
    const p = await deps.payments.payment(storeKey(user), req.params.seq);
    if (!p) throw new AppError('NOT_FOUND', 'payment: no such payment');
    return { user, p };
  };

  app.get('/payments/:seq/cancel', { schema: { hide: true, params: SeqParams } }, async (req, reply) => {
    const { p } = await found(req);
    return renderPage(req, reply, { title: '결제 취소', active: 'payments', body: cancelConfirm({ payment: p, csrf: await csrfToken(req, reply), banks: [...BANKS] }) });
  });

  app.post('/payments/:seq/cancel', {
    bodyLimit: FORM_BODY_LIMIT,
    schema: { hide: true, params: SeqParams, body: Type.Object({ ...Csrf, reason: Text(), confirm: Text(), refundBank: Text(), refundAccount: Text(), refundHolder: Text() }) },
  }, async (req, reply) => {
    const { user, p } = await found(req);
    const b = req.body;
    const reason = b.reason?.trim() ?? '';
    const again = async (errors: FieldErrors) => renderPage(req, reply, {
      title: '결제 취소', active: 'payments',
      body: cancelConfirm({ payment: p, csrf: await csrfToken(req, reply), errors, banks: [...BANKS], values: b }),
    }, 400);
    // Every problem at once; the limits are the API's CANCEL_REASON and refund fields (display text without control characters).
    const errors = textProblems(b, {
      reason: { label: '취소 사유', max: 100, required: true },
      refundHolder: { label: '예금주', max: 30 },
      refundAccount: { label: '계좌번호', max: 30 },
    });
    if (b.confirm !== 'yes') errors.confirm = `${Number(p.amount).toLocaleString('ko-KR')}원 전액 취소를 확인해 주세요 (확인란에 표시).`;
    if (b.refundBank && !BANKS.some((x) => x.code === b.refundBank)) errors.refundBank = '환불 받을 은행을 목록에서 골라 주세요.';
    const account = digits(b.refundAccount);
    if (!errors.refundAccount && account && !/^\d{6,20}$/.test(account)) errors.refundAccount = '계좌번호는 숫자 6~20자리로 적어 주세요 (- 포함 가능).';
    if (p.method === 'VIRTUAL_ACCOUNT') {
      // A virtual account's refund needs all three (the service says so too, 4010): each missing one beside its field.
      if (!b.refundBank) errors.refundBank = '환불 받을 은행을 골라 주세요.';
      if (!account && !errors.refundAccount) errors.refundAccount = '환불 받을 계좌번호를 적어 주세요.';
      if (!b.refundHolder?.trim() && !errors.refundHolder) errors.refundHolder = '예금주를 적어 주세요.';
    }
    if (hasErrors(errors)) return again(errors);
    // The same service as the API's CANCEL: the full approved amount, its rules and codes; a
    // virtual account's refund account is checked there (4010 without it, 4002 naming a bad field).
    try {
      // The audit row commits with the refund, and only the request that refunded writes one:
      // repeated or racing submits of the form record the refund once.
      await deps.gateway.cancelApproved(user.store, p, Number(p.amount), reason, { bankCode: b.refundBank, accountNumber: b.refundAccount, holderName: b.refundHolder },
        (trx) => deps.audit.recordIn(trx, user, req.ip, 'payment.cancel', p.trans_seqno, reason));
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      if (err.resultCode === GatewayCodes.TERMINAL) return again({ form: '단말기에서 승인된 결제는 그 단말기에서 취소해 주세요.' });
      if (err.resultCode === GatewayCodes.REFUND_ACCOUNT) return again({ refundAccount: '가상계좌 결제는 환불 받을 계좌(은행, 계좌번호, 예금주)를 모두 적어 주세요.' });
      if (err.resultCode === GatewayCodes.VALIDATION && err.message.startsWith('REFUND_BANK_CODE')) return again({ refundBank: '환불 받을 은행을 목록에서 골라 주세요.' });
      if (err.resultCode === GatewayCodes.VALIDATION && err.message.startsWith('REFUND_ACCOUNT_NO')) return again({ refundAccount: '계좌번호는 숫자 6~20자리로 적어 주세요 (- 포함 가능).' });
      if (err.resultCode === GatewayCodes.VALIDATION && err.message.startsWith('REFUND_HOLDER_NAME')) return again({ refundHolder: '예금주는 30자까지 적어 주세요.' });
      throw err;
    }
    return seeOther(reply, `/console/payments/${encodeURIComponent(p.trans_seqno)}?notice=canceled`);
  });

  app.get('/payments/:seq/delete', { schema: { hide: true, params: SeqParams } }, async (req, reply) => {
    const { p } = await found(req);
    return renderPage(req, reply, { title: '결제 요청 삭제', active: 'payments', body: deleteConfirm({ payment: p, csrf: await csrfToken(req, reply) }) });
  });

  app.post('/payments/:seq/delete', { schema: { hide: true, params: SeqParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const { user, p } = await found(req);
    const inv = await deps.invoicing.console.invoiceOfPayment(user.tenant.id, p.id, user.store.code);
    // An invoice's payment goes with its invoice (the invoice is hidden too); others as the API's DELETE.
    if (inv === 'OTHER') throw new AppError('STATE', 'payment: it belongs to an invoice of another account of this store; delete that invoice there');
    if (inv) await deps.invoicing.invoices.remove(user.tenant.id, inv);
    else await deps.gateway.deleteUnpaid(p);
    await deps.audit.record(user, req.ip, 'payment.delete', p.trans_seqno);
    return seeOther(reply, `/console/payments/${encodeURIComponent(p.trans_seqno)}?notice=deleted`);
  });
}
