import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { sql } from 'kysely';
import { luhnValid } from '../../src/ports/card-processor.js';
import { SANDBOX_CARDS } from '../../src/ports/sandbox-card-processor.js';
import { forEachEngine, freePort, paymentBody, startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser, mobileContext, startAll } from '../helpers/browser.js';

/**
 * In checkout mode no card number reaches Sunap (docs/security.md): the customer pays in the
 * processor's window, so no request Sunap receives, no log line and no database row holds one.
 * Every request goes through a recording proxy in front of the app while Chromium pays by every
 * method (the sandbox's window names its test cards without their numbers) and the sandbox's
 * calls play customers; then the requests, the log and every table (and the SQLite file) are
 * searched for the test cards' numbers and for anything shaped like a card number.
 */
interface Seen {
  method: string;
  url: string;
  headers: string;
  body: string;
}

/** A reverse proxy that records what each request carried, then hands it to the app. */
async function recordingProxy(port: number, target: () => number): Promise<{ seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, headers: JSON.stringify(req.headers), body: body.toString('utf8') });
      const up = httpRequest({ host: '127.0.0.1', port: target(), method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { seen, server };
}

const TEST_NUMBERS = Object.keys(SANDBOX_CARDS);
/**
 * 15 or 16 digits starting as card numbers do (3, 4, 5, 6), with a right check digit: a card
 * number, whatever it is. Not the fraction of a decimal (a log line's response time).
 */
function cardLike(text: string): string[] {
  return [...text.matchAll(/(?<![\d.])[3-6]\d{14,15}(?![\d])/g)].map((m) => m[0]).filter(luhnValid);
}

forEachEngine('no card number in checkout mode', (engine) => {
  let t: TestApp;
  let browser: Browser;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;

  before(async () => {
    const port = await freePort();
    let appPort = 0;
    proxy = await recordingProxy(port, () => appPort);
    await startAll([startApp(engine, { SUNAP_PUBLIC_URL: `http://127.0.0.1:${port}` }).then((v) => (t = v)), launchBrowser().then((v) => (browser = v))]);
    appPort = Number(new URL(t.url).port);
    await t.app.sunap.database.db.insertInto('store_processors').values({
      store_code: t.storeCode, processor: 'sandbox', way: 'checkout', methods: JSON.stringify(['CARD', 'EASY_PAY', 'TRANSFER', 'VIRTUAL_ACCOUNT', 'MOBILE_PHONE']), updated_at: 0,
    }).execute();
  });
  after(async () => {
    await browser?.close();
    proxy?.server.close();
    await t?.close();
  });

  const proxied = () => `http://127.0.0.1:${(proxy.server.address() as { port: number }).port}`;
  async function create() {
    const r = await fetch(`${proxied()}/api/requestPayment`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(await signed(paymentBody())),
    });
    return ((await r.json()) as { result_data: { REDIRECT_URL: string; RESULT_CODE: string } }).result_data;
  }
  /** A signed requestPayment body (the helper's gw signs; this goes through the proxy). */
  async function signed(body: Record<string, unknown>) {
    const { apiSign } = await import('../../src/platform/crypto.js');
    const { kstCompact } = await import('../../src/platform/kst.js');
    const TRANS_AT = kstCompact(Date.now());
    return { ...body, PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_AT, API_SIGN: apiSign(String(body.TRANS_SEQNO), t.platformCode, t.storeCode, TRANS_AT, t.apiKey) };
  }

  test('every method paid through the page and the sandbox\'s calls: no request, log line or row holds a card number', async () => {
    const ctx = await mobileContext(browser);
    const page = await ctx.newPage();
    try {
      for (const [button, pick] of [
        [/^카드/, async () => page.getByLabel(/KB국민카드 · 승인/).check()],
        [/^카드/, async () => page.getByLabel(/카드사 거절/).check()],
        [/^간편결제/, async () => page.getByLabel('페이코').check()],
        [/^계좌이체/, async () => undefined],
        [/^휴대폰/, async () => undefined],
      ] as const) {
        const made = await create();
        assert.equal(made.RESULT_CODE, '0000');
        await page.goto(made.REDIRECT_URL);
        await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: button }).click()]);
        await pick();
        await Promise.all([page.waitForURL(/\/checkout\?tid=|\/return\//), page.getByRole('button', { name: /결제 승인/ }).click()]);
      }
      const va = await create();
      await page.goto(va.REDIRECT_URL);
      await Promise.all([page.waitForURL(/sandbox-window/), page.getByRole('button', { name: /^가상계좌/ }).click()]);
      await Promise.all([page.waitForURL(/\/checkout\?tid=/), page.getByRole('button', { name: '가상계좌 발급받기' }).click()]);
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: /입금하기/ }).click()]);
      await page.getByRole('heading', { name: '결제가 완료되었습니다' }).waitFor();
    } finally {
      await ctx.close();
    }
    // The sandbox's calls as a developer's test makes them: methods, not card numbers.
    for (const method of ['CARD', 'EASY_PAY', 'TRANSFER', 'MOBILE_PHONE', 'VIRTUAL_ACCOUNT']) {
      const body = paymentBody();
      await fetch(`${proxied()}/api/requestPayment`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(await signed(body)) });
      const r = await fetch(`${proxied()}/sandbox/payments/${body.TRANS_SEQNO}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, method }) });
      assert.equal(r.status, 200);
    }

    // The detector itself: it finds a card number, and not a decimal's fraction or a 14-digit account number.
    assert.deepEqual(cardLike('cardNumber=5555555555554444&x=1.4242424242424242&acct=40972974269535'), ['5555555555554444']);
    assert.ok(proxy.seen.length > 40, `the requests were recorded (${proxy.seen.length})`);
    assert.ok(proxy.seen.some((s) => s.url.startsWith('/checkout/sandbox-window') && s.method === 'POST'), 'the window\'s posts went through the proxy');
    for (const s of proxy.seen) {
      const all = `${s.method} ${s.url} ${s.headers} ${s.body}`;
      for (const n of TEST_NUMBERS) assert.ok(!all.includes(n), `${s.method} ${s.url} carries ${n}`);
      assert.deepEqual(cardLike(decodeURIComponent(all.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'))), [], `${s.method} ${s.url}`);
    }
    const log = t.logs.join('');
    for (const n of TEST_NUMBERS) assert.ok(!log.includes(n), `the log carries ${n}`);
    assert.deepEqual(cardLike(log), [], 'no card-like number in the log');

    const db = t.app.sunap.database.db;
    const tables = engine === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)).rows.map((r) => r.name)
      : (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public'`.execute(db)).rows.map((r) => r.name);
    assert.ok(tables.includes('payments') && tables.includes('sandbox_checkouts'));
    for (const table of tables) {
      const rows = JSON.stringify((await sql`select * from ${sql.table(table)}`.execute(db)).rows);
      for (const n of TEST_NUMBERS) assert.ok(!rows.includes(n), `${table} holds ${n}`);
      assert.deepEqual(cardLike(rows), [], table);
    }
    if (engine === 'sqlite') {
      const file = t.databaseUrl.slice('sqlite:'.length);
      for (const f of [file, `${file}-wal`]) {
        let bytes: Buffer;
        try {
          bytes = readFileSync(f);
        } catch {
          continue;
        }
        for (const n of TEST_NUMBERS) assert.ok(!bytes.includes(Buffer.from(n)), `${f} holds ${n}`);
      }
    }
    const paid = await db.selectFrom('payments').select(['method', 'state']).where('store_code', '=', t.storeCode).execute();
    assert.equal(paid.filter((p) => p.state === 'APPROVE_COMPLETE').length, 9, 'the payments were made: four in the page (one card declined) and a deposit, four by the calls');
  });
});
