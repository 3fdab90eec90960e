/**
 * The CSV exports opened as a spreadsheet opens them (docs/security.md, "Probes of issue 28"):
 * each file is parsed by csv-parse, strictly, and every parsed cell is checked. Values stored
 * before control characters were refused (written to the database directly here) hold line
 * breaks, quotes, separators and formula starts; each must come back as exactly one cell of its
 * row, the same text, and never start a formula.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { safeCell } from '../../src/console/csv.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { eventually } from '../helpers/wait.js';
import { ownerClient, type ConsoleClient } from './support.js';

/** Every value the probes tried, and the plain ones around them. */
const HOSTILE = [
  '\n=1+1', '\r=1+1', '\r\n=1+1', 'a\n=HYPERLINK("http://x")', '=SUM(A1)', '+1', '-1+2', '@cmd', '\t=1', ' =1', '  @x',
  'comma, and "quote"', '"', 'line\nbreak', 'cr\ronly', '홍길동', 'plain',
];
const FORMULA = /^(?:[=+\-@\t\r\n]|\s*[=+\-@])/;

async function exported(c: ConsoleClient, t: { url: string }, path: string): Promise<string[][]> {
  const res = await fetch(`${t.url}${path}`, { headers: { cookie: c.cookieHeader() } });
  assert.equal(res.status, 200);
  // Strict RFC 4180 parsing: a stray quote or a ragged row throws.
  return parse(Buffer.from(await res.arrayBuffer()).toString('utf8'), { bom: true, relax_column_count: false, relax_quotes: false, record_delimiter: ['\r\n', '\n', '\r'] });
}

function checkCells(rows: string[][], what: string) {
  const width = rows[0]!.length;
  for (const [i, r] of rows.entries()) {
    assert.equal(r.length, width, `${what} row ${i}: one cell per column`);
    for (const cell of r) assert.doesNotMatch(cell, FORMULA, `${what} row ${i}: a cell starts a formula: ${JSON.stringify(cell)}`);
  }
}

test('safeCell: a formula start, or a line break, tab or CR first, gets the quote mark; other text and numbers as they are', () => {
  for (const v of ['=1', '+1', '-1', '@a', '\t1', '\r1', '\n1', ' =1', '\t =1']) assert.equal(safeCell(v), `'${v}`, JSON.stringify(v));
  for (const v of ['1=1', 'a\n=1', '홍길동', '010-1234-5678', '', 'x@y']) assert.equal(safeCell(v), v, JSON.stringify(v));
  assert.equal(safeCell(-5), -5);
  assert.equal(safeCell(null), '');
});

forEachEngine('console: exports parse as a spreadsheet', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;

  test('payments.csv: every hostile name and reason is one cell of its row, the same text, guarded; one record per payment', async () => {
    const { c } = await ownerClient(t);
    const seqs: string[] = [];
    for (const [i, v] of HOSTILE.entries()) {
      const body = paymentBody({});
      assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
      const seq = String(body.TRANS_SEQNO);
      seqs.push(seq);
      // As a row stored before the API refused control characters would hold them.
      await db().updateTable('payments').set({ pay_user_name: v, request_reason: HOSTILE[(i + 3) % HOSTILE.length]! }).where('trans_seqno', '=', seq).execute();
    }
    const rows = await exported(c, t, '/console/payments.csv');
    checkCells(rows, 'payments.csv');
    const head = rows[0]!;
    const bySeq = new Map(rows.slice(1).map((r) => [r[head.indexOf('거래번호')]!, r]));
    assert.equal(rows.length - 1, (await db().selectFrom('payments').select('id').where('store_code', '=', t.storeCode).execute()).length, 'one record per payment');
    for (const [i, seq] of seqs.entries()) {
      const r = bySeq.get(seq)!;
      assert.ok(r, seq);
      assert.equal(r[head.indexOf('결제자')], String(safeCell(HOSTILE[i]!)));
      assert.equal(r[head.indexOf('내용')], String(safeCell(HOSTILE[(i + 3) % HOSTILE.length]!)));
    }
  });

  test('invoices.csv: every hostile name and reason is one cell of its row, the same text, guarded; one record per invoice', async () => {
    const { owner, c } = await ownerClient(t, { points: 10_000 });
    for (let i = 0; i < HOSTILE.length; i++) {
      assert.equal((await c.post('/console/invoices/new', { name: `학생${i}`, phone: '01012345678', amount: '5000', reason: '수강료' }, { from: '/console/invoices/new' })).status, 303);
    }
    const made = await db().selectFrom('invoices').select(['id', 'unique_id']).where('account_id', '=', owner.accountId).orderBy('id').execute();
    assert.equal(made.length, HOSTILE.length);
    for (const [i, inv] of made.entries()) {
      await db().updateTable('invoices').set({ receiver_name: HOSTILE[i]!, reason: HOSTILE[(i + 5) % HOSTILE.length]! }).where('id', '=', inv.id).execute();
    }
    await eventually(async () => (await db().selectFrom('invoices').select('send_status').where('account_id', '=', owner.accountId).execute()).every((r) => r.send_status !== 'WAITING'), 'sends settled');
    const rows = await exported(c, t, '/console/invoices.csv');
    checkCells(rows, 'invoices.csv');
    const head = rows[0]!;
    assert.equal(rows.length - 1, made.length, 'one record per invoice');
    const byId = new Map(rows.slice(1).map((r) => [r[head.indexOf('uniqueId')]!, r]));
    for (const [i, inv] of made.entries()) {
      const r = byId.get(inv.unique_id)!;
      assert.equal(r[head.indexOf('받는 분')], String(safeCell(HOSTILE[i]!)));
      assert.equal(r[head.indexOf('청구 사유')], String(safeCell(HOSTILE[(i + 5) % HOSTILE.length]!)));
    }
  });
});
