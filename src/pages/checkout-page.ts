import type { Payment } from '../gateway/index.js';
import { won } from '../platform/format.js';
import { kstSpaced } from '../platform/kst.js';
import type { CheckoutWindow, PayMethod } from '../ports/checkout.js';
import { html, layout, raw, type SafeHtml } from './html.js';
import { dueFact, footer, itemsTable, merchantHeader, sandboxNotice, storeCard, taxFreeFact, type PageContext } from './payment-page.js';

/**
 * The checkout's pages (docs/reference.md, "Payment page"): the order and the methods the store
 * offers (each a button that opens the processor's window), an open virtual account (the
 * customer can come back to it), and the page that loads a live processor's script. Every page
 * but the last needs no JavaScript.
 */

/** How the methods are named and described on the page. */
export const METHOD_TEXT: Record<PayMethod, { label: string; sub: string }> = {
  CARD: { label: '카드', sub: '신용·체크카드, 앱카드' },
  EASY_PAY: { label: '간편결제', sub: '토스페이, 카카오페이, 네이버페이 등' },
  TRANSFER: { label: '계좌이체', sub: '내 계좌에서 바로 이체' },
  VIRTUAL_ACCOUNT: { label: '가상계좌', sub: '발급받은 계좌로 입금 (무통장입금)' },
  MOBILE_PHONE: { label: '휴대폰', sub: '휴대폰 요금과 함께 결제' },
};

export interface LinkParts {
  tid: string;
  token: string;
}

/** The order: amount, payer, message and items. */
function orderSummary(p: Payment, dueDate: string | null | undefined): SafeHtml {
  return html`<section class="card" aria-label="결제 금액">
<p class="amount-label">결제 금액</p>
<p class="amount">${won(p.amount)}</p>
<dl class="facts">
<dt>결제자</dt><dd>${p.pay_user_name}</dd>
${taxFreeFact(p)}
${dueFact(dueDate)}
</dl>
</section>
${p.info_message ? html`<p class="info">${p.info_message}</p>` : null}
${itemsTable(p)}`;
}

const hidden = (l: LinkParts) => html`<input type="hidden" name="tid" value="${l.tid}">
<input type="hidden" name="token" value="${l.token}">`;

/** The order and a button per method the store offers; `alert` says why the last try did not pay. */
export function renderMethods(ctx: PageContext, v: { methods: PayMethod[]; action: string; link: LinkParts; alert?: string; notice?: string }): string {
  const { payment: p, store } = ctx;
  const body = html`${merchantHeader(store, p.request_reason)}
${sandboxNotice(ctx.sandbox, 'window')}
${orderSummary(p, ctx.dueDate)}
<section class="card" aria-labelledby="methods-title">
<h2 id="methods-title">결제수단 선택</h2>
${v.alert ? html`<div class="alert" role="alert"><p>${v.alert}</p></div>` : null}
${v.notice ? html`<p class="info" role="status">${v.notice}</p>` : null}
${v.methods.length === 0 ? html`<p>이 상점은 지금 결제수단을 열어 두지 않았습니다. 가맹점에 문의해 주세요.</p>` : html`<ul class="methods">
${v.methods.map((m) => html`<li><form method="post" action="${v.action}">
${hidden(v.link)}
<input type="hidden" name="method" value="${m}">
<button type="submit" class="method"><span>${METHOD_TEXT[m].label}<span class="sub">${METHOD_TEXT[m].sub}</span></span><span class="go" aria-hidden="true">›</span></button>
</form></li>`)}
</ul>`}
<p class="notice">선택하면 결제사의 결제창이 열립니다. 카드·계좌 정보는 결제창에만 입력하며 이 가맹점이나 Sunap에는 전달되지 않습니다.</p>
</section>
${footer}`;
  return layout(`${p.request_reason} - ${store.name} 결제`, body);
}

/** An open virtual account: where to deposit, how much, until when; the customer may close it to pay another way. */
export function renderAccount(ctx: PageContext, v: { link: LinkParts; closeAction: string; depositAction: string | null; alert?: string }): string {
  const { payment: p, store } = ctx;
  const due = p.vbank_due_at !== null ? `${kstSpaced(Number(p.vbank_due_at))} (KST)` : '';
  const body = html`${merchantHeader(store, '가상계좌로 입금해 주세요')}
${v.alert ? html`<div class="alert" role="alert"><p>${v.alert}</p></div>` : null}
<section class="card" aria-labelledby="account-title">
<h2 id="account-title">입금 계좌</h2>
<p class="amount-label">${p.vbank_name}</p>
<p class="account-number">${p.vbank_account}</p>
<dl class="facts">
${p.vbank_holder ? html`<dt>예금주</dt><dd>${p.vbank_holder}</dd>` : null}
<dt>입금 금액</dt><dd>${won(p.amount)}</dd>
<dt>입금 기한</dt><dd>${due}</dd>
<dt>주문명</dt><dd>${p.request_reason}</dd>
<dt>거래번호</dt><dd>${p.trans_seqno}</dd>
</dl>
<p class="notice">정확히 ${won(p.amount)}을 기한 안에 한 번에 입금하면 결제가 완료됩니다. 입금자 이름은 달라도 됩니다. 이 페이지는 결제 링크로 언제든 다시 볼 수 있습니다.</p>
</section>
${v.depositAction ? html`<section class="card sandbox" aria-label="테스트 입금"><form method="post" action="${v.depositAction}">${hidden(v.link)}
<p><strong>테스트 환경</strong>: 은행 입금을 흉내 냅니다.</p><button type="submit" class="btn">${won(p.amount)} 입금하기</button></form></section>` : null}
<section class="card" aria-labelledby="other-title">
<h2 id="other-title">다른 방법으로 결제하기</h2>
<form method="post" action="${v.closeAction}">${hidden(v.link)}
<p>이 가상계좌를 닫고 다른 결제수단을 고릅니다. 닫은 계좌에는 입금할 수 없습니다.</p>
<button type="submit" class="btn secondary">가상계좌 닫고 다른 결제수단 선택</button>
</form>
</section>
${itemsTable(p)}
${storeCard(store)}
${footer}`;
  return layout(`가상계좌 입금 안내 - ${store.name}`, body);
}

/**
 * A live processor's window: the processor's SDK and our launcher, each allowed by this
 * response's nonce (checkoutCsp), the SDK call's parameters as a JSON data block the launcher
 * reads. Without JavaScript the page says what to do; nothing else of the page needs it.
 */
export function renderScriptWindow(ctx: PageContext, w: Extract<CheckoutWindow, { kind: 'script' }>, nonce: string, back: string): string {
  const { payment: p, store } = ctx;
  // </script> cannot end the data block: every < is written as \u003c.
  const json = JSON.stringify(w.params).replace(/</g, '\\u003c');
  const body = html`${merchantHeader(store, p.request_reason)}
${orderSummary(p, ctx.dueDate)}
<section class="card" aria-labelledby="window-title">
<h2 id="window-title">결제창을 여는 중입니다</h2>
<p id="checkout-status" role="status">결제사의 결제창이 곧 열립니다. 열리지 않으면 아래 버튼을 눌러 주세요.</p>
<button type="button" class="btn" id="checkout-open">결제창 열기</button>
<noscript><div class="alert" role="alert"><p>이 결제는 결제사의 결제창을 쓰며, 결제창은 브라우저의 자바스크립트가 켜져 있어야 열립니다. 자바스크립트를 켜고 이 페이지를 다시 열거나, 다른 브라우저에서 결제 링크를 열어 주세요.</p></div></noscript>
<p><a href="${back}">결제수단 다시 선택하기</a></p>
</section>
${footer}
<script type="application/json" id="sunap-checkout" nonce="${nonce}">${raw(json)}</script>
${w.scripts.map((src) => html`<script src="${src}" nonce="${nonce}"></script>`)}
<script src="${w.launcher}" nonce="${nonce}"></script>`;
  return layout(`결제창 - ${store.name}`, body);
}
