import { createHash } from 'node:crypto';

/**
 * The launcher of Toss Payments' window (/assets/checkout/toss.js): the one script of Sunap's
 * own that a payment page runs, allowed by the page's nonce (src/pages/checkout-page.ts,
 * renderScriptWindow). It reads the SDK call's parameters from the page's JSON data block
 * (written by src/ports/toss-checkout.ts), opens the window with Toss's SDK v2
 * (`TossPayments(clientKey).payment({ customerKey: ANONYMOUS }).requestPayment(...)`), and when
 * the SDK refuses or the customer closes the window (the promise rejects, USER_CANCEL) sends the
 * browser to the fail address with the code, so the order is closed on the server like any
 * other failure. Nothing in it handles an amount or a card: the server confirms.
 */
export const TOSS_LAUNCHER_JS = `(function () {
  'use strict';
  var block = document.getElementById('sunap-checkout');
  var status = document.getElementById('checkout-status');
  var button = document.getElementById('checkout-open');
  var data = JSON.parse(block.textContent);
  var req = data.request;
  function fail(code) {
    var u = new URL(req.failUrl, location.href);
    u.searchParams.set('code', code);
    u.searchParams.set('orderId', req.orderId);
    location.assign(u.toString());
  }
  function open() {
    if (typeof window.TossPayments !== 'function') {
      status.textContent = '결제창을 불러오지 못했습니다. 네트워크를 확인하고 결제창 열기를 다시 눌러 주세요.';
      return;
    }
    button.disabled = true;
    status.textContent = '결제창이 열렸습니다. 결제창에서 결제를 마쳐 주세요.';
    var payment = window.TossPayments(data.clientKey).payment({ customerKey: window.TossPayments.ANONYMOUS });
    payment.requestPayment(req).catch(function (err) {
      fail(err && typeof err.code === 'string' ? err.code : 'PAY_PROCESS_ABORTED');
    });
  }
  button.addEventListener('click', open);
  open();
})();
`;

export const TOSS_LAUNCHER_ETAG = `"${createHash('sha256').update(TOSS_LAUNCHER_JS).digest('base64url').slice(0, 22)}"`;
