import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { lookupPublicInvoice, PUBLIC_RATE_LIMIT, tooManyRequests, type PublicInvoice } from '../invoicing/public.js';
import { html, layout, pageHeaders, won, type SafeHtml } from './html.js';

const STATUS_LABEL: Record<string, string> = { PENDING: '결제 대기', DONE: '결제 완료', CANCELED: '결제 취소' };

/** The path of the public invoice page: `{public_pay_page}/:transSeqNo` (default /pay/:transSeqNo). */
export function invoicePagePath(publicPayPageUrl: string): string {
  const base = new URL(publicPayPageUrl).pathname.replace(/\/+$/, '');
  return `${base}/:transSeqNo`;
}

/** "2025-09-21T14:00:00" → "2025-09-21 14:00" (KST, as the API gives it). */
function when(kst: string): string {
  return kst.replace('T', ' ').slice(0, 16);
}

const STATUS_BADGE: Record<string, string> = { PENDING: 'warn', DONE: 'ok', CANCELED: '' };

export function renderInvoicePage(v: PublicInvoice): string {
  const status = STATUS_LABEL[v.status] ?? v.status;
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
  let action: SafeHtml | string = '';
  if (v.status === 'PENDING') {
    action = v.paymentUrl
      ? html`<p><a class="btn" href="${v.paymentUrl}">${won(v.amount)} 결제하기</a></p>`
      : html`<p class="notice">결제 링크를 준비하고 있습니다. 잠시 후 이 페이지를 다시 열어 주세요.</p>`;
  } else if (v.status === 'DONE') {
    action = html`<p class="notice">결제가 완료된 청구서입니다. 감사합니다.</p>`;
  } else if (v.status === 'CANCELED') {
    action = html`<p class="notice">결제가 취소된 청구서입니다. 취소된 금액은 카드사를 통해 환불됩니다.</p>`;
  }
  const body = html`
<header class="merchant"><p class="store">${v.businessName}</p></header>
<section class="card" aria-labelledby="invoice-title">
<h1 id="invoice-title">${v.reason}</h1>
<p class="state"><span class="badge ${STATUS_BADGE[v.status] ?? ''}">${status}</span></p>
<p class="amount-label">청구 금액</p>
<p class="amount">${won(v.amount)}</p>
</section>
${v.description ? html`<p class="info">${v.description}</p>` : ''}
${items}
<section class="card">
<dl class="facts">
<dt>받는 분</dt><dd>${v.receiverName}</dd>
<dt>청구일</dt><dd>${when(v.issuedAt)}</dd>
${v.paidAt ? html`<dt>결제일</dt><dd>${when(v.paidAt)}</dd>` : ''}
${v.canceledAt ? html`<dt>취소일</dt><dd>${when(v.canceledAt)}</dd>` : ''}
</dl>
</section>
${action}`;
  return layout(`${v.reason} - ${v.businessName}`, body);
}

export function renderMessagePage(title: string, message: string): string {
  return layout(title, html`<section class="card state"><h1>${title}</h1><p>${message}</p></section>`);
}

function notFound(reply: FastifyReply) {
  return reply.code(404).headers(pageHeaders()).send(renderMessagePage('청구서를 찾을 수 없습니다', '주소를 다시 확인해 주세요. 삭제된 청구서일 수 있습니다.'));
}

/** Errors of this page are pages too (the root handler answers JSON). */
function pageErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode ?? 500;
  if (status === 429) {
    req.resultCode = '-29';
    return reply.code(429).headers(pageHeaders()).send(renderMessagePage('요청이 너무 많습니다', '잠시 후 다시 시도해 주세요.'));
  }
  if (status >= 400 && status < 500) return notFound(reply);
  req.log.error({ err }, 'invoice page failed');
  return reply.code(500).headers(pageHeaders()).send(renderMessagePage('일시적인 오류', '잠시 후 다시 시도해 주세요.'));
}

/** Public invoice page (decisions §8): business, reason, items, amount, status, and a pay button while PENDING. */
export function invoicePageRoutes(app: FastifyInstance): void {
  app.get(invoicePagePath(app.sunap.config.publicPayPageUrl), {
    config: { rateLimit: { ...PUBLIC_RATE_LIMIT, errorResponseBuilder: tooManyRequests } },
    errorHandler: pageErrorHandler,
    schema: {
      tags: ['Pages'],
      summary: 'Public invoice page (HTML): the invoice and a pay button while it is unpaid',
      params: Type.Object({ transSeqNo: Type.String() }),
    },
  }, async (req, reply) => {
    const { transSeqNo } = req.params as { transSeqNo: string };
    const view = await lookupPublicInvoice(app, transSeqNo);
    if (!view) return notFound(reply);
    return reply.code(200).headers(pageHeaders()).send(renderInvoicePage(view));
  });
}
