import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { GatewayService } from '../gateway/index.js';
import { dueDateText, lookupPublicInvoice, PUBLIC_RATE_LIMIT, type PublicInvoice } from '../invoicing/index.js';
import type { Clock } from '../platform/clock.js';
import { won } from '../platform/format.js';
import type { App } from '../platform/http.js';
import { pageErrorHandler, renderErrorPage, sendErrorPage } from './error-page.js';
import { html, layout, pageHeaders, type SafeHtml } from './html.js';
import { INVOICE_STATUS_LABEL, INVOICE_STATUS_TONE } from './labels.js';

/** The path of the public invoice page: `{public_pay_page}/:transSeqNo` (default /pay/:transSeqNo). */
export function invoicePagePath(publicPayPageUrl: string): string {
  const base = new URL(publicPayPageUrl).pathname.replace(/\/+$/, '');
  return `${base}/:transSeqNo`;
}

/** "2025-09-21T14:00:00" → "2025-09-21 14:00" (the API's KST time, as people read it). */
function when(kst: string): string {
  return kst.replace('T', ' ').slice(0, 16);
}

const NOT_FOUND = { title: '청구서를 찾을 수 없습니다', message: '주소를 다시 확인해 주세요. 삭제된 청구서일 수 있습니다.' };

export function renderInvoicePage(v: PublicInvoice): string {
  const items = v.items.length === 0 ? '' : html`
<section class="card">
<div class="table-wrap">
<table class="items">
<caption>청구 항목</caption>
<thead><tr><th scope="col">항목</th><th scope="col" class="num">단가</th><th scope="col" class="num">수량</th><th scope="col" class="num">금액</th></tr></thead>
<tbody>
${v.items.map((it) => html`<tr><td class="name">${it.name}</td><td class="num">${won(it.price)}</td><td class="num">${it.qty}</td><td class="num">${won(it.net)}</td></tr>
`)}</tbody>
<tfoot><tr><th scope="row" colspan="3">합계</th><td class="num">${won(v.amount)}</td></tr></tfoot>
</table>
</div>
</section>`;
  const ACTION: Record<PublicInvoice['status'], SafeHtml> = {
    PENDING: v.paymentUrl
      ? html`<p><a class="btn" href="${v.paymentUrl}">${won(v.amount)} 결제하기</a></p>`
      : html`<p class="notice">결제 링크를 준비하고 있습니다. 잠시 후 이 페이지를 다시 열어 주세요.</p>`,
    DONE: html`<p class="notice">결제가 완료된 청구서입니다. 감사합니다.</p>`,
    CANCELED: html`<p class="notice">결제가 취소된 청구서입니다. 취소된 금액은 카드사를 통해 환불됩니다.</p>`,
  };
  const body = html`
<header class="merchant"><p class="store">${v.businessName}</p></header>
<section class="card" aria-labelledby="invoice-title">
<h1 id="invoice-title">${v.reason}</h1>
<p class="state"><span class="badge ${INVOICE_STATUS_TONE[v.status]}">${INVOICE_STATUS_LABEL[v.status]}</span></p>
<p class="amount-label">청구 금액</p>
<p class="amount">${won(v.amount)}</p>
</section>
${v.description ? html`<p class="info">${v.description}</p>` : ''}
${items}
<section class="card">
<dl class="facts">
<dt>받는 분</dt><dd>${v.receiverName}</dd>
<dt>청구일</dt><dd>${when(v.issuedAt)}</dd>
${v.dueDate ? html`<dt>납부 기한</dt><dd>${dueDateText(v.dueDate)}${v.overdue ? html` <span class="badge bad">기한 지남</span>` : ''}</dd>` : ''}
${v.paidAt ? html`<dt>결제일</dt><dd>${when(v.paidAt)}</dd>` : ''}
${v.canceledAt ? html`<dt>취소일</dt><dd>${when(v.canceledAt)}</dd>` : ''}
</dl>
</section>
${ACTION[v.status]}`;
  return layout(`${v.reason} - ${v.businessName}`, body);
}

/** Public invoice page (docs/reference.md, "Public invoice"): business, reason, items, amount, status, and a pay button while PENDING. */
export function invoicePageRoutes(app: App, deps: { db: Kysely<Database>; gateway: GatewayService; publicPayPageUrl: string; clock: Clock }): void {
  app.get(invoicePagePath(deps.publicPayPageUrl), {
    config: { rateLimit: PUBLIC_RATE_LIMIT },
    // A malformed number is answered like an unknown one.
    errorHandler: pageErrorHandler({ clientStatus: () => 404, render: (status) => renderErrorPage(status, status === 404 ? NOT_FOUND : {}) }),
    schema: {
      tags: ['Pages'],
      summary: 'Public invoice page (HTML): the invoice and a pay button while it is unpaid',
      params: Type.Object({ transSeqNo: Type.String() }),
    },
  }, async (req, reply) => {
    const view = await lookupPublicInvoice(deps.db, deps.gateway, req.params.transSeqNo, deps.clock.nowMs());
    if (!view) return sendErrorPage(reply, 404, NOT_FOUND);
    return reply.code(200).headers(pageHeaders()).send(renderInvoicePage(view));
  });
}
