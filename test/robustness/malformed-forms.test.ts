/**
 * Every malformed body on every console and page form route (docs/security.md, "Probes of issue
 * 28"): broken multipart, broken urlencoded, a content type no form sends, a body past the
 * limit. Each is a 4xx with a Korean page and an info-level log line, never a 500 and never a
 * stack trace at error level (anyone could fill the error log). A property run (fast-check) over
 * the routes, signed in and out; FC_SEED replays one.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import fc from 'fast-check';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { ownerClient, type ConsoleClient } from '../console/support.js';

const SIGNED_OUT = ['/console/login', '/console/invite/not-a-real-token'];
const SIGNED_IN = [
  '/console/login', '/console/logout', '/console/account/password', '/console/account/sessions/revoke', '/console/invoices/new', '/console/invoices/bulk/preview',
  '/console/invoices/bulk', '/console/templates', '/console/team/invite', '/console/settings/store', '/console/points/recharge', '/console/deliveries/recover',
  '/console/payments/NOPE/cancel',
];

const B = 'sunapBoundary';
/** Bodies that no browser's form would send: each names what is wrong with it. */
const broken = fc.oneof(
  fc.constantFrom(
    { what: 'multipart cut off', type: `multipart/form-data; boundary=${B}`, body: `--${B}\r\nContent-Disposition: form-data; name="email"\r\n\r\nx` },
    { what: 'multipart without a boundary', type: 'multipart/form-data', body: `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--${B}--\r\n` },
    { what: 'multipart with another boundary', type: `multipart/form-data; boundary=other`, body: `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--${B}--\r\n` },
    { what: 'multipart with a broken part header', type: `multipart/form-data; boundary=${B}`, body: `--${B}\r\nContent-Disposition form-data name\r\n\r\nb\r\n--${B}--\r\n` },
    { what: 'multipart with no parts', type: `multipart/form-data; boundary=${B}`, body: `--${B}--\r\n` },
    { what: 'multipart of two files', type: `multipart/form-data; boundary=${B}`, body: `--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\na\r\n--${B}\r\nContent-Disposition: form-data; name="file2"; filename="b.csv"\r\n\r\nb\r\n--${B}--\r\n` },
    { what: 'urlencoded with a broken escape', type: 'application/x-www-form-urlencoded', body: 'email=%E0%A4%A&password=%' },
    { what: 'urlencoded with a field twice', type: 'application/x-www-form-urlencoded', body: 'email=a&email=b&password=c&password=d' },
    { what: 'urlencoded over the limit', type: 'application/x-www-form-urlencoded', body: `email=${'a'.repeat(20_000)}` },
    { what: 'JSON', type: 'application/json', body: '{"email":' },
    { what: 'XML', type: 'application/xml', body: '<a/>' },
    { what: 'plain text', type: 'text/plain', body: 'hello' },
    { what: 'no content type', type: '', body: 'email=a' },
  ),
  fc.record({
    what: fc.constant('random multipart'),
    type: fc.constant(`multipart/form-data; boundary=${B}`),
    body: fc.array(fc.oneof(fc.constant(`--${B}\r\n`), fc.constant(`--${B}--\r\n`), fc.constant('Content-Disposition: form-data; name="x"\r\n\r\n'), fc.constant('\r\n'), fc.string({ maxLength: 20 })), { maxLength: 8 }).map((a) => a.join('')),
  }),
  fc.record({
    what: fc.constant('random urlencoded'),
    type: fc.constant('application/x-www-form-urlencoded'),
    body: fc.array(fc.oneof(fc.constantFrom('%', '%z', '%E0', '&', '=', '+', 'email', '_csrf', 'x'), fc.string({ maxLength: 10 })), { maxLength: 12 }).map((a) => a.join('')),
  }),
);

forEachEngine('malformed form bodies', (engine) => {
  const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });
  let c: ConsoleClient;
  let payPage: string[] = [];
  before(async () => {
    ({ c } = await ownerClient(t));
    const body = paymentBody({});
    const r = await t.gw('requestPayment', body);
    const link = new URL(r.body.result_data.REDIRECT_URL);
    payPage = [`${link.pathname}/pay${link.search}`, `${link.pathname}/begin${link.search}`];
  });

  test('a 4xx with a Korean page and an info line, never a 500 or an error line, on every form route', async () => {
    const routes = [...SIGNED_OUT.map((p) => ({ p, signedIn: false })), ...SIGNED_IN.map((p) => ({ p, signedIn: true })), ...payPage.map((p) => ({ p, signedIn: false }))];
    await fc.assert(fc.asyncProperty(fc.constantFrom(...routes), broken, async (route, b) => {
      const before = t.logs.length;
      const headers: Record<string, string> = route.signedIn ? { cookie: c.cookieHeader() } : {};
      if (b.type) headers['content-type'] = b.type;
      const res = await fetch(`${t.url}${route.p}`, { method: 'POST', headers, body: b.type ? b.body : new Blob([b.body]), redirect: 'manual' });
      const text = await res.text();
      const ctx = `${route.p} (${route.signedIn ? 'signed in' : 'signed out'}), ${b.what}: ${res.status}`;
      assert.ok(res.status >= 400 && res.status < 500, ctx);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, ctx);
      assert.match(text, /[가-힣]/, `${ctx}: a Korean page`);
      const lines = t.logs.slice(before).flatMap((s) => s.split('\n')).filter((l) => l.trim()).map((l) => JSON.parse(l) as { level: number; msg: string; stack?: unknown; err?: { stack?: unknown } });
      assert.ok(!lines.some((l) => l.level >= 50), `${ctx}: no error line (${JSON.stringify(lines.filter((l) => l.level >= 50)).slice(0, 300)})`);
      assert.ok(!lines.some((l) => l.stack || l.err?.stack), `${ctx}: no stack trace`);
      assert.ok(lines.some((l) => l.level === 30 && /refused|request completed|incoming/.test(l.msg)), `${ctx}: an info line`);
    }), { numRuns: Number(process.env.FC_RUNS ?? 150), ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) });
  });
});
