import { createHash } from 'node:crypto';

/**
 * The launcher of PortOne's window (/assets/checkout/portone.js; src/ports/portone-checkout.ts):
 * the one script of ours the window page runs, allowed by the page's nonce. It reads the
 * `requestPayment` parameters from the page's JSON data block and calls PortOne's browser SDK.
 * With `forceRedirect` PortOne's window comes back to the return address by itself; should the
 * SDK answer in the page instead (its promise), the launcher goes to the same return address
 * with the same parameters PortOne's redirect carries (paymentId and txId, or code and message).
 * Sunap believes none of them: the return is confirmed by reading the payment from PortOne.
 */
export const PORTONE_LAUNCHER_JS = `(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('sunap-checkout').textContent);
  var status = document.getElementById('checkout-status');
  var button = document.getElementById('checkout-open');
  function go(url, params) {
    var u = new URL(url, location.href);
    Object.keys(params).forEach(function (k) { if (params[k] !== undefined && params[k] !== null) u.searchParams.set(k, String(params[k])); });
    location.assign(u.toString());
  }
  function open() {
    if (!window.PortOne || typeof window.PortOne.requestPayment !== 'function') {
      status.textContent = '결제창을 불러오지 못했습니다. 잠시 후 다시 시도하거나 결제수단을 다시 선택해 주세요.';
      return;
    }
    button.disabled = true;
    status.textContent = '결제창을 여는 중입니다.';
    Promise.resolve(window.PortOne.requestPayment(data.request)).then(function (r) {
      if (!r) return;
      if (r.code !== undefined && r.code !== null) go(data.failUrl, { paymentId: r.paymentId, code: r.code, message: r.message });
      else go(data.successUrl, { paymentId: r.paymentId, txId: r.txId, transactionType: r.transactionType });
    }, function () {
      go(data.failUrl, { paymentId: data.request.paymentId, code: 'FAILURE_TYPE_SDK' });
    });
  }
  button.addEventListener('click', open);
  open();
})();
`;

export const PORTONE_LAUNCHER_ETAG = `"${createHash('sha256').update(PORTONE_LAUNCHER_JS).digest('base64url').slice(0, 22)}"`;
