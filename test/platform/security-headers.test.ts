import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startApp, type TestApp } from '../helpers/app.js';

// What helmet (frameguard deny, no-referrer, no CSP of its own) puts on every response.
const EXPECTED: Record<string, string> = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

function assertSecurityHeaders(headers: Headers, what: string, hsts: boolean) {
  for (const [name, value] of Object.entries(EXPECTED)) assert.equal(headers.get(name), value, `${what}: ${name}`);
  if (hsts) assert.equal(headers.get('strict-transport-security'), 'max-age=31536000; includeSubDomains', `${what}: hsts`);
  else assert.equal(headers.get('strict-transport-security'), null, `${what}: no hsts over plain http`);
  assert.equal(headers.get('x-powered-by'), null, what);
}

forEachEngine('security headers', (engine) => {
  let t: TestApp;
  let tls: TestApp;
  before(async () => {
    t = await startApp(engine);
    // Served behind a TLS-terminating proxy: the public URL says https.
    tls = await startApp(engine, { SUNAP_PUBLIC_URL: 'https://pay.example.com' });
  });
  after(async () => {
    await t?.close();
    await tls?.close();
  });

  test('on answers, gateway failures, invoicing errors, unknown routes and bad JSON', async () => {
    for (const app of [t, tls]) {
      const hsts = app === tls;
      assertSecurityHeaders((await app.get('/healthz')).headers, 'healthz', hsts);
      const ok = await app.gw('searchPayment', { TRANS_SEQNO: 'NOPE' });
      assert.equal(ok.body.result_data.RESULT_CODE, '4003');
      const raw = await app.post('/api/searchPayment', { TRANS_SEQNO: 'X' });
      assertSecurityHeaders(raw.headers, 'gateway validation failure', hsts);
      assertSecurityHeaders((await app.get('/app/v1/sales/bill')).headers, 'invoicing 401', hsts);
      assertSecurityHeaders((await app.get('/nowhere')).headers, '404', hsts);
      const bad = await fetch(`${app.url}/api/searchPayment`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
      assert.equal(bad.status, 400);
      assertSecurityHeaders(bad.headers, 'unparsable JSON', hsts);
    }
  });
});
