import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { INSTALLMENT_MIN_AMOUNT, INSTALLMENT_MONTHS } from '../gateway/index.js';
import { won } from '../platform/format.js';
import type { App } from '../platform/http.js';
import { BANKS } from '../ports/banks.js';
import { EASY_PAYS, type PayMethod } from '../ports/checkout.js';
import { REFUSALS, WINDOW_CARDS, type SandboxCheckout, type WindowAction } from '../ports/sandbox-checkout.js';
import type { SandboxOrder } from '../ports/sandbox-network.js';
import { field } from './card-form.js';
import { renderErrorPage } from './error-page.js';
import { html, layout, pageHeaders, type SafeHtml } from './html.js';
import { installmentLabel, paymentPagePaths } from './payment-page.js';

/**
 * The sandbox processor's window (docs/reference.md, "Sandbox"): what a processor's own window
 * is to a live payment, without JavaScript. It shows the order and plays every method with
 * outcomes to choose (approve with a test card or a provider, refuse with a reason, close the
 * window, issue a virtual account), then sends the browser back to Sunap's return address as a
 * processor does. Test cards are chosen by name: no card number is ever typed or sent. Sandbox
 * mode only.
 */
export function sandboxWindowPath(paymentPageUrl: string): string {
  return paymentPagePaths(paymentPageUrl).sandboxWindow;
}

const METHOD_TITLE: Record<PayMethod, string> = { CARD: '카드 결제', EASY_PAY: '간편결제', TRANSFER: '계좌이체', VIRTUAL_ACCOUNT: '가상계좌 발급', MOBILE_PHONE: '휴대폰 결제' };
const CARRIERS = ['SKT', 'KT', 'LG U+', '알뜰폰'];

function choices(o: SandboxOrder): SafeHtml {
  const radio = (name: string, value: string, label: SafeHtml | string, checked: boolean) =>
    html`<li><label><input type="radio" name="${name}" value="${value}"${checked ? html` checked` : null}> ${label}</label></li>`;
  const bankSelect = (label: string) => html`<div class="field"><label for="bank">${label}</label><select id="bank" name="bank">
${BANKS.map((b) => html`<option value="${b.code}"${b.code === '088' ? html` selected` : null}>${b.name}</option>`)}</select></div>`;
  switch (o.method) {
    case 'CARD':
      return html`<fieldset><legend>테스트 카드</legend><ul class="choices">
${WINDOW_CARDS.map((c, i) => radio('card', c.key, html`${c.label} <span class="muted nowrap">…${c.number.slice(-4)}</span>`, i === 0))}</ul></fieldset>
${o.amount >= INSTALLMENT_MIN_AMOUNT ? html`<div class="field"><label for="installment">할부</label><select id="installment" name="installment">
<option value="00" selected>일시불</option>${INSTALLMENT_MONTHS.map((m) => html`<option value="${m}">${installmentLabel(m)}</option>`)}</select></div>` : null}`;
    case 'EASY_PAY':
      return html`<fieldset><legend>간편결제</legend><ul class="choices">${EASY_PAYS.map((e, i) => radio('easyPay', e, e, i === 0))}</ul></fieldset>
<fieldset><legend>결제 재원</legend><ul class="choices">${radio('funding', 'card', '연결된 카드 (신한카드)', true)}${radio('funding', 'balance', '충전 잔액', false)}</ul></fieldset>`;
    case 'TRANSFER':
      return bankSelect('출금 은행');
    case 'VIRTUAL_ACCOUNT':
      return html`${bankSelect('입금할 은행')}<p class="muted">입금 기한은 발급 후 7일입니다.</p>`;
    case 'MOBILE_PHONE':
      return html`<fieldset><legend>통신사</legend><ul class="choices">${CARRIERS.map((c, i) => radio('carrier', c, c, i === 0))}</ul></fieldset>`;
  }
}

export function renderSandboxWindow(o: SandboxOrder, token: string, action: string): string {
  const body = html`<section class="card window" aria-labelledby="window-title">
<p class="window-bar">Sunap 샌드박스 결제창</p>
<h1 id="window-title">${METHOD_TITLE[o.method]}</h1>
<p class="sandbox">테스트 결제창입니다. 실제 카드나 계좌는 쓰이지 않습니다. 결과를 골라 보세요.</p>
<dl class="facts"><dt>상점</dt><dd>${o.detail.storeName}</dd><dt>주문명</dt><dd>${o.detail.orderName}</dd><dt>금액</dt><dd>${won(o.amount)}</dd></dl>
</section>
<form method="post" action="${action}" class="card">
<input type="hidden" name="order" value="${o.orderId}"><input type="hidden" name="t" value="${token}">
${choices(o)}
<button type="submit" class="btn" name="action" value="approve">${o.method === 'VIRTUAL_ACCOUNT' ? '가상계좌 발급받기' : `${won(o.amount)} 결제 승인`}</button>
<div class="window-other">
<div class="field"><label for="reason">거절 사유</label><select id="reason" name="reason">
${Object.entries(REFUSALS).map(([code, text]) => html`<option value="${code}">${text}</option>`)}</select></div>
<div class="actions"><button type="submit" class="btn secondary inline" name="action" value="refuse">결제 거절</button>
<button type="submit" class="btn secondary inline" name="action" value="close">결제창 닫기</button></div>
</div>
</form>`;
  return layout(`샌드박스 결제창 - ${o.detail.storeName}`, body);
}

function closedWindow(): string {
  return renderErrorPage(409, { title: '이 결제창은 닫혔습니다', message: '결제 페이지로 돌아가 결제수단을 다시 선택해 주세요.' });
}

/**
 * `formTargets`: the origins the window's form may end at after its redirects (the merchant's
 * RETURN_URL, which the return sends an approved payment on to), as the card form allows them.
 */
export function sandboxWindowRoutes(app: App, deps: { sandbox: SandboxCheckout; path: string; formTargets: (orderId: string) => Promise<string[]> }): void {
  const { sandbox, path } = deps;
  const page = (reply: FastifyReply, status: number, body: string, targets: string[] = []) => reply.code(status).headers(pageHeaders(targets)).send(body);
  const notFound = (reply: FastifyReply) => page(reply, 404, renderErrorPage(404, { title: '결제창을 찾을 수 없습니다', message: '결제 페이지에서 결제수단을 다시 선택해 주세요.' }));

  app.get(path, { schema: { hide: true, querystring: Type.Object({ order: Type.Optional(Type.Unknown()), t: Type.Optional(Type.Unknown()) }) } }, async (req, reply) => {
    const { order, t } = req.query;
    if (typeof order !== 'string' || typeof t !== 'string' || !sandbox.windowTokenValid(order, t)) return notFound(reply);
    const o = await sandbox.order(order);
    if (!o) return notFound(reply);
    if (o.state !== 'OPEN') return page(reply, 409, closedWindow());
    return page(reply, 200, renderSandboxWindow(o, t, path), await deps.formTargets(order));
  });

  app.post(path, { schema: { hide: true } }, async (req, reply) => {
    const order = field(req.body, 'order');
    const t = field(req.body, 't');
    if (!order || !sandbox.windowTokenValid(order, t)) return notFound(reply);
    const a = field(req.body, 'action');
    const installment = field(req.body, 'installment');
    const act: WindowAction = a === 'close' ? { action: 'close' } : a === 'refuse' ? { action: 'refuse', code: field(req.body, 'reason') } : {
      action: 'approve',
      choice: {
        card: field(req.body, 'card') || undefined, installment: (INSTALLMENT_MONTHS as readonly string[]).includes(installment) ? installment : '00',
        easyPay: field(req.body, 'easyPay') || undefined, funding: field(req.body, 'funding') === 'balance' ? 'balance' : 'card', bankCode: field(req.body, 'bank') || undefined,
      },
    };
    const back = await sandbox.play(order, act);
    if (!back) return page(reply, 409, closedWindow());
    return reply.code(303).headers(pageHeaders(await deps.formTargets(order))).header('location', back).send();
  });
}
