import { Type } from '@sinclair/typebox';
import { can, INVOICE_SEND_STATUSES, maskPhone, INVOICE_STATUSES, type InvoiceFilter, type InvoiceListRow } from '../../invoicing/index.js';
import { INVOICE_SEND_STATUS_LABEL, INVOICE_STATUS_LABEL, SEND_CHANNEL_LABEL } from '../../pages/labels.js';
import type { App } from '../../platform/http.js';
import { kstDate, kstIso, kstMonthRange } from '../../platform/kst.js';
import { streamCsv, type Column } from '../csv.js';
import { Csrf, cursorParam, parseCursor, Str } from '../forms.js';
import { csrfToken, renderPage, seeOther, storeKey, userOf, type ConsoleDeps } from '../http.js';
import { phone } from '../views/format.js';
import { invoiceConfirm, invoiceDetail, invoiceList, type InvoiceDetailView, type InvoiceQuery } from '../views/invoices.js';

export const PAGE_SIZE = 50;

const ListQuery = Type.Object({ q: Str(64), status: Str(20), sendStatus: Str(20), month: Str(7), due: Str(10), after: Str(100), notice: Str(20) });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const pick = <T extends string>(values: readonly T[], v: string | undefined): T | undefined => (values as readonly string[]).includes(v ?? '') ? (v as T) : undefined;

/** `nowMs`: the service clock; `due=overdue` keeps the unpaid whose due date is before today (KST). */
export function invoiceFilter(q: InvoiceQuery, nowMs: number): InvoiceFilter {
  const range = q.month && /^\d{4}-(0[1-9]|1[0-2])$/.test(q.month) ? kstMonthRange(q.month) : undefined;
  return {
    q: q.q?.trim() || undefined, status: pick(INVOICE_STATUSES, q.status), sendStatus: pick(INVOICE_SEND_STATUSES, q.sendStatus), from: range?.[0], to: range?.[1],
    overdueBefore: q.due === 'overdue' ? kstDate(nowMs) : undefined,
  };
}

function queryString(q: InvoiceQuery, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...q, ...extra })) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

const NOTICES: Record<string, string> = {
  created: '청구서를 만들었습니다. 곧 발송됩니다.', resent: '다시 보냈습니다.', canceled: '청구를 취소했습니다.', deleted: '청구서를 삭제했습니다.',
};

const kst = (ms: number | null) => (ms === null ? null : kstIso(Number(ms)).replace('T', ' '));

export const INVOICE_COLUMNS: Column<InvoiceListRow>[] = [
  { header: 'uniqueId', value: (r) => r.unique_id },
  { header: '거래번호', value: (r) => r.trans_seqno },
  { header: '받는 분', value: (r) => r.receiver_name },
  { header: '전화번호', value: (r) => phone(r.receiver_phone) },
  { header: '보호자 전화번호', value: (r) => phone(r.guardian_phone) },
  { header: '청구 사유', value: (r) => r.reason },
  { header: '금액', value: (r) => Number(r.amount) },
  { header: '결제 상태 코드', value: (r) => r.status },
  { header: '결제 상태', value: (r) => INVOICE_STATUS_LABEL[r.status] },
  { header: '발송 상태', value: (r) => INVOICE_SEND_STATUS_LABEL[r.send_status] },
  { header: '발송 횟수', value: (r) => Number(r.send_count) },
  { header: '발송 방법', value: (r) => SEND_CHANNEL_LABEL[r.send_channel] },
  { header: 'requestId', value: (r) => r.request_id },
  { header: '납부 기한', value: (r) => r.due_date },
  { header: '청구 시각', value: (r) => kst(r.created_at) },
  { header: '결제 시각', value: (r) => kst(r.done_at) },
  { header: '취소 시각', value: (r) => kst(r.canceled_at) },
];

/** Invoices (docs/console.md, "Invoices"): list and search, CSV export, detail with sends and webhooks, resend, cancel, delete. */
export function invoiceRoutes(app: App, deps: ConsoleDeps): void {
  const inv = deps.invoicing;

  app.get('/invoices', { schema: { hide: true, querystring: ListQuery } }, async (req, reply) => {
    const user = userOf(req);
    const { after, notice, ...query } = req.query;
    const c = parseCursor(after);
    const cursor = c && /^\d+$/.test(c.id) ? { at: c.at, id: Number(c.id) } : undefined;
    const page = await inv.console.search(user.tenant.id, invoiceFilter(query, deps.clock.nowMs()), cursor, PAGE_SIZE);
    const body = invoiceList({
      query, rows: page.rows, today: kstDate(deps.clock.nowMs()), canCreate: can(user.member, 'invoice.send'),
      nextHref: page.next ? `/console/invoices${queryString(query, { after: cursorParam(page.next) })}` : null,
      firstHref: cursor ? `/console/invoices${queryString(query)}` : null, exportHref: `/console/invoices.csv${queryString(query)}`,
    });
    return renderPage(req, reply, { title: '청구서', active: 'invoices', body, notice: NOTICES[notice ?? ''] });
  });

  app.get('/invoices.csv', { schema: { hide: true, querystring: ListQuery } }, async (req, reply) => {
    const user = userOf(req);
    const { after: _a, notice: _n, ...query } = req.query;
    await deps.audit.record(user, req.ip, 'invoice.export', null, queryString(query));
    const name = `sunap-invoices-${kstIso(deps.clock.nowMs()).slice(0, 10)}.csv`;
    // A viewer reads the list but takes no customer's phone number away: masked in its export.
    const masked = (v: string | null) => (v ? maskPhone(v) : '');
    const columns = can(user.member, 'invoices.export.phones') ? INVOICE_COLUMNS : INVOICE_COLUMNS.map((c) => (
      c.header === '전화번호' ? { ...c, value: (r: InvoiceListRow) => masked(r.receiver_phone) }
        : c.header === '보호자 전화번호' ? { ...c, value: (r: InvoiceListRow) => masked(r.guardian_phone) } : c));
    return streamCsv(reply, name, columns, inv.console.all(user.tenant.id, invoiceFilter(query, deps.clock.nowMs())), (err) => req.log.error({ err: err.message }, 'invoice export failed'));
  });

  const detail = async (tenantId: string, id: string): Promise<InvoiceDetailView> => inv.invoices.detail(tenantId, id);

  app.get('/invoices/:id', { schema: { hide: true, params: IdParams, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const d = await detail(user.tenant.id, req.params.id);
    const deliveries = await inv.console.deliveries(user.tenant.id, d.bill.uniqueId);
    const payment = await deps.payments.payment(storeKey(user), d.bill.transSeqNo);
    const body = invoiceDetail({
      d, deliveries, canAct: can(user.member, 'invoice.resend'), csrf: await csrfToken(req, reply),
      paymentHref: payment ? `/console/payments/${encodeURIComponent(d.bill.transSeqNo)}` : null, publicHref: `${deps.publicPayPageUrl}/${encodeURIComponent(d.bill.transSeqNo)}`,
    });
    return renderPage(req, reply, { title: `청구서 ${d.bill.receiver.name}`, active: 'invoices', body, notice: NOTICES[req.query.notice ?? ''] });
  });

  app.post('/invoices/:id/resend', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const d = await detail(user.tenant.id, req.params.id);
    const [r] = await inv.invoices.resend(user.tenant, [d.bill.uniqueId]);
    await deps.audit.record(user, req.ip, 'invoice.resend', d.bill.uniqueId, r ? `${r.resendResult}${r.reason ? `: ${r.reason}` : ''}` : null);
    return seeOther(reply, `/console/invoices/${d.bill.uniqueId}?notice=resent`);
  });

  for (const action of ['cancel', 'delete'] as const) {
    app.get(`/invoices/:id/${action}`, { schema: { hide: true, params: IdParams } }, async (req, reply) => {
      const user = userOf(req);
      const d = await detail(user.tenant.id, req.params.id);
      return renderPage(req, reply, { title: action === 'cancel' ? '청구 취소' : '청구서 삭제', active: 'invoices', body: invoiceConfirm({ d, action, csrf: await csrfToken(req, reply) }) });
    });
    app.post(`/invoices/:id/${action}`, { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
      const user = userOf(req);
      const d = await detail(user.tenant.id, req.params.id);
      // A cancel's audit row commits with the refund, written only by the request that refunded.
      if (action === 'cancel') await inv.invoices.cancel(user.tenant.id, d.bill.uniqueId, (trx) => deps.audit.recordIn(trx, user, req.ip, 'invoice.cancel', d.bill.uniqueId));
      else {
        await inv.invoices.remove(user.tenant.id, d.bill.uniqueId);
        await deps.audit.record(user, req.ip, 'invoice.delete', d.bill.uniqueId);
      }
      return seeOther(reply, action === 'cancel' ? `/console/invoices/${d.bill.uniqueId}?notice=canceled` : '/console/invoices?notice=deleted');
    });
  }
}
