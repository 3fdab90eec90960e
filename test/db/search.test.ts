import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { sql, type Insertable } from 'kysely';
import pg from 'pg';
import { migrate, openDatabase } from '../../src/db/index.js';
import type { InvoiceTable } from '../../src/db/schema.js';
import {
  DENSE_WINDOW, ftsQuery, PARTIAL_MIN, PARTIAL_WINDOW, partsOf, textIndexed, TRIGRAM_MIN,
} from '../../src/db/search.js';
import * as pq from '../../src/gateway/console-repository.js';
import type { Payment } from '../../src/gateway/repository.js';
import * as iq from '../../src/invoicing/console-repository.js';
import * as repo from '../../src/invoicing/repository.js';
import { forEachEngine } from '../helpers/app.js';
import { insertStores, withDatabase } from '../helpers/db.js';
import { invoiceRow } from '../invoicing/support.js';

/**
 * The console's search by a part of a value through the engines' text indexes (migration 0019,
 * src/db/search.ts): each kind of term a customer can tell, on both sides of each length rule,
 * rows older than the newest DENSE_WINDOW (so only the text index can find them), another
 * tenant's identical rows never found, and the index kept in step by updates and deletes.
 */

/** 2026-11-23 12:00 KST. */
const T = Date.UTC(2026, 10, 23, 3);
const MIN = 60_000;

test('the rules: 1 character not looked for, 2 (or a number) among the newest 1,000 (and a name\'s last 2 at any age), 3 or more through the text index after the newest 1,000', () => {
  assert.equal(PARTIAL_MIN, 2);
  assert.equal(TRIGRAM_MIN, 3);
  assert.equal(PARTIAL_WINDOW, 1000);
  assert.equal(DENSE_WINDOW, 1000);
  assert.deepEqual(partsOf('010-1234-56'), ['010-1234-56', '010123456'], 'a number with dashes: as written and its digits');
  assert.deepEqual(partsOf('01012345'), ['01012345'], 'digits only: once');
  assert.deepEqual(partsOf('영희\u001f'), ['영희'], 'control characters dropped');
  assert.equal(ftsQuery(['a"b', '수강']), '"a""b" OR "수강"', 'each part one quoted FTS5 string');
});

function paymentRow(storeCode: string, n: number, over: Partial<Payment> = {}): Payment {
  return {
    id: `tp-${storeCode}-${n}`, platform_code: 'PTXT', store_code: storeCode, trans_seqno: `F${storeCode}${String(n).padStart(6, '0')}`,
    state: 'STORE_REQUEST', amount: 10_000, supply_amount: 9_091, tax_charge: 909, tax_free_amount: 0,
    mobile_no: `0105555${String(n).padStart(4, '0')}`, pay_user_name: `채움${n}`, request_reason: '11월 수강료', info_message: null,
    confirm_url: null, return_display_yn: 'N', return_url: null, temp_value: null, user_id: null, order_type: 'BILL', items_json: null,
    pay_path: 'WEB', approval_number: null, approval_at: null, installment_month: null, issuer_name: null, accepter_name: null,
    method_name: null, card_bin: null, card_last4: null, processor_ref: null, cancel_at: null, cancel_reason: '', cancel_amount: 0,
    created_at: T + n * MIN, updated_at: T + n * MIN, processor: null, processor_order: null, method: null, vbank_code: '', vbank_name: '',
    vbank_account: '', vbank_holder: '', vbank_due_at: null, vbank_secret_sealed: null, ...over,
  };
}

forEachEngine('console search through the text indexes', (engine) => {
  const h = withDatabase(engine);
  const A = { platformCode: 'PTXT', storeCode: 'STXTA' };
  const B = { platformCode: 'PTXT', storeCode: 'STXTB' };
  /** The customer's payment: old, so that the store's newest DENSE_WINDOW payments are all newer. */
  const target = (storeCode: string, n: number, over: Partial<Payment> = {}) => paymentRow(storeCode, n, {
    id: `target-${storeCode}-${n}`, pay_user_name: '김영희', request_reason: '겨울방학 특강', trans_seqno: `TQX-20261123-${storeCode}-${n}`,
    mobile_no: '01012345678', approval_number: '73351234', card_bin: '424242', card_last4: '9012', state: 'APPROVE_COMPLETE', approval_at: T, ...over,
  });
  const insert = async (rows: Payment[]) => {
    for (let i = 0; i < rows.length; i += 200) await h.db.insertInto('payments').values(rows.slice(i, i + 200)).execute();
  };
  const find = (s: typeof A, term: string, limit = 100) => pq.searchPayments(h.db, s, { q: term }, { limit }).then((r) => r.map((p) => p.id));

  before(async () => {
    await insertStores(h.db, 'PTXT', [A.storeCode, B.storeCode], T);
    // Store A: its customer's payment and one in English, then DENSE_WINDOW newer payments. Store B: the same customer's words.
    await insert([target(A.storeCode, -2), target(A.storeCode, -1, { pay_user_name: 'Kim Younghee', request_reason: 'Piano LESSON', mobile_no: '01099990000', card_last4: '1111', approval_number: '5550001', trans_seqno: 'EN-0001' })]);
    await insert(Array.from({ length: DENSE_WINDOW }, (_, i) => paymentRow(A.storeCode, i)));
    await insert([target(B.storeCode, -2), ...Array.from({ length: 5 }, (_, i) => paymentRow(B.storeCode, i))]);
  });

  test('payments: every kind a customer can tell finds their old payment, and only in their store', async () => {
    const mine = ['target-STXTA--2'];
    assert.deepEqual(await find(A, '5678'), mine, 'the last 4 of the phone');
    assert.deepEqual(await find(A, '9012'), mine, 'the last 4 of the card');
    assert.deepEqual(await find(A, '73351234'), mine, 'the approval number');
    assert.deepEqual(await find(A, '7335123'), [], 'a part of a number older than the newest 1,000 (store B finds its own, below)');
    assert.deepEqual(await find(A, 'TQX-2026'), mine, 'a TRANS_SEQNO prefix (text index)');
    assert.deepEqual(await find(A, 'tqx-2026'), mine, 'in any case');
    assert.deepEqual(await find(A, '김영희'), mine, 'the whole name');
    assert.deepEqual(await find(A, '영희'), mine, 'a Korean given name of 2 characters: the name\'s last 2, at any age');
    assert.deepEqual(await find(A, '방학 특'), mine, 'a part of the reason of 3 characters, older than the newest 1,000 (text index)');
    assert.deepEqual(await find(A, '1234-56'), [], 'a part of the phone older than the newest 1,000');
    assert.deepEqual(await find(A, 'younghee'), ['target-STXTA--1'], 'a part of a name in another case (text index)');
    assert.deepEqual(await find(A, 'piano les'), ['target-STXTA--1'], 'a part of a reason in another case (text index)');
    assert.deepEqual(await find(A, '희'), [], 'one character: not looked for');
    assert.deepEqual(await find(A, 'TQ'), [], '2 characters: older than the newest 1,000');
    assert.deepEqual(await find(A, 'TQX'), ['target-STXTA--2'], '3 characters: the text index');
    // Store B has the very same words: each found only there.
    for (const term of ['5678', '9012', '73351234', '7335123', 'TQX-2026', '영희', '방학 특', '1234-56']) {
      assert.deepEqual(await find(B, term), ['target-STXTB--2'], `store B: ${term}`);
    }
  });

  test('payments: a part most rows hold costs a page of the newest; one held by new and old rows lists both, newest first, page by page', async () => {
    const page = await find(A, '수강료', 50);
    assert.deepEqual(page, Array.from({ length: 50 }, (_, i) => `tp-STXTA-${DENSE_WINDOW - 1 - i}`), 'the newest 50 of the 1,000 that hold it');
    await insert([paymentRow(A.storeCode, DENSE_WINDOW + 5, { id: 'new-winter', request_reason: '겨울방학 특강 추가' })]);
    assert.deepEqual(await find(A, '방학 특'), ['new-winter', 'target-STXTA--2'], 'the newest from the window, the older through the index');
    const first = await pq.searchPayments(h.db, A, { q: '방학 특' }, { limit: 1 });
    assert.deepEqual(first.map((p) => p.id), ['new-winter']);
    const next = await pq.searchPayments(h.db, A, { q: '방학 특' }, { limit: 1, after: { at: first[0]!.created_at, id: first[0]!.id } });
    assert.deepEqual(next.map((p) => p.id), ['target-STXTA--2'], 'the next page continues past the window');
    await h.db.deleteFrom('payments').where('id', '=', 'new-winter').execute();
  });

  test('payments: the text index follows an update and a delete, and a new row', async () => {
    await insert([target(A.storeCode, -5, { id: 'moving', request_reason: '여름캠프 참가비', trans_seqno: 'MOVE-0001', pay_user_name: '박서준' })]);
    assert.deepEqual(await find(A, '여름캠프'), ['moving']);
    await h.db.updateTable('payments').set({ request_reason: '가을캠프 참가비' }).where('id', '=', 'moving').execute();
    assert.deepEqual(await find(A, '여름캠프'), [], 'the old words are gone from the index');
    assert.deepEqual(await find(A, '가을캠프'), ['moving'], 'the new words are in it');
    await h.db.updateTable('payments').set({ state: 'APPROVE_COMPLETE' }).where('id', '=', 'moving').execute();
    assert.deepEqual(await find(A, '가을캠프'), ['moving'], 'an update of another column keeps it');
    await h.db.deleteFrom('payments').where('id', '=', 'moving').execute();
    assert.deepEqual(await find(A, '가을캠프'), [], 'a deleted payment is not found');
    await insert([target(A.storeCode, -6, { id: 'again', request_reason: '가을캠프 참가비' })]);
    assert.deepEqual(await find(A, '가을캠프'), ['again'], 'a new payment with the same words is');
    await h.db.deleteFrom('payments').where('id', '=', 'again').execute();
  });

  test('the text index is what serves a part of 3 characters or more', async () => {
    const query = h.db.selectFrom('payments').select('id').where(textIndexed(h.db, 'payments', ['방학 특'])).compile();
    const explain = (db: typeof h.db, prefix: string) => db.executeQuery<Record<string, unknown>>({ ...query, sql: `${prefix} ${query.sql}` });
    if (engine === 'postgres') {
      // The test tables are small: without seqscan off the planner would rightly read them whole.
      const plan = await h.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        return explain(trx, 'explain');
      });
      const text = JSON.stringify(plan.rows);
      assert.match(text, /payments_text_trgm/, text);
      const ext = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(h.db);
      assert.equal(ext.rows[0]!.n, 1);
    } else {
      const text = JSON.stringify((await explain(h.db, 'explain query plan')).rows);
      assert.match(text, /VIRTUAL TABLE INDEX/, text);
      assert.match(text, /payments_text/, text);
    }
    // A part shorter than a trigram never reaches the index.
    const short = h.db.selectFrom('payments').select('id').where(textIndexed(h.db, 'payments', ['방학'])).compile();
    assert.match(short.sql, /1 = 0/);
  });

  test('a number (digits, dashes, spaces) is looked for among the newest 1,000, never through the text index; a part with a letter is, at any age', async () => {
    assert.deepEqual(await find(A, '7335123'), [], 'a part of a number older than the newest 1,000');
    assert.deepEqual(await find(B, '7335123'), ['target-STXTB--2'], 'the same within the newest 1,000 (store B has 6)');
    assert.deepEqual(await find(A, '73351234'), ['target-STXTA--2'], 'the whole approval number at any age');
    assert.deepEqual(await find(A, '5678'), ['target-STXTA--2'], 'the last 4 at any age');
    assert.deepEqual(await find(A, 'TQX-2026'), ['target-STXTA--2'], 'a part with a letter: the text index, at any age');
    assert.deepEqual(await find(A, '영희'), ['target-STXTA--2'], 'a given name at any age');
    assert.deepEqual(await find(A, '김영'), [], 'another part of 2 characters older than the newest 1,000');
    assert.deepEqual(await find(B, '김영'), ['target-STXTB--2'], 'the same within the newest 1,000');
  });

  // ---- invoices --------------------------------------------------------------------------

  let seq = 0;
  let rowSeq = 0;
  const account = async () => {
    const id = `txt-acct-${seq++}`;
    await h.db.transaction().execute((trx) => repo.insertAccount(trx, { id, email: `${id}@example.com`, password_hash: 'x', store_code: 'STXTA', invoicing_enabled: 1, created_at: T, role: 'owner', tenant_id: id }, T));
    return id;
  };
  const invoice = (accountId: string, n: number, over: Partial<Insertable<InvoiceTable>> = {}) =>
    invoiceRow(accountId, 'STXTA', rowSeq++, T + n * MIN, { send_status: 'SENT', send_count: 1, first_sent_at: T, last_sent_at: T, receiver_name: `채움${n}`, receiver_phone: `0105555${String(Math.abs(n)).padStart(4, '0')}`, ...over });
  const insertInvoices = async (accountId: string, rows: Insertable<InvoiceTable>[]) => {
    const ids: number[] = [];
    for (let i = 0; i < rows.length; i += 200) ids.push(...[...(await h.db.transaction().execute((trx) => repo.insertInvoices(trx, accountId, rows.slice(i, i + 200)))).values()].map(Number));
    return ids;
  };

  test('invoices: the last 4 of a phone or a guardian phone, a given name, a part of a name, a reason, a TRANS_SEQNO, a requestId, at any age, only the team\'s own; updates and deletes followed', async () => {
    const a = await account();
    const b = await account();
    const old = { receiver_name: '이영희', reason: '겨울방학 특강', receiver_phone: '01012345678', guardian_phone: '01098767777', request_id: 'order-2026-11-0042' };
    const [mine] = await insertInvoices(a, [invoice(a, -1, { ...old, trans_seqno: 'INVTXT-OLD-0001' })]);
    await insertInvoices(a, Array.from({ length: DENSE_WINDOW }, (_, i) => invoice(a, i)));
    const [theirs] = await insertInvoices(b, [invoice(b, -1, { ...old, trans_seqno: 'INVTXT-OLD-0002' })]);
    const find = async (acc: string, term: string) => (await iq.searchInvoices(h.db, acc, { q: term }, { limit: 100 })).map((r) => Number(r.id));
    for (const [term, why] of [
      ['5678', 'the phone\'s last 4'], ['7777', 'the guardian phone\'s last 4'], ['영희', 'a given name of 2 characters'], ['이영희', 'the whole name'],
      ['방학 특', 'a part of the reason (text index)'], ['INVTXT-OLD', 'a TRANS_SEQNO prefix (text index)'], ['order-2026', 'a part of a requestId (text index)'],
    ] as const) {
      assert.deepEqual(await find(a, term), [mine], `${why}: ${term}`);
      if (term !== 'INVTXT-OLD') assert.deepEqual(await find(b, term), [theirs], `the other team: ${term}`);
    }
    assert.deepEqual(await find(b, 'INVTXT-OLD'), [theirs]);
    assert.deepEqual(await find(a, '9876-77'), [], 'a part of a number, older than the newest 1,000');
    assert.deepEqual(await find(b, '9876-77'), [theirs], 'a part of the guardian phone written with a dash, within the newest 1,000');
    assert.deepEqual(await find(a, '희'), [], 'one character: not looked for');
    await h.db.updateTable('invoices').set({ reason: '봄방학 특강' }).where('id', '=', mine!).execute();
    assert.deepEqual(await find(a, '겨울방학'), [], 'the old reason is gone from the index');
    assert.deepEqual(await find(a, '봄방학'), [mine]);
    await h.db.updateTable('invoices').set({ deleted_at: T }).where('id', '=', mine!).execute();
    assert.deepEqual(await find(a, '봄방학'), [], 'a deleted invoice is not listed');
    await h.db.deleteFrom('invoices').where('id', '=', theirs!).execute();
    assert.deepEqual(await find(b, '방학 특'), [], 'a removed row is gone from the index');
    if (engine === 'sqlite') {
      const left = await sql<{ n: number }>`select count(*) as n from invoices_text where invoices_text match ${ftsQuery(['INVTXT-OLD-0002'])}`.execute(h.db);
      assert.equal(Number(left.rows[0]!.n), 0, 'the FTS5 table holds nothing of it');
    }
  });

  test('PostgreSQL: the migrations, pg_trgm included, run as a database\'s owner without superuser (a trusted extension)', { skip: engine !== 'postgres' }, async () => {
    const adminUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
    const tag = randomBytes(4).toString('hex');
    const role = `sunap_owner_${tag}`;
    const name = `sunap_test_owner_${tag}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`create role ${role} login nosuperuser password '${tag}'`);
      await admin.query(`create database ${name} owner ${role}`);
      const u = new URL(adminUrl);
      u.username = role;
      u.password = tag;
      u.pathname = `/${name}`;
      const owned = openDatabase(u.toString(), { poolSize: 1 });
      try {
        const who = await sql<{ s: boolean }>`select rolsuper as s from pg_roles where rolname = current_user`.execute(owned.db);
        assert.equal(who.rows[0]!.s, false, 'not a superuser');
        await migrate(owned.db);
        const ext = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(owned.db);
        assert.equal(ext.rows[0]!.n, 1);
        const idx = await sql<{ n: number }>`select count(*)::int as n from pg_indexes where indexname in ('payments_text_trgm', 'invoices_text_trgm')`.execute(owned.db);
        assert.equal(idx.rows[0]!.n, 2);
      } finally {
        await owned.close();
      }
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.query(`drop role if exists ${role}`);
      await admin.end();
    }
  });
});
