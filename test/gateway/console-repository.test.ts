import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Insertable } from 'kysely';
import type { OutboundAttemptTable, PaymentAttemptTable } from '../../src/db/schema.js';
import { bizRegNumProblem, maskedCard, PaymentsConsole, type StoreKey } from '../../src/gateway/console.js';
import * as q from '../../src/gateway/console-repository.js';
import type { Payment } from '../../src/gateway/repository.js';
import { GatewayError } from '../../src/platform/errors.js';
import { forEachEngine } from '../helpers/app.js';
import { insertStores, withDatabase } from '../helpers/db.js';

/**
 * What the console reads of the gateway, on the database itself: the payment list's filters and
 * keyset cursor, the search by each column and the merge of its queries, a payment's timeline,
 * sales by KST day, failing callbacks and the store's details. `console/payments` reaches the same
 * code through pages that show a few rows; here each rule is one call, on both sides of it.
 */

/** 2026-11-23 12:00 KST. */
const T = Date.UTC(2026, 10, 23, 3);
const MIN = 60_000;

function paymentRow(s: StoreKey, n: number, over: Partial<Payment> = {}): Payment {
  return {
    id: `pay-${s.storeCode}-${n}`, platform_code: s.platformCode, store_code: s.storeCode, trans_seqno: `T${s.storeCode}${String(n).padStart(6, '0')}`,
    state: 'STORE_REQUEST', amount: 10_000 + n, supply_amount: 9_091 + n, tax_charge: 909, tax_free_amount: 0,
    mobile_no: `0101234${String(n).padStart(4, '0')}`, pay_user_name: `payer ${n}`, request_reason: '11월 수강료', info_message: null,
    confirm_url: null, return_display_yn: 'N', return_url: null, temp_value: null, user_id: null, order_type: 'BILL', items_json: null,
    pay_path: 'WEB', approval_number: null, approval_at: null, installment_month: null, issuer_name: null, accepter_name: null,
    method_name: null, card_bin: null, card_last4: null, processor_ref: null, cancel_at: null, cancel_reason: '', cancel_amount: 0,
    created_at: T + n * MIN, updated_at: T + n * MIN, processor: null, processor_order: null, method: null, vbank_code: '', vbank_name: '', vbank_account: '', vbank_holder: '', vbank_due_at: null, vbank_secret_sealed: null, ...over,
  };
}

forEachEngine('gateway console repository', (engine) => {
  const h = withDatabase(engine);
  let seq = 0;
  /** A platform with two stores of its own, so every test starts on empty stores. */
  const stores = async (): Promise<[StoreKey, StoreKey]> => {
    const n = seq++;
    const platformCode = `PGC${n}`;
    await insertStores(h.db, platformCode, [`SGC${n}A`, `SGC${n}B`], T);
    return [{ platformCode, storeCode: `SGC${n}A` }, { platformCode, storeCode: `SGC${n}B` }];
  };
  const insert = async (rows: Payment[]) => {
    await h.db.insertInto('payments').values(rows).execute();
    return rows;
  };
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
  /** The list's order: newest first, then the greater id. */
  const newest = (rows: Payment[]) => [...rows].sort((x, y) => y.created_at - x.created_at || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0));
  const all = { limit: 100 };

  test('filters: state, pay path and order type each keep only their rows; from includes its instant, to excludes its own; another store, or this store under another platform, is never listed', async () => {
    const [s, other] = await stores();
    const rows = await insert([
      paymentRow(s, 0),
      paymentRow(s, 1, { state: 'APPROVE_COMPLETE' }),
      paymentRow(s, 2, { pay_path: 'KIOSK' }),
      paymentRow(s, 3, { order_type: 'SHOP' }),
      paymentRow(s, 4, { state: 'APPROVE_COMPLETE', pay_path: 'KIOSK', order_type: 'SHOP' }),
    ]);
    await insert([paymentRow(other, 0), paymentRow({ platformCode: 'PGC-ELSEWHERE', storeCode: s.storeCode }, 9)]);
    const search = (f: q.PaymentFilter) => q.searchPayments(h.db, s, f, all).then(ids);

    assert.deepEqual(await search({}), ids(newest(rows)));
    assert.deepEqual(await search({ state: 'APPROVE_COMPLETE' }), ids([rows[4]!, rows[1]!]));
    assert.deepEqual(await search({ payPath: 'KIOSK' }), ids([rows[4]!, rows[2]!]));
    assert.deepEqual(await search({ orderType: 'SHOP' }), ids([rows[4]!, rows[3]!]));
    assert.deepEqual(await search({ state: 'APPROVE_COMPLETE', payPath: 'WEB' }), ids([rows[1]!]), 'filters combine');
    assert.deepEqual(await search({ from: T + 2 * MIN }), ids([rows[4]!, rows[3]!, rows[2]!]), 'from: at its instant, included');
    assert.deepEqual(await search({ from: T + 2 * MIN + 1 }), ids([rows[4]!, rows[3]!]));
    assert.deepEqual(await search({ to: T + 2 * MIN }), ids([rows[1]!, rows[0]!]), 'to: at its instant, excluded');
    assert.deepEqual(await search({ to: T + 2 * MIN + 1 }), ids([rows[2]!, rows[1]!, rows[0]!]));
    assert.deepEqual(await search({ from: T + MIN, to: T + 3 * MIN }), ids([rows[2]!, rows[1]!]));
    assert.deepEqual(await q.searchPayments(h.db, s, {}, { limit: 2 }).then(ids), ids(newest(rows).slice(0, 2)), 'the limit');
  });

  test('the keyset cursor: strictly after (created_at, id), ties broken by id, with and without a search', async () => {
    const [s] = await stores();
    // Three at one instant (ids 0, 1, 2 of this store), one before, one after.
    const rows = await insert([
      paymentRow(s, 0, { created_at: T + MIN, pay_user_name: '김하나' }),
      paymentRow(s, 1, { created_at: T + MIN, pay_user_name: '김하나' }),
      paymentRow(s, 2, { created_at: T + MIN, pay_user_name: '김하나' }),
      paymentRow(s, 3, { created_at: T, pay_user_name: '김하나' }),
      paymentRow(s, 4, { created_at: T + 2 * MIN, pay_user_name: '김하나' }),
    ]);
    const order = newest(rows);
    assert.deepEqual(ids(order), ids([rows[4]!, rows[2]!, rows[1]!, rows[0]!, rows[3]!]));
    for (const f of [{}, { q: '김하나' }]) {
      for (let i = 0; i < order.length; i++) {
        const after = { at: order[i]!.created_at, id: order[i]!.id };
        assert.deepEqual(await q.searchPayments(h.db, s, f, { after, limit: 100 }).then(ids), ids(order.slice(i + 1)), `after row ${i} (${JSON.stringify(f)})`);
      }
    }
  });

  test('search: whole values; a part of 2 characters or more; a phone by its digits; the last 4 of a card or a phone as 4 digits; never another store', async () => {
    const [s, other] = await stores();
    const rows = await insert([
      paymentRow(s, 0, { trans_seqno: 'TSEARCH0001' }),
      paymentRow(s, 1, { pay_user_name: '홍길동' }),
      paymentRow(s, 2, { approval_number: '30001234', state: 'APPROVE_COMPLETE', approval_at: T }),
      paymentRow(s, 3, { mobile_no: '01098765432' }),
      paymentRow(s, 4, { mobile_no: '0212345678' }),
      paymentRow(s, 5, { mobile_no: '021234567' }),
      paymentRow(s, 6, { mobile_no: '02123456' }),
      paymentRow(s, 7, { mobile_no: '010987654321' }),
      paymentRow(s, 8, { card_bin: '123456', card_last4: '4321' }),
      paymentRow(s, 9, { card_last4: '54321' }),
    ]);
    await insert([paymentRow(other, 0, { trans_seqno: 'TSEARCH0001', pay_user_name: '홍길동', mobile_no: '01098765432', card_last4: '4321' })]);
    const find = (term: string) => q.searchPayments(h.db, s, { q: term }, all).then(ids);
    const r = (...i: number[]) => i.map((n) => rows[n]!.id);
    assert.deepEqual(await find('TSEARCH0001'), r(0));
    assert.deepEqual(await find('TSEARCH000'), r(0), 'a part of a TRANS_SEQNO');
    assert.deepEqual(await find('search000'), r(0), 'in any case');
    assert.deepEqual(await find('홍길동'), r(1));
    assert.deepEqual(await find('길동'), r(1), 'a part of 2 characters');
    assert.deepEqual(await find('동'), [], 'one character is not looked for as a part');
    assert.deepEqual(await find('30001234'), r(2));
    // A phone by its digits, whole or as a part of 2 digits or more (newest first).
    assert.deepEqual(await find('010-9876-5432'), r(7, 3), 'whole, and the longer number that holds it');
    assert.deepEqual(await find('010 9876 5432'), r(7, 3));
    assert.deepEqual(await find('02-1234-5678'), r(4));
    assert.deepEqual(await find('02-123-4567'), r(5, 4));
    assert.deepEqual(await find('02-123-456'), r(6, 5, 4));
    // Four digits: the last 4 of a card or of a phone, and any phone holding them.
    assert.deepEqual(await find('4321'), r(8, 7));
    assert.deepEqual(await find('54321'), r(7), 'five digits: a part of a phone, not the last 4 of a card');
    assert.deepEqual(await find('없는 이름'), []);
    // A filter still applies to a search.
    assert.deepEqual(await q.searchPayments(h.db, s, { q: '30001234', state: 'STORE_REQUEST' }, all).then(ids), []);
  });

  test('search: a payment matched by two columns is listed once; the merge is newest first, ties by id, cut to the limit', async () => {
    const [s] = await stores();
    const rows = await insert([
      // Matched by name and by phone.
      paymentRow(s, 0, { pay_user_name: '01055556666', mobile_no: '01055556666', created_at: T + 5 * MIN }),
      paymentRow(s, 1, { mobile_no: '01055556666', created_at: T + MIN }),
      paymentRow(s, 2, { pay_user_name: '01055556666', created_at: T + MIN }),
      paymentRow(s, 3, { trans_seqno: '01055556666', created_at: T + 9 * MIN }),
    ]);
    const found = await q.searchPayments(h.db, s, { q: '01055556666' }, all);
    assert.deepEqual(ids(found), ids([rows[3]!, rows[0]!, rows[2]!, rows[1]!]));
    // With dashes the term is also looked for as its digits, in every searched column (the name and the TRANS_SEQNO here).
    assert.deepEqual(await q.searchPayments(h.db, s, { q: '010-5555-6666' }, all).then(ids), ids([rows[3]!, rows[0]!, rows[2]!, rows[1]!]));
    assert.deepEqual(await q.searchPayments(h.db, s, { q: '010-5555-666' }, all).then(ids), ids([rows[3]!, rows[0]!, rows[2]!, rows[1]!]), 'a part of the digits too');
    assert.deepEqual(await q.searchPayments(h.db, s, { q: '01055556666' }, { limit: 3 }).then(ids), ids([rows[3]!, rows[0]!, rows[2]!]));
    assert.deepEqual(await q.searchPayments(h.db, s, { q: '01055556666' }, { limit: 1 }).then(ids), [rows[3]!.id]);
  });

  test('a payment\'s attempts oldest first (ties by id), its CALLBACK attempts only, its callback job', async () => {
    const [s] = await stores();
    const [p, p2] = await insert([paymentRow(s, 0), paymentRow(s, 1)]);
    const attempt = (id: string, paymentId: string, at: number): Insertable<PaymentAttemptTable> => ({
      id, payment_id: paymentId, kind: 'APPROVE', status: 'DECLINED', card_bin: null, card_last4: null, issuer_name: null, installment_month: null, message: null, created_at: at, closed_at: at,
    });
    await h.db.insertInto('payment_attempts').values([attempt('att-b', p!.id, T + 2), attempt('att-c', p!.id, T + 1), attempt('att-a', p!.id, T + 2), attempt('att-z', p2!.id, T)]).execute();
    assert.deepEqual((await q.attemptsOf(h.db, p!.id)).map((a) => a.id), ['att-c', 'att-a', 'att-b']);

    const job = (id: string, unique: string) => ({ id, kind: 'callback', payload: '{}', status: 'PENDING' as const, run_at: T + 60_000, lease_until: null, lease_owner: null, attempts: 2, max_attempts: 7, last_error: null, unique_key: unique, created_at: T, updated_at: T });
    await h.db.insertInto('jobs').values([job(`job-${p!.id}`, `callback:${p!.id}`), job(`job-${p2!.id}`, `callback:${p2!.id}`)]).execute();
    const out = (n: number, target: OutboundAttemptTable['target'], ref: string, error: string | null): Insertable<OutboundAttemptTable> => ({
      job_id: `job-${p!.id}`, target, ref_id: ref, attempt_no: n, url: `https://shop.example.com/cb/${n}`, status_code: error ? null : 200, error, duration_ms: 10 * n, created_at: T + n, delivery_id: null, response_body: null,
    });
    await h.db.insertInto('outbound_attempts').values([out(1, 'CALLBACK', p!.id, 'timeout'), out(2, 'WEBHOOK', p!.id, null), out(3, 'CALLBACK', p2!.id, null), out(4, 'CALLBACK', p!.id, null)]).execute();
    assert.deepEqual((await q.callbackAttemptsOf(h.db, p!.id)).map((a) => [a.attempt_no, a.error, Number(a.duration_ms)]), [[1, 'timeout', 10], [4, null, 40]]);
    const j = await q.callbackJobOf(h.db, p!.id);
    assert.deepEqual(j && [j.status, Number(j.attempts), Number(j.max_attempts), Number(j.run_at)], ['PENDING', 2, 7, T + 60_000]);
    assert.equal(await q.callbackJobOf(h.db, 'pay-none'), undefined);
  });

  test('sales by KST day: a day ends at 23:59:59.999 KST; [from, to) holds; cancels summed by their cancelled amount; another store not counted', async () => {
    const [s, other] = await stores();
    const kstMidnight = Date.UTC(2026, 10, 22, 15); // 2026-11-23 00:00 KST
    const day = Math.floor((kstMidnight + 9 * 3_600_000) / 86_400_000);
    await insert([
      paymentRow(s, 0, { state: 'APPROVE_COMPLETE', amount: 1000, approval_at: kstMidnight - 1 }),
      paymentRow(s, 1, { state: 'APPROVE_COMPLETE', amount: 2000, approval_at: kstMidnight }),
      paymentRow(s, 2, { state: 'CANCEL_COMPLETE', amount: 4000, approval_at: kstMidnight + 1, cancel_at: kstMidnight + 86_400_000, cancel_amount: 4000 }),
      paymentRow(s, 3, { state: 'APPROVE_COMPLETE', amount: 8000, approval_at: kstMidnight + 86_400_000 - 1 }),
      paymentRow(s, 4, { state: 'CANCEL_COMPLETE', amount: 300, approval_at: kstMidnight - 5, cancel_at: kstMidnight + 7, cancel_amount: 300 }),
    ]);
    await insert([paymentRow(other, 0, { state: 'APPROVE_COMPLETE', amount: 50_000, approval_at: kstMidnight + 5 })]);
    const sorted = (r: { day: number; n: number; total: number }[]) => [...r].sort((a, b) => a.day - b.day);
    const wide = await q.salesByDay(h.db, s, kstMidnight - 86_400_000, kstMidnight + 2 * 86_400_000);
    assert.deepEqual(sorted(wide.paid), [{ day: day - 1, n: 2, total: 1300 }, { day, n: 3, total: 14_000 }]);
    assert.deepEqual(sorted(wide.canceled), [{ day, n: 1, total: 300 }, { day: day + 1, n: 1, total: 4000 }]);
    const one = await q.salesByDay(h.db, s, kstMidnight, kstMidnight + 86_400_000);
    assert.deepEqual(sorted(one.paid), [{ day, n: 3, total: 14_000 }], 'from included, to excluded');
    assert.deepEqual(sorted(one.canceled), [{ day, n: 1, total: 300 }]);
    const late = await q.salesByDay(h.db, s, kstMidnight + 1, kstMidnight + 86_400_000 - 1);
    assert.deepEqual(sorted(late.paid), [{ day, n: 1, total: 4000 }]);
    assert.deepEqual(late.canceled, [{ day, n: 1, total: 300 }]);
  });

  test('the store\'s details: updated only under its own platform', async () => {
    const [s] = await stores();
    const set = { name: '새 피아노 학원', ceo_name: '박대표', biz_reg_num: '2208162517', tel: '021234567' };
    assert.equal(await q.updateStore(h.db, { platformCode: 'PGC-ELSEWHERE', storeCode: s.storeCode }, set), false);
    assert.equal((await h.db.selectFrom('stores').select('name').where('code', '=', s.storeCode).executeTakeFirstOrThrow()).name, 's');
    assert.equal(await q.updateStore(h.db, { platformCode: s.platformCode, storeCode: 'SGC-NONE' }, set), false);
    assert.equal(await q.updateStore(h.db, s, set), true);
    const row = await h.db.selectFrom('stores').selectAll().where('code', '=', s.storeCode).executeTakeFirstOrThrow();
    assert.deepEqual([row.name, row.ceo_name, row.biz_reg_num, row.tel], [set.name, set.ceo_name, set.biz_reg_num, set.tel]);
  });

  test('PaymentsConsole.search: a next cursor only when one more row exists, pointing at the page\'s last row; all() pages through every row once', async () => {
    const [s] = await stores();
    const c = new PaymentsConsole(h.db);
    const rows = newest(await insert([0, 1, 2, 3, 4].map((n) => paymentRow(s, n, { created_at: T + (n < 2 ? 0 : n) * MIN }))));
    const exact = await c.search(s, {}, undefined, 5);
    assert.deepEqual(ids(exact.rows), ids(rows));
    assert.equal(exact.next, null, 'a page of exactly the rows left has no next');
    const first = await c.search(s, {}, undefined, 4);
    assert.deepEqual(ids(first.rows), ids(rows.slice(0, 4)));
    assert.deepEqual(first.next, { at: rows[3]!.created_at, id: rows[3]!.id });
    const second = await c.search(s, {}, first.next!, 4);
    assert.deepEqual(ids(second.rows), [rows[4]!.id]);
    assert.equal(second.next, null);
    assert.deepEqual(await c.search(s, { state: 'CANCEL_FAIL' }, undefined, 4), { rows: [], next: null });

    for (const size of [1, 2, 4, 5, 6]) {
      const seen: string[] = [];
      for await (const r of c.all(s, {}, size)) seen.push(r.id);
      assert.deepEqual(seen, ids(rows), `all() with pages of ${size}`);
    }
    const byName: string[] = [];
    for await (const r of c.all(s, { q: 'payer 3' }, 1)) byName.push(r.id);
    assert.deepEqual(byName, [rows.find((r) => r.pay_user_name === 'payer 3')!.id]);
  });

  test('PaymentsConsole.timeline: requested, attempts, approval, callbacks and cancel in time order, ties kept in that order; the callback job\'s next run only while pending; another store\'s payment is not found', async () => {
    const [s, other] = await stores();
    const c = new PaymentsConsole(h.db);
    const [p] = await insert([paymentRow(s, 0, {
      created_at: T, state: 'CANCEL_COMPLETE', approval_number: '30001234', issuer_name: '신한카드', approval_at: T + 20,
      cancel_at: T + 40, cancel_reason: '환불', cancel_amount: 10_000, card_bin: '123456', card_last4: '4321',
    })]);
    await h.db.insertInto('payment_attempts').values([
      { id: 'tl-a1', payment_id: p!.id, kind: 'APPROVE', status: 'DECLINED', card_bin: '123456', card_last4: '9999', issuer_name: null, installment_month: null, message: '한도 초과', created_at: T + 10, closed_at: T + 11 },
      { id: 'tl-a2', payment_id: p!.id, kind: 'APPROVE', status: 'APPROVED', card_bin: '123456', card_last4: '4321', issuer_name: '신한카드', installment_month: null, message: null, created_at: T + 20, closed_at: null },
      { id: 'tl-a3', payment_id: p!.id, kind: 'CANCEL', status: 'APPROVED', card_bin: null, card_last4: null, issuer_name: null, installment_month: null, message: null, created_at: T + 40, closed_at: T + 41 },
    ]).execute();
    await h.db.insertInto('outbound_attempts').values([
      { job_id: `job-${p!.id}`, target: 'CALLBACK', ref_id: p!.id, attempt_no: 1, url: 'https://shop.example.com/cb', status_code: null, error: 'timeout', duration_ms: 10_000, created_at: T + 20, delivery_id: null, response_body: null },
      { job_id: `job-${p!.id}`, target: 'CALLBACK', ref_id: p!.id, attempt_no: 2, url: 'https://shop.example.com/cb', status_code: 200, error: null, duration_ms: 12, created_at: T + 30, delivery_id: null, response_body: null },
    ]).execute();
    const t = await c.timeline(s, p!.trans_seqno);
    assert.equal(t.payment.id, p!.id);
    assert.deepEqual(t.timeline, [
      { at: T, kind: 'REQUESTED' },
      { at: T + 10, kind: 'ATTEMPT', attempt: 'APPROVE', status: 'DECLINED', card: '1234-56**-****-9999', message: '한도 초과', closedAt: T + 11, processor: null, method: null },
      { at: T + 20, kind: 'ATTEMPT', attempt: 'APPROVE', status: 'APPROVED', card: '1234-56**-****-4321', message: null, closedAt: null, processor: null, method: null },
      { at: T + 20, kind: 'APPROVED', approvalNumber: '30001234', issuer: '신한카드', methodName: '', card: '1234-56**-****-4321' },
      { at: T + 20, kind: 'CALLBACK', attemptNo: 1, url: 'https://shop.example.com/cb', statusCode: null, error: 'timeout', durationMs: 10_000 },
      { at: T + 30, kind: 'CALLBACK', attemptNo: 2, url: 'https://shop.example.com/cb', statusCode: 200, error: null, durationMs: 12 },
      { at: T + 40, kind: 'ATTEMPT', attempt: 'CANCEL', status: 'APPROVED', card: null, message: null, closedAt: T + 41, processor: null, method: null },
      { at: T + 40, kind: 'CANCELED', reason: '환불', amount: 10_000 },
    ]);
    // A processor's notice about the payment shows where it arrived, after what was there at that time.
    await h.db.insertInto('processor_events').values({
      id: `ev-${p!.id}`, processor: 'sandbox', store_code: null, event_key: `k-${p!.id}`, event_type: 'PAYMENT_STATUS_CHANGED', order_id: 'tl-a2',
      payment_id: p!.id, outcome: 'APPLIED', detail: 'looked up: STATE', received_at: T + 30, updated_at: T + 30,
    }).execute();
    assert.deepEqual((await c.timeline(s, p!.trans_seqno)).timeline.slice(5, 7), [
      { at: T + 30, kind: 'CALLBACK', attemptNo: 2, url: 'https://shop.example.com/cb', statusCode: 200, error: null, durationMs: 12 },
      { at: T + 30, kind: 'EVENT', processor: 'sandbox', type: 'PAYMENT_STATUS_CHANGED', outcome: 'APPLIED', detail: 'looked up: STATE' },
    ]);
    assert.equal(t.callbackJob, null, 'no job row');

    const job = { id: `job-${p!.id}`, kind: 'callback', payload: '{}', status: 'PENDING' as const, run_at: T + 90, lease_until: null, lease_owner: null, attempts: 2, max_attempts: 7, last_error: 'timeout', unique_key: `callback:${p!.id}`, created_at: T, updated_at: T };
    await h.db.insertInto('jobs').values(job).execute();
    assert.deepEqual((await c.timeline(s, p!.trans_seqno)).callbackJob, { status: 'PENDING', attempts: 2, maxAttempts: 7, nextAt: T + 90 });
    await h.db.updateTable('jobs').set({ status: 'DONE' }).where('id', '=', job.id).execute();
    assert.deepEqual((await c.timeline(s, p!.trans_seqno)).callbackJob, { status: 'DONE', attempts: 2, maxAttempts: 7, nextAt: null });

    // A payment just requested: its timeline is that one step.
    const [fresh] = await insert([paymentRow(s, 1)]);
    assert.deepEqual((await c.timeline(s, fresh!.trans_seqno)).timeline, [{ at: fresh!.created_at, kind: 'REQUESTED' }]);
    // An approval whose processor gave no number or issuer shows empty strings.
    await h.db.updateTable('payments').set({ state: 'APPROVE_COMPLETE', approval_at: fresh!.created_at + 5 }).where('id', '=', fresh!.id).execute();
    assert.deepEqual((await c.timeline(s, fresh!.trans_seqno)).timeline[1], { at: fresh!.created_at + 5, kind: 'APPROVED', approvalNumber: '', issuer: '', methodName: '', card: null });
    await assert.rejects(c.timeline(other, p!.trans_seqno), (e) => e instanceof GatewayError && /TRANS_SEQNO/.test(e.message));
    assert.equal(await c.payment(other, p!.trans_seqno), undefined);
    assert.equal((await c.store(s))?.code, s.storeCode);
    assert.equal(await c.store({ platformCode: 'PGC-ELSEWHERE', storeCode: s.storeCode }), undefined);
  });
});

test('newestFirst: each row once, newer first, at one instant the greater id first, at most the limit', () => {
  const r = (id: string | number, created_at: number) => ({ id, created_at });
  assert.deepEqual(q.newestFirst([r('a', 1), r('b', 3), r('a', 1), r('c', 2)], 10), [r('b', 3), r('c', 2), r('a', 1)]);
  assert.deepEqual(q.newestFirst([r('a', 5), r('c', 5), r('b', 5)], 10), [r('c', 5), r('b', 5), r('a', 5)]);
  assert.deepEqual(q.newestFirst([r(1, 5), r(3, 5), r(2, 5), r(3, 5)], 2), [r(3, 5), r(2, 5)]);
  assert.deepEqual(q.newestFirst([r('a', 1)], 0), []);
  // Any rows, in any order, with repeats and many ties: the same as sorting the distinct rows by (created_at, id), descending.
  const row = fc.record({ id: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), created_at: fc.integer({ min: 0, max: 3 }) });
  fc.assert(fc.property(fc.array(row, { maxLength: 80 }), fc.integer({ min: 0, max: 90 }), (rows, limit) => {
    const firsts = rows.filter((x, i) => rows.findIndex((y) => y.id === x.id) === i);
    const expected = [...firsts].sort((x, y) => y.created_at - x.created_at || (y.id > x.id ? 1 : y.id < x.id ? -1 : 0)).slice(0, limit);
    assert.deepEqual(q.newestFirst(rows, limit), expected);
  }), { numRuns: 300 });
});

test('maskedCard: the first six and the last four digits, or nothing without both', () => {
  assert.equal(maskedCard('123456', '4321'), '1234-56**-****-4321');
  assert.equal(maskedCard(null, '4321'), null);
  assert.equal(maskedCard('123456', null), null);
  assert.equal(maskedCard('', '4321'), null);
  assert.equal(maskedCard('123456', ''), null);
});

test('bizRegNumProblem: real registration numbers pass, dashes allowed; every other check digit, and any other length or character, is refused', () => {
  // Registration numbers companies publish on their own sites (Samsung Electronics, NAVER, Kakao).
  for (const valid of ['124-81-00998', '220-81-62517', '120-81-47521', '1248100998']) {
    assert.equal(bizRegNumProblem(valid), null, valid);
    const digits = valid.replace(/-/g, '');
    for (let d = 0; d <= 9; d++) {
      if (String(d) === digits[9]) continue;
      assert.match(bizRegNumProblem(digits.slice(0, 9) + d) ?? '', /check digit/, `${digits.slice(0, 9)}${d}`);
    }
  }
  for (const bad of ['124810099', '12481009980', '124-81-0099X', '', '124 81 00998']) assert.match(bizRegNumProblem(bad) ?? '', /10 digits/, bad);
});
