import assert from 'node:assert/strict';
import { before, after, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { forEachEngine, paymentBody, seqNo, withApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { addMember, ConsoleClient, newOwner, ownerClient, textOf } from './support.js';

forEachEngine('console: payments', (engine) => {
  const t = withApp(engine);
  const receiver = new Receiver();
  before(async () => {
    await receiver.start();
  });
  after(async () => receiver.close());

  async function paid(over: Record<string, unknown> = {}, card?: string) {
    const body = paymentBody({ CONFIRM_URL: `${receiver.url}/cb`, ...over });
    const r = await t.gw('requestPayment', body);
    assert.equal(r.body.result_data.RESULT_CODE, '0000', JSON.stringify(r.body));
    if (card !== 'none') assert.equal((await t.pay(String(body.TRANS_SEQNO), card)).approved, true);
    return String(body.TRANS_SEQNO);
  }
  const paymentOf = (seq: string) => t.app.sunap.database.db.selectFrom('payments').selectAll().where('trans_seqno', '=', seq).executeTakeFirstOrThrow();

  test('search by phone, card last 4, name, approval number and TRANS_SEQNO; filters; keyset pages', async () => {
    const { c } = await ownerClient(t);
    const mine = await paid({ MOBILE_NO: '01055557777', PAY_USER_NAME: '검색대상' }, '5555555555554444');
    const other = await paid({ MOBILE_NO: '01011112222', PAY_USER_NAME: '다른사람' });
    const p = await paymentOf(mine);
    const has = (page: string, seq: string) => page.includes(`/console/payments/${seq}"`);
    for (const q of ['010-5555-7777', '01055557777', '4444', '검색대상', p.approval_number!, mine]) {
      const r = await c.get(`/console/payments?q=${encodeURIComponent(q)}`);
      assert.equal(r.status, 200);
      assert.ok(has(r.text, mine), `"${q}" finds the payment`);
      assert.ok(!has(r.text, other), `"${q}" does not find another`);
    }
    // A part (2 characters or more) of the name, the phone, the TRANS_SEQNO; the phone's last 4.
    for (const q of ['대상', '5555', '5-7777', '7777', mine.slice(0, -1), mine.slice(-6).toUpperCase()]) {
      const r = await c.get(`/console/payments?q=${encodeURIComponent(q)}`);
      assert.ok(has(r.text, mine), `"${q}" finds the payment`);
      assert.ok(!has(r.text, other), `"${q}" does not find another`);
    }
    // One character is not looked for as a part; LIKE's own characters are only themselves.
    assert.ok(!has((await c.get(`/console/payments?q=${encodeURIComponent('검')}`)).text, mine));
    for (const q of ['%', '__', '%%']) assert.equal([...(await c.get(`/console/payments?q=${encodeURIComponent(q)}`)).text.matchAll(/href="\/console\/payments\/[^"/?]+"/g)].length, 0, q);
    assert.ok(has((await c.get('/console/payments?state=APPROVE_COMPLETE')).text, mine));
    assert.ok(!has((await c.get('/console/payments?state=STORE_REQUEST')).text, mine));

    // 52 more: the first page has 50, the next the rest, nothing twice.
    for (let i = 0; i < 52; i++) await paid({ PAY_USER_NAME: '페이지' }, 'none');
    const first = await c.get('/console/payments?q=%ED%8E%98%EC%9D%B4%EC%A7%80');
    // Each row links its payer and its number to the detail: one payment, two links.
    const seqs = (s: string) => [...new Set([...s.matchAll(/href="\/console\/payments\/([^"/?]+)"/g)].map((m) => m[1]!))];
    assert.equal(seqs(first.text).length, 50);
    const decoded = first.text.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
    const next = /href="(\/console\/payments\?[^"]*after=[^"]+)"/.exec(decoded)![1]!;
    const second = await c.get(next);
    assert.equal(seqs(second.text).length, 2);
    assert.equal(new Set([...seqs(first.text), ...seqs(second.text)]).size, 52);
    assert.ok(!/after=/.test(second.text), 'no next page after the last');
  });

  test('detail timeline (declined then approved attempts, the callback), then cancel with a reason and a confirmation', async () => {
    const { c } = await ownerClient(t);
    const seq = await paid({}, 'none');
    assert.equal((await t.pay(seq, '4000000000000002')).approved, false);
    assert.equal((await t.pay(seq, '4242424242424242')).approved, true);
    await eventually(async () => (await t.app.sunap.database.db.selectFrom('outbound_attempts').select('id').where('target', '=', 'CALLBACK').where('ref_id', '=', (await paymentOf(seq)).id).execute()).length > 0, 'the callback');
    let d = textOf((await c.get(`/console/payments/${seq}`)).text);
    // The store takes cards through the (sandbox's) window: each try is a window, the card known from the processor's answer.
    for (const s of ['결제 요청됨', '결제창: 거절', 'sandbox · 카드 · 카드사에서 승인을 거절했습니다', '결제창: 승인', '4242-42**-****-4242', '결제 승인', '신용카드 · 신한카드 · 4242-42**-****-4242 · 승인번호', '결과 알림(콜백) 1회차: 성공 (HTTP 200)', '결제 완료']) {
      assert.ok(d.includes(s), `the detail shows "${s}"`);
    }
    const page = await c.get(`/console/payments/${seq}/cancel`);
    assert.equal(page.status, 200);
    assert.ok(textOf(page.text).includes('전액 취소'));
    // Without the confirmation or the reason: refused, nothing changes.
    assert.equal((await c.post(`/console/payments/${seq}/cancel`, { reason: '환불 요청' }, { from: `/console/payments/${seq}/cancel` })).status, 400);
    assert.equal((await c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: ' ' }, { from: `/console/payments/${seq}/cancel` })).status, 400);
    assert.equal((await paymentOf(seq)).state, 'APPROVE_COMPLETE');
    const r = await c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: '고객 환불 요청' }, { from: `/console/payments/${seq}/cancel` });
    assert.equal(r.status, 303);
    const p = await paymentOf(seq);
    assert.equal(p.state, 'CANCEL_COMPLETE');
    assert.equal(p.cancel_reason, '고객 환불 요청');
    d = textOf((await c.get(r.location!)).text);
    for (const s of ['결제를 취소했습니다', '결제 취소', '결제 취소 완료', '고객 환불 요청', '취소 시도: 취소됨', '결과 알림(콜백) 1회차: 성공']) assert.ok(d.includes(s), `after the cancel the detail shows "${s}"`);
    // The API sees the same state: the console used the gateway's own cancel.
    assert.equal((await t.gw('searchPayment', { TRANS_SEQNO: seq })).body.result_data.APPROVE_STATUS, 'CANCEL_COMPLETE');
  });

  test('a viewer may look but not cancel: 403, and nothing changes', async () => {
    const { c } = await ownerClient(t);
    const viewer = await addMember(t, c, 'viewer');
    const seq = await paid();
    const attempts = async () => (await t.app.sunap.database.db.selectFrom('payment_attempts').select('id').where('payment_id', '=', (await paymentOf(seq)).id).execute()).length;
    const before = await attempts();
    assert.equal((await viewer.c.get(`/console/payments/${seq}`)).status, 200);
    assert.ok(!(await viewer.c.get(`/console/payments/${seq}`)).text.includes('/cancel"'), 'no cancel button for a viewer');
    assert.equal((await viewer.c.get(`/console/payments/${seq}/cancel`)).status, 403);
    const r = await viewer.c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: 'x' });
    assert.equal(r.status, 403);
    assert.equal((await paymentOf(seq)).state, 'APPROVE_COMPLETE');
    assert.equal(await attempts(), before);
    // A manager may.
    const manager = await addMember(t, c, 'manager');
    assert.equal((await manager.c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: 'x' })).status, 303);
    assert.equal((await paymentOf(seq)).state, 'CANCEL_COMPLETE');
  });

  test('a form without its CSRF token, or with another session\'s, is refused and changes nothing', async () => {
    const { owner, c } = await ownerClient(t);
    const seq = await paid();
    const none = await c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: 'x' }, { csrf: false });
    assert.equal(none.status, 403);
    assert.ok(textOf(none.text).includes('보안 확인에 실패했습니다'));
    const other = new ConsoleClient(t);
    await other.signIn(owner.email, owner.password);
    const foreign = await c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: 'x' }, { csrf: await other.csrf() });
    assert.equal(foreign.status, 403);
    assert.equal((await c.post('/console/logout', {}, { csrf: false })).status, 403);
    assert.equal((await paymentOf(seq)).state, 'APPROVE_COMPLETE');
    // The sign-in form has one too.
    const anon = new ConsoleClient(t);
    assert.equal((await anon.post('/console/login', { email: owner.email, password: owner.password }, { csrf: false })).status, 403);
  });

  test('another store\'s payment answers 404 on every page and action', async () => {
    const { c } = await ownerClient(t);
    const otherStore = await t.addStore();
    const seq = seqNo('OTHER');
    const r = await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, STORE_CODE: otherStore }));
    assert.equal(r.body.result_data.RESULT_CODE, '0000');
    await t.pay(seq, undefined, otherStore);
    for (const path of [`/console/payments/${seq}`, `/console/payments/${seq}/cancel`, `/console/payments/${seq}/delete`]) {
      assert.equal((await c.get(path)).status, 404, path);
    }
    assert.equal((await c.post(`/console/payments/${seq}/cancel`, { confirm: 'yes', reason: 'x' })).status, 404);
    assert.equal((await c.post(`/console/payments/${seq}/delete`, {})).status, 404);
    assert.ok(!(await c.get(`/console/payments?q=${seq}`)).text.includes(`/console/payments/${seq}"`), 'the search does not find it');
    const csv = (await c.get(`/console/payments.csv?q=${seq}`)).text;
    assert.ok(!csv.includes(seq));
    const p = await t.app.sunap.database.db.selectFrom('payments').select('state').where('trans_seqno', '=', seq).executeTakeFirstOrThrow();
    assert.equal(p.state, 'APPROVE_COMPLETE');
  });

  test('delete an unpaid payment after a confirmation step', async () => {
    const { c } = await ownerClient(t);
    const seq = await paid({}, 'none');
    assert.equal((await c.get(`/console/payments/${seq}/delete`)).status, 200);
    const r = await c.post(`/console/payments/${seq}/delete`, {});
    assert.equal(r.status, 303);
    assert.equal((await paymentOf(seq)).state, 'STORE_DELETE');
    // A paid one cannot be deleted: 409, unchanged.
    const paidSeq = await paid();
    assert.equal((await c.post(`/console/payments/${paidSeq}/delete`, {})).status, 409);
    assert.equal((await paymentOf(paidSeq)).state, 'APPROVE_COMPLETE');
  });

  test('the CSV export has every matching payment, row for row as in the database, UTF-8 with a BOM', async () => {
    const otherStore = await t.addStore();
    const owner = await newOwner(t, { storeCode: otherStore });
    const c = new ConsoleClient(t);
    await c.signIn(owner.email, owner.password);
    const seqs: string[] = [];
    for (let i = 0; i < 7; i++) {
      const seq = seqNo('CSV');
      seqs.push(seq);
      await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, STORE_CODE: otherStore, PAY_USER_NAME: i === 0 ? '=HYPERLINK("x")' : `고객${i}`, APPROVAL_AMOUNT: String(1000 * (i + 1)) }));
      if (i % 2 === 0) await t.pay(seq, undefined, otherStore);
    }
    const res = await fetch(`${t.url}/console/payments.csv`, { headers: { cookie: c.cookieHeader() } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/csv; charset=utf-8/);
    assert.match(res.headers.get('content-disposition')!, /attachment/);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'starts with the UTF-8 BOM');
    const rows: string[][] = parse(bytes.toString('utf8'), { bom: true });
    const head = rows[0]!;
    const col = (name: string) => head.indexOf(name);
    const db = await t.app.sunap.database.db.selectFrom('payments').selectAll().where('store_code', '=', otherStore)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    assert.equal(rows.length - 1, db.length);
    db.forEach((p, i) => {
      const r = rows[i + 1]!;
      assert.equal(r[col('거래번호')], p.trans_seqno);
      assert.equal(r[col('상태 코드')], p.state);
      assert.equal(Number(r[col('금액')]), Number(p.amount));
      assert.equal(r[col('결제자')], p.pay_user_name.startsWith('=') ? `'${p.pay_user_name}` : p.pay_user_name);
      assert.equal(r[col('승인번호')], p.approval_number ?? '');
    });
    // Filtered: only the approved ones.
    const approved: string[][] = parse(Buffer.from(await (await fetch(`${t.url}/console/payments.csv?state=APPROVE_COMPLETE`, { headers: { cookie: c.cookieHeader() } })).arrayBuffer()).toString('utf8'), { bom: true });
    assert.equal(approved.length - 1, db.filter((p) => p.state === 'APPROVE_COMPLETE').length);
  });
});
