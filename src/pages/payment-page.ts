import { cardPaid, INSTALLMENT_MIN_AMOUNT, INSTALLMENT_MONTHS, parseStoredLines, type Payment, type PaymentState, type Store } from '../gateway/index.js';
import { dueDateText } from '../invoicing/index.js';
import { won } from '../platform/format.js';
import { kstSpaced } from '../platform/kst.js';
import { httpOrigin } from '../platform/urls.js';
import { FIELD_LABELS, type FieldErrors, type FieldName } from './card-form.js';
import { renderErrorPage } from './error-page.js';
import { html, layout, type SafeHtml } from './html.js';
import { PAYMENT_STATE_LABEL } from './labels.js';

/** Where the page lives (the path of SUNAP_PAYMENT_PAGE_URL), and its posts and returns beside it. */
export interface PagePaths {
  page: string;
  /** The key-in card form's post. */
  pay: string;
  /** A method chosen: open the processor's window. */
  begin: string;
  /** Where windows send the browser back: `${returns}/success`, `${returns}/fail` (built by the gateway too). */
  returns: string;
  /** The customer closes an open virtual account to pay another way. */
  closeAccount: string;
  /** Sandbox only: the bank deposits into the open account. */
  sandboxDeposit: string;
  /** Sandbox only: the sandbox processor's window. */
  sandboxWindow: string;
}

export function paymentPagePaths(paymentPageUrl: string): PagePaths {
  const page = new URL(paymentPageUrl).pathname;
  const base = page.replace(/\/+$/, '');
  return {
    page, pay: `${base}/pay`, begin: `${base}/begin`, returns: `${base}/return`, closeAccount: `${base}/close-account`,
    sandboxDeposit: `${base}/sandbox-deposit`, sandboxWindow: `${base}/sandbox-window`,
  };
}

/** The page link relative to this origin (the receipt after a post, the form after an error). */
export function pageLink(pagePath: string, tid: string, token: string): string {
  return `${pagePath}?tid=${encodeURIComponent(tid)}&token=${encodeURIComponent(token)}`;
}

/** Origins the form may be sent on to: the merchant's RETURN_URL when the browser goes back there. */
export function formTargets(p: Payment): string[] {
  const origin = p.return_display_yn === 'Y' ? httpOrigin(p.return_url) : null;
  return origin ? [origin] : [];
}

// ---- formatting -------------------------------------------------------------------------

/** "4242-42**-****-4242" from the stored BIN (first 6) and last 4; the rest is never known. */
export function maskCard(bin: string | null, last4: string | null): string | null {
  if (!bin || !last4 || !/^\d{6}$/.test(bin) || !/^\d{4}$/.test(last4)) return null;
  return `${bin.slice(0, 4)}-${bin.slice(4, 6)}**-****-${last4}`;
}

export function installmentLabel(m: string | null): string {
  if (!m || m === '00') return '일시불';
  return `${Number(m)}개월`;
}

/** 1234567890 → 123-45-67890 */
export function formatBizRegNum(s: string): string {
  return /^\d{10}$/.test(s) ? `${s.slice(0, 3)}-${s.slice(3, 5)}-${s.slice(5)}` : s;
}

/** Korean phone numbers with their usual dashes; anything unusual is shown as stored. */
export function formatTel(s: string): string {
  if (!/^\d+$/.test(s)) return s;
  if (s.startsWith('02') && (s.length === 9 || s.length === 10)) return `02-${s.slice(2, s.length - 4)}-${s.slice(-4)}`;
  if (/^1[5-9]\d{2}/.test(s) && s.length === 8) return `${s.slice(0, 4)}-${s.slice(4)}`;
  if (s.startsWith('0') && (s.length === 10 || s.length === 11)) return `${s.slice(0, 3)}-${s.slice(3, s.length - 4)}-${s.slice(-4)}`;
  return s;
}

interface PageItem {
  name: string;
  qty: number;
  unitPrice: number;
  discount: number;
  rate: number | null;
  net: number;
  publisher: string | null;
}

/**
 * The payment's item lines as stored by the gateway, whatever its orderType: an invoice's
 * payment carries every invoice item (its message lists only the first five). The publisher is
 * a SHOP detail and shows on SHOP orders only.
 */
export function pageItems(p: Payment): PageItem[] {
  const shop = p.order_type === 'SHOP';
  return parseStoredLines(p.items_json).map((l) => ({
    name: l.name, qty: l.qty, unitPrice: l.unitPrice, net: l.net, rate: l.discountUnit === 'RATE' ? l.discountAmount : null,
    discount: Math.max(0, l.unitPrice * l.qty - l.net), publisher: shop ? l.publisher : null,
  }));
}

// ---- shared pieces ----------------------------------------------------------------------

export interface PageContext {
  payment: Payment;
  store: Store;
  sandbox: boolean;
  /** The due date of the invoice this payment is for (yyyy-MM-dd), when it has one. */
  dueDate?: string | null;
}

/** "납부 기한" among the order's facts, for an invoice's payment that has a due date. */
export function dueFact(dueDate: string | null | undefined): SafeHtml | null {
  return dueDate ? html`<dt>납부 기한</dt><dd>${dueDateText(dueDate)}</dd>` : null;
}

export function merchantHeader(store: Store, title: string): SafeHtml {
  return html`<header class="merchant"><p class="store">${store.name}</p><h1>${title}</h1></header>`;
}

/**
 * Two columns so that a phone never hides the line amount: the item cell stacks name, publisher,
 * "unit price × qty" and the discount; the amount sits on the right.
 */
export function itemsTable(p: Payment): SafeHtml | null {
  const items = pageItems(p);
  if (items.length === 0) return null;
  const rows = items.map((it) => html`<tr>
<th scope="row" class="name"><span class="item-name">${it.name}</span>${it.publisher ? html`<span class="publisher">${it.publisher}</span>` : null}
<span class="detail">${won(it.unitPrice)} × ${it.qty.toLocaleString('ko-KR')}개</span>
${it.discount > 0 ? html`<span class="detail">할인 -${won(it.discount)}${it.rate !== null ? ` (${it.rate}%)` : ''}</span>` : null}</th>
<td class="num">${won(it.net)}</td>
</tr>`);
  return html`<section class="card">
<table class="items">
<caption>${p.order_type === 'SHOP' ? '주문 상품' : '청구 항목'}</caption>
<thead><tr><th scope="col">${p.order_type === 'SHOP' ? '상품' : '항목'} (단가 × 수량, 할인)</th><th scope="col" class="num">금액</th></tr></thead>
<tbody>
${rows}
</tbody>
<tfoot><tr><th scope="row">합계</th><td class="num">${won(p.amount)}</td></tr></tfoot>
</table>
</section>`;
}

export function sandboxNotice(sandbox: boolean, kind: 'card' | 'window' = 'card'): SafeHtml | null {
  if (!sandbox) return null;
  if (kind === 'window') return html`<p class="sandbox"><strong>테스트 환경</strong>입니다. 실제로 결제되지 않습니다. 결제창에서 승인, 거절, 창 닫기 중 결과를 고를 수 있습니다.</p>`;
  return html`<p class="sandbox"><strong>테스트 환경</strong>입니다. 실제로 결제되지 않습니다. 승인 카드 <code>4242 4242 4242 4242</code>, 거절 카드 <code>4000 0000 0000 0002</code></p>`;
}

/** "면세금액" among the facts before paying, when part or all of the amount is VAT-exempt. */
export function taxFreeFact(p: Payment): SafeHtml | null {
  return Number(p.tax_free_amount) > 0 ? html`<dt>면세금액</dt><dd>${won(Number(p.tax_free_amount))}</dd>` : null;
}

export function taxFacts(p: Payment): SafeHtml {
  return html`<dt>공급가액</dt><dd>${won(p.supply_amount)}</dd>
<dt>부가세</dt><dd>${won(p.tax_charge)}</dd>
${p.tax_free_amount > 0 ? html`<dt>면세금액</dt><dd>${won(p.tax_free_amount)}</dd>` : null}`;
}

export function storeCard(store: Store): SafeHtml {
  return html`<section class="card" aria-labelledby="store-title">
<h2 id="store-title">가맹점 정보</h2>
<dl class="facts">
<dt>상호</dt><dd>${store.name}</dd>
${store.ceo_name ? html`<dt>대표자</dt><dd>${store.ceo_name}</dd>` : null}
${store.biz_reg_num ? html`<dt>사업자등록번호</dt><dd>${formatBizRegNum(store.biz_reg_num)}</dd>` : null}
${store.tel ? html`<dt>전화번호</dt><dd>${formatTel(store.tel)}</dd>` : null}
</dl>
</section>`;
}

export const footer = html`<footer class="foot">Sunap 안전결제</footer>`;

// ---- the card form ----------------------------------------------------------------------

export interface FormState {
  tid: string;
  token: string;
  action: string;
  /** Per-field problems found on the server. */
  errors?: FieldErrors;
  /** A message about the whole attempt (decline, processor error, busy). */
  alert?: string;
  /** The only value kept across a failed post; card fields are never echoed back. */
  installment?: string;
}

const FIELD_ORDER: FieldName[] = ['cardNumber', 'expiry', 'birth', 'cardPassword', 'installment'];

function describedBy(name: FieldName, errors: FieldErrors, hint: boolean): string | null {
  const ids = [hint ? `${name}-hint` : null, errors[name] ? `${name}-error` : null].filter(Boolean);
  return ids.length ? ids.join(' ') : null;
}

function fieldError(name: FieldName, errors: FieldErrors): SafeHtml | null {
  return errors[name] ? html`<span class="field-error" id="${name}-error">${errors[name]}</span>` : null;
}

function attrs(name: FieldName, errors: FieldErrors, hint: boolean): SafeHtml {
  const d = describedBy(name, errors, hint);
  return html`id="${name}" name="${name}"${d ? html` aria-describedby="${d}"` : null}${errors[name] ? html` aria-invalid="true"` : null}`;
}

export function renderPaymentForm(ctx: PageContext, form: FormState): string {
  const { payment: p, store } = ctx;
  const errors = form.errors ?? {};
  const failed = FIELD_ORDER.filter((f) => errors[f]);
  const installmentAllowed = p.amount >= INSTALLMENT_MIN_AMOUNT;
  const selected = form.installment ?? '00';
  const alert = form.alert || failed.length > 0
    ? html`<div class="alert" role="alert">
<p>${form.alert ?? '입력한 카드 정보를 확인해 주세요.'}</p>
${failed.length > 0 ? html`<ul>${failed.map((f) => html`<li><a href="#${f}">${errors[f]}</a></li>`)}</ul>` : null}
</div>`
    : null;
  const months = installmentAllowed
    ? INSTALLMENT_MONTHS.map((m) => html`<option value="${m}"${selected === m ? html` selected` : null}>${installmentLabel(m)}</option>`)
    : null;

  const body = html`${merchantHeader(store, p.request_reason)}
${sandboxNotice(ctx.sandbox)}
<section class="card" aria-label="결제 금액">
<p class="amount-label">결제 금액</p>
<p class="amount">${won(p.amount)}</p>
<dl class="facts">
<dt>결제자</dt><dd>${p.pay_user_name}</dd>
${taxFreeFact(p)}
${dueFact(ctx.dueDate)}
</dl>
</section>
${p.info_message ? html`<p class="info">${p.info_message}</p>` : null}
${itemsTable(p)}
<section class="card" aria-labelledby="pay-title">
<h2 id="pay-title">카드 정보 입력</h2>
${alert}
<form method="post" action="${form.action}">
<input type="hidden" name="tid" value="${form.tid}">
<input type="hidden" name="token" value="${form.token}">
<div class="field">
<label for="cardNumber">${FIELD_LABELS.cardNumber}</label>
<input ${attrs('cardNumber', errors, true)} type="text" inputmode="numeric" autocomplete="cc-number" maxlength="23" required spellcheck="false">
<span class="hint" id="cardNumber-hint">카드 앞면의 숫자 (띄어쓰기 없이 입력해도 됩니다)</span>
${fieldError('cardNumber', errors)}
</div>
<div class="row">
<div class="field">
<label for="expiry">${FIELD_LABELS.expiry} (MM/YY)</label>
<input ${attrs('expiry', errors, true)} type="text" inputmode="numeric" autocomplete="cc-exp" maxlength="7" placeholder="MM/YY" required spellcheck="false">
<span class="hint" id="expiry-hint">예: 08/29</span>
${fieldError('expiry', errors)}
</div>
<div class="field">
<label for="cardPassword">비밀번호 앞 2자리</label>
<input ${attrs('cardPassword', errors, true)} type="password" inputmode="numeric" autocomplete="off" maxlength="2" required>
<span class="hint" id="cardPassword-hint">카드 비밀번호의 앞 2자리</span>
${fieldError('cardPassword', errors)}
</div>
</div>
<div class="field">
<label for="birth">생년월일 6자리 또는 사업자등록번호 10자리</label>
<input ${attrs('birth', errors, true)} type="text" inputmode="numeric" autocomplete="off" maxlength="12" required spellcheck="false">
<span class="hint" id="birth-hint">개인카드는 생년월일(예: 900101), 법인카드는 사업자등록번호</span>
${fieldError('birth', errors)}
</div>
<div class="field">
<label for="installment">${FIELD_LABELS.installment}</label>
<select ${attrs('installment', errors, !installmentAllowed)}>
<option value="00"${selected === '00' ? html` selected` : null}>일시불</option>
${months}
</select>
${installmentAllowed ? null : html`<span class="hint" id="installment-hint">할부는 50,000원 이상 결제할 때 선택할 수 있습니다.</span>`}
${fieldError('installment', errors)}
</div>
<button type="submit" class="btn">${won(p.amount)} 결제하기</button>
<p class="notice">카드 정보는 승인 요청에만 쓰이며 저장되지 않습니다.</p>
</form>
</section>
${footer}`;
  return layout(`${p.request_reason} - ${store.name} 결제`, body);
}

// ---- after the form ---------------------------------------------------------------------

export function renderReceipt(ctx: PageContext, returnUrl: string | null): string {
  const { payment: p, store } = ctx;
  const card = maskCard(p.card_bin, p.card_last4);
  const byCard = cardPaid(p);
  const body = html`${merchantHeader(store, '결제가 완료되었습니다')}
<section class="card" aria-labelledby="receipt-title">
<h2 id="receipt-title">${byCard ? '카드 영수증' : '결제 영수증'}</h2>
<p class="amount-label">결제 금액</p>
<p class="amount">${won(p.amount)}</p>
<dl class="facts">
<dt>주문명</dt><dd>${p.request_reason}</dd>
<dt>결제자</dt><dd>${p.pay_user_name}</dd>
<dt>거래번호</dt><dd>${p.trans_seqno}</dd>
<dt>결제수단</dt><dd>${p.method_name ?? '신용카드'}</dd>
${byCard && p.issuer_name ? html`<dt>카드사</dt><dd>${p.issuer_name}</dd>` : null}
${byCard && card ? html`<dt>카드번호</dt><dd>${card}</dd>` : null}
${byCard ? html`<dt>할부</dt><dd>${installmentLabel(p.installment_month)}</dd>` : null}
${p.method === 'TRANSFER' && p.issuer_name ? html`<dt>은행</dt><dd>${p.issuer_name}</dd>` : null}
${p.method === 'VIRTUAL_ACCOUNT' && p.vbank_account ? html`<dt>입금 계좌</dt><dd>${p.vbank_name} ${p.vbank_account}</dd>` : null}
${p.approval_number ? html`<dt>승인번호</dt><dd>${p.approval_number}</dd>` : null}
<dt>${p.method === 'VIRTUAL_ACCOUNT' ? '입금일시' : '승인일시'}</dt><dd>${p.approval_at !== null ? `${kstSpaced(p.approval_at)} (KST)` : ''}</dd>
${taxFacts(p)}
<dt class="total">합계</dt><dd class="total">${won(p.amount)}</dd>
</dl>
</section>
${itemsTable(p)}
${storeCard(store)}
${returnUrl ? html`<p><a class="btn" href="${returnUrl}">가맹점으로 돌아가기</a></p>` : null}
${footer}`;
  return layout(`결제 영수증 - ${store.name}`, body);
}

/** The states that show a state page rather than the form or the receipt. */
export type ClosedState = Exclude<PaymentState, 'STORE_REQUEST' | 'APPROVE_COMPLETE'>;

const STATE_TEXT: Record<ClosedState, { tone: '' | 'ok' | 'warn'; title: string; text: string }> = {
  CANCEL_COMPLETE: {
    tone: '', title: '취소된 결제입니다',
    text: '이 결제는 취소되었습니다. 카드사에 따라 승인 취소가 반영되기까지 며칠 걸릴 수 있습니다.',
  },
  CANCEL_FAIL: {
    tone: 'warn', title: '결제 취소가 아직 완료되지 않았습니다',
    text: '가맹점이 이 결제의 취소를 요청했지만 카드사 처리가 끝나지 않았습니다. 자세한 내용은 가맹점에 문의해 주세요.',
  },
  STORE_DELETE: {
    tone: '', title: '더 이상 결제할 수 없는 요청입니다',
    text: '가맹점이 이 결제 요청을 닫았습니다. 결제가 필요하면 가맹점에 새 결제 링크를 요청해 주세요.',
  },
};

/** Cancelled, cancel-failed and deleted payments: their state, and no form. */
export function renderStatePage(ctx: PageContext & { payment: Payment & { state: ClosedState } }): string {
  const { payment: p, store } = ctx;
  const s = STATE_TEXT[p.state];
  const body = html`${merchantHeader(store, s.title)}
<section class="card state" aria-label="결제 상태">
<p><span class="${s.tone ? `badge ${s.tone}` : 'badge'}">${PAYMENT_STATE_LABEL[p.state]}</span></p>
<p>${s.text}</p>
</section>
<section class="card" aria-labelledby="detail-title">
<h2 id="detail-title">결제 내용</h2>
<dl class="facts">
<dt>주문명</dt><dd>${p.request_reason}</dd>
<dt>금액</dt><dd>${won(p.amount)}</dd>
<dt>거래번호</dt><dd>${p.trans_seqno}</dd>
${p.approval_at !== null ? html`<dt>승인일시</dt><dd>${kstSpaced(p.approval_at)} (KST)</dd>` : null}
${p.cancel_at !== null ? html`<dt>취소일시</dt><dd>${kstSpaced(p.cancel_at)} (KST)</dd>` : null}
</dl>
</section>
${storeCard(store)}
${footer}`;
  return layout(`${s.title} - ${store.name}`, body);
}

/** One page for an unknown payment and a wrong token alike, so neither can be told apart. */
export function renderNotFound(): string {
  return renderErrorPage(404, {
    title: '결제 정보를 찾을 수 없습니다',
    message: '링크가 올바르지 않거나 만료되었습니다. 받은 결제 링크를 다시 확인하거나 가맹점에 문의해 주세요.',
  });
}

/** A payment page request that failed: what to do next, and where to see whether anything was paid. */
export function renderProblem(status: number): string {
  return renderErrorPage(status, status >= 500
    ? { message: '일시적인 문제로 요청을 처리하지 못했습니다. 잠시 후 다시 시도해 주세요. 결제가 이루어졌는지는 결제 링크를 다시 열어 확인할 수 있습니다.' }
    : { message: '요청을 처리할 수 없습니다. 받은 결제 링크를 다시 열어 주세요.' });
}
