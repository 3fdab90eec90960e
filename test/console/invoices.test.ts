import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { kstMonth } from '../../src/platform/kst.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
import { ledgerMatches } from '../invoicing/support.js';
import { addMember, ownerClient, recipientsCsv, textOf } from './support.js';

forEachEngine('console: invoices', (engine) => {
  const t = withApp(engine);
  const rx = new Receiver();
  before(async () => {
    await rx.start();
  });
  after(async () => rx.close());
  const db = () => t.app.sunap.database.db;

  test('CSV upload of 50 recipients: per-row preview with the point cost, all sent, one paid, DONE with its webhook delivery shown', async () => {
    const { owner, c } = await ownerClient(t, { points: 10_000 });
    const csv = recipientsCsv(50, '12');
    const preview = await c.upload('/console/invoices/bulk/preview', { reason: '12월 수강료', description: '10일까지 납부해 주세요', sendChannel: 'ALIMTALK', webhookUrl: `${rx.url}/hooks` }, { field: 'file', name: '12월.csv', content: csv });
    assert.equal(preview.status, 200, preview.text.slice(0, 500));
    const p = textOf(preview.text);
    for (const s of ['미리 보기: 50명', '500P', '한 통 10P', '10,000P', '학생0', '010-2222-3333', '교재 15,000원', '50명에게 보내기 (500P)']) assert.ok(p.includes(s), `the preview shows "${s}"`);
    assert.equal((preview.text.match(/확인됨/g) ?? []).length, 50);
    assert.equal(await db().selectFrom('invoices').select('id').where('account_id', '=', owner.accountId).execute().then((r) => r.length), 0, 'the preview creates nothing');

    const form = Object.fromEntries([...preview.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))]));
    const { _csrf, ...fields } = form;
    const sent = await c.post('/console/invoices/bulk', fields, { csrf: _csrf });
    assert.equal(sent.status, 303, sent.text.slice(0, 500));
    assert.equal(sent.location, '/console/invoices?notice=created');

    const rows = await db().selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).execute();
    assert.equal(rows.length, 50);
    const first = rows.find((r) => r.receiver_name === '학생0')!;
    assert.equal(first.amount, 115_000);
    assert.equal(first.guardian_phone, '01022223333');
    assert.equal(JSON.parse(first.items_json!).length, 2);
    assert.equal(rows.find((r) => r.receiver_name === '학생7')!.amount, 10_700);
    await eventually(async () => (await db().selectFrom('invoices').select('send_status').where('account_id', '=', owner.accountId).execute()).every((r) => r.send_status === 'SENT'), 'all 50 SENT', 30_000);
    const list = textOf((await c.get('/console/invoices?sendStatus=SENT')).text);
    assert.ok(list.includes('학생49') && list.includes('발송됨'));
    assert.equal((await ledgerMatches(t, owner.accountId)).balance, 10_000 - 500);

    // One customer pays through the link the message carried.
    assert.equal((await t.pay(first.trans_seqno)).approved, true);
    await rx.waitFor(1);
    await eventually(async () => (await db().selectFrom('webhook_events').select('status').where('invoice_id', '=', first.id).executeTakeFirst())?.status === 'DELIVERED', 'the webhook DELIVERED');
    const detail = textOf((await c.get(`/console/invoices/${first.unique_id}`)).text);
    assert.doesNotMatch(detail, /<h3>bill\.paid/, 'the event in Korean, not its code');
    for (const s of ['결제 완료', '발송됨', '보호자', '010-2222-3333', '최초', '성공', '청구서 결제', '전달됨', '200', '신한카드', '교재']) assert.ok(detail.includes(s), `the detail shows "${s}"`);
    const done = textOf((await c.get('/console/invoices?status=DONE')).text);
    assert.ok(done.includes('학생0') && !done.includes('학생1 '), 'the DONE filter lists the paid one only');
    // The payment is in the store's payments too, linked both ways.
    assert.ok((await c.get(`/console/payments/${first.trans_seqno}`)).text.includes(`/console/invoices/${first.unique_id}`));
  });

  test('a CSV with problems is refused row by row, and nothing is created', async () => {
    const { owner, c } = await ownerClient(t, { points: 10_000 });
    const bad = ['홍길동,010-1234-5678,50', ',01012345678,10000', '김철수,0101234,10000', '이영희,01099998888,12000,,교재:10000', '홍길동,010-1234-5678,30000'].join('\n');
    const r = await c.post('/console/invoices/bulk/preview', { csv: bad, reason: '수강료' }, { from: '/console/invoices/bulk' });
    assert.equal(r.status, 200);
    const text = textOf(r.text);
    for (const s of ['금액은 100원 이상', '이름은 1~30자', '전화번호는 10~11자리', '항목 합계(10,000원)가 금액(12,000원)과 다릅니다', '1행과 이름·전화번호가 같습니다']) assert.ok(text.includes(s), `says "${s}"`);
    assert.ok(!r.text.includes('action="/console/invoices/bulk"'), 'no send button');
    // Posting it anyway (the confirm form of another preview) is refused too.
    const again = await c.post('/console/invoices/bulk', { csv: bad, reason: '수강료' }, { from: '/console/invoices/bulk' });
    assert.equal(again.status, 400);
    // Not enough points: the preview says how many are missing and offers no button.
    const poor = await ownerClient(t, { points: 10 });
    const short = await poor.c.post('/console/invoices/bulk/preview', { csv: '가,01011112222,1000\n나,01011113333,1000', reason: 'x' }, { from: '/console/invoices/bulk' });
    assert.ok(textOf(short.text).includes('10P 부족'));
    assert.ok(!short.text.includes('action="/console/invoices/bulk"'));
    assert.equal((await db().selectFrom('invoices').select('id').where('account_id', 'in', [owner.accountId, poor.owner.accountId]).execute()).length, 0);
  });

  test('one recipient from the form; a double submit creates one invoice (the form\'s requestId)', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const page = await c.get('/console/invoices/new');
    const requestId = /name="requestId" value="([^"]+)"/.exec(page.text)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const fields = { requestId, name: '홍길동', phone: '010-1234-5678', amount: '128,000', reason: '11월 수강료', sendChannel: 'SMS' };
    assert.equal((await c.post('/console/invoices/new', fields, { csrf })).status, 303);
    assert.equal((await c.post('/console/invoices/new', fields, { csrf })).status, 303);
    const rows = await db().selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.send_channel, 'SMS');
    assert.equal(rows[0]!.amount, 128_000);
    // A bad phone: the form again, with the field named, nothing created.
    const bad = await c.post('/console/invoices/new', { ...fields, requestId: 'console-other-1', phone: '12' });
    assert.equal(bad.status, 400);
    assert.ok(textOf(bad.text).includes('전화번호는 10~11자리 숫자여야 합니다'));
    assert.ok(!textOf(bad.text).includes('studentPhone'), 'no API field names on a page');
    assert.equal((await db().selectFrom('invoices').select('id').where('account_id', '=', owner.accountId).execute()).length, 1);
  });

  test('resend, cancel and delete from the detail; a viewer may do none of them; another team\'s invoice is 404', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    for (const name of ['가', '나']) {
      assert.equal((await c.post('/console/invoices/new', { requestId: `console-${name === '가' ? 'aaaaaaaa' : 'bbbbbbbb'}-${owner.accountId.slice(0, 8)}`, name, phone: '01012345678', amount: '5000', reason: '수강료' }, { from: '/console/invoices/new' })).status, 303);
    }
    const rows = await db().selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).orderBy('id').execute();
    const [a, b] = rows as [typeof rows[0], typeof rows[0]];
    await eventually(async () => (await db().selectFrom('invoices').select('send_status').where('account_id', '=', owner.accountId).execute()).every((r) => r.send_status === 'SENT'), 'sent');
    const viewer = await addMember(t, c, 'viewer');
    assert.equal((await viewer.c.post(`/console/invoices/${a.unique_id}/resend`, {}, { from: `/console/invoices/${a.unique_id}` })).status, 403);
    assert.equal((await viewer.c.post(`/console/invoices/${a.unique_id}/delete`, {}, { from: `/console/invoices/${a.unique_id}` })).status, 403);
    const other = await ownerClient(t);
    for (const path of [`/console/invoices/${a.unique_id}`, `/console/invoices/${a.unique_id}/cancel`, `/console/invoices/${a.unique_id}/delete`]) assert.equal((await other.c.get(path)).status, 404, path);
    for (const action of ['resend', 'cancel', 'delete']) assert.equal((await other.c.post(`/console/invoices/${a.unique_id}/${action}`, {})).status, 404, action);

    assert.equal((await c.post(`/console/invoices/${a.unique_id}/resend`, {}, { from: `/console/invoices/${a.unique_id}` })).status, 303);
    assert.equal((await db().selectFrom('sends').select('id').where('invoice_id', '=', a.id).execute()).length, 2);
    assert.ok(textOf((await c.get(`/console/invoices/${a.unique_id}`)).text).includes('재발송'));
    assert.equal((await c.post(`/console/invoices/${a.unique_id}/delete`, {}, { from: `/console/invoices/${a.unique_id}/delete` })).status, 303);
    assert.notEqual((await db().selectFrom('invoices').select('deleted_at').where('id', '=', a.id).executeTakeFirstOrThrow()).deleted_at, null);
    assert.equal((await c.get(`/console/invoices/${a.unique_id}`)).status, 404);
    await t.pay(b.trans_seqno);
    assert.equal((await c.post(`/console/invoices/${b.unique_id}/cancel`, {}, { from: `/console/invoices/${b.unique_id}/cancel` })).status, 303);
    assert.equal((await db().selectFrom('invoices').select('status').where('id', '=', b.id).executeTakeFirstOrThrow()).status, 'CANCELED');
  });

  test('search over name, phone, reason and requestId; the CSV export matches the database row for row', async () => {
    const { owner, c } = await ownerClient(t, { points: 10_000 });
    const csv = ['이름,전화번호,금액', '찾는사람,010-4444-1111,10000', '다른사람,010-4444-2222,20000', '세번째,010-4444-3333,30000'].join('\n');
    const pre = await c.post('/console/invoices/bulk/preview', { csv, reason: '검색용 청구' }, { from: '/console/invoices/bulk' });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(pre.text)![1]!;
    assert.equal((await c.post('/console/invoices/bulk', { csv, reason: '검색용 청구' }, { csrf })).status, 303);
    const names = (html: string) => [...html.matchAll(/href="\/console\/invoices\/[0-9a-f-]{36}">([^<]+)</g)].map((m) => m[1]);
    assert.deepEqual(names((await c.get('/console/invoices?q=%EC%B0%BE%EB%8A%94%EC%82%AC%EB%9E%8C')).text), ['찾는사람']);
    assert.deepEqual(names((await c.get('/console/invoices?q=010-4444-2222')).text), ['다른사람']);
    assert.equal(names((await c.get(`/console/invoices?q=${encodeURIComponent('검색용 청구')}`)).text).length, 3);
    // The month the three were made in, from a row: the clock may be in the next one by now.
    const made = await db().selectFrom('invoices').select('created_at').where('account_id', '=', owner.accountId).executeTakeFirstOrThrow();
    const month = kstMonth(Number(made.created_at));
    assert.equal(names((await c.get(`/console/invoices?month=${month}`)).text).length, 3);
    assert.equal(names((await c.get('/console/invoices?month=2001-01')).text).length, 0);

    const res = await fetch(`${t.url}/console/invoices.csv`, { headers: { cookie: c.cookieHeader() } });
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    const rows: string[][] = parse(bytes.toString('utf8'), { bom: true });
    const head = rows[0]!;
    const dbRows = await db().selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).where('deleted_at', 'is', null)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    assert.equal(rows.length - 1, dbRows.length);
    dbRows.forEach((inv, i) => {
      const r = rows[i + 1]!;
      assert.equal(r[head.indexOf('uniqueId')], inv.unique_id);
      assert.equal(r[head.indexOf('받는 분')], inv.receiver_name);
      assert.equal(Number(r[head.indexOf('금액')]), Number(inv.amount));
      assert.equal(r[head.indexOf('결제 상태 코드')], inv.status);
      assert.equal(r[head.indexOf('전화번호')].replace(/-/g, ''), inv.receiver_phone);
    });
    // The export is on the audit log.
    assert.ok(textOf((await c.get('/console/settings')).text).includes('청구서 내보내기'));
  });
});
