import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import iconv from 'iconv-lite';
import { CSV_LIMITS, decodeCsv, DECODE_SLICE } from '../../src/console/csv-upload.js';
import { PARSE_SLICE, parseRecipients } from '../../src/console/recipients.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { ownerClient, textOf, type ConsoleClient } from './support.js';

/** A class as Korean Excel saves it: no header row, CP949 (Excel's plain "CSV"). */
const CLASS = [['김영희', '010-1111-2222', '120000'], ['박철수', '010-1111-3333', '98000'], ['이민준', '01011114444', '75000']];
const lines = (rows: string[][], sep = ',') => rows.map((r) => r.join(sep)).join('\r\n');

/** The hidden fields of the preview's send form. */
function sendForm(page: string): Record<string, string> {
  return Object.fromEntries([...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
    .map((m) => [m[1]!, m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>')]));
}

async function uploadBytes(c: ConsoleClient, t: { url: string }, bytes: Buffer, fields: Record<string, string> = { reason: '12월 수강료' }) {
  const form = new FormData();
  form.set('_csrf', await c.csrf('/console/invoices/bulk'));
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set('file', new Blob([bytes], { type: 'text/csv' }), 'class.csv');
  const res = await fetch(`${t.url}/console/invoices/bulk/preview`, { method: 'POST', body: form, headers: { cookie: c.cookieHeader() }, redirect: 'manual' });
  return { status: res.status, text: await res.text() };
}

describe('reading an uploaded CSV', () => {
  test('the limits: 2 MiB and 1,000 recipients; decoding and parsing go in slices of 64 KiB and 16 Ki characters', () => {
    assert.deepEqual(CSV_LIMITS, { bytes: 2 * 1024 * 1024, rows: 1000 });
    assert.equal(DECODE_SLICE, 65_536);
    assert.equal(PARSE_SLICE, 16_384);
  });

  test('every encoding Korean offices save, each named', async () => {
    const text = lines(CLASS);
    const cases: [Buffer, string][] = [
      [Buffer.from(text, 'utf8'), 'UTF-8'],
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]), 'UTF-8 (BOM)'],
      [iconv.encode(text, 'cp949'), 'CP949'],
      // EUC-KR is CP949's subset: the same bytes for these names.
      [iconv.encode(text, 'euc-kr'), 'CP949'],
      [Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(lines(CLASS, '\t'), 'utf-16le')]), 'UTF-16LE'],
      [Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]), 'UTF-16BE'],
    ];
    for (const [bytes, encoding] of cases) {
      const r = await decodeCsv(bytes);
      assert.ok(!('error' in r), encoding);
      assert.equal(r.encoding, encoding);
      assert.ok(r.text.startsWith('김영희'), `${encoding}: ${r.text.slice(0, 20)}`);
      const rows = await parseRecipients(r.text, { templateAmount: null });
      assert.deepEqual(rows.rows.map((x) => [x.name, x.phone, x.amount, x.errors.length]), [['김영희', '01011112222', 120_000, 0], ['박철수', '01011113333', 98_000, 0], ['이민준', '01011114444', 75_000, 0]], encoding);
    }
    // A CP949 character split across two 64 KiB slices is decoded whole.
    const long = `${'가'.repeat(DECODE_SLICE / 2 - 1)}a${'나'.repeat(10)}`;
    const split = await decodeCsv(iconv.encode(long, 'cp949'));
    assert.ok(!('error' in split) && split.text === long && split.encoding === 'CP949');
  });

  test('bytes that are none of them are refused, never previewed (a spreadsheet file, bytes CP949 cannot map, a NUL)', async () => {
    const xlsx = Buffer.concat([Buffer.from('PK\u0003\u0004', 'latin1'), Buffer.from([0x14, 0x00, 0x06, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00, 0xff, 0xfe, 0x80, 0x81])]);
    for (const bytes of [xlsx, Buffer.from([0x41, 0x2c, 0xff, 0xff, 0x2c, 0x42]), Buffer.from('a,b\u0000,c', 'utf8')]) {
      const r = await decodeCsv(bytes);
      assert.ok('error' in r, bytes.toString('hex'));
      assert.match(r.error, /글자를 읽을 수 없습니다/);
    }
    // One byte over the limit is refused before any decoding; the limit itself is read.
    const atLimit = Buffer.alloc(CSV_LIMITS.bytes, 0x61);
    assert.ok(!('error' in (await decodeCsv(atLimit))));
    const over = await decodeCsv(Buffer.alloc(CSV_LIMITS.bytes + 1, 0x61));
    assert.ok('error' in over && /2MB/.test(over.error));
  });

  test('the row limit: 1,000 recipients are read (with or without a header row), the 1,001st stops the reading', async () => {
    const row = (i: number) => `학생${i},010${String(10_000_000 + i)},10000`;
    const body = (n: number) => Array.from({ length: n }, (_, i) => row(i));
    assert.equal((await parseRecipients(body(1000).join('\n'), { templateAmount: null })).rows.length, 1000);
    assert.equal((await parseRecipients(['이름,전화번호,금액', ...body(1000)].join('\n'), { templateAmount: null })).rows.length, 1000);
    for (const [text, line] of [[body(1001).join('\n'), '1,001'], [['이름,전화번호,금액', ...body(1001)].join('\n'), '1,002']] as const) {
      const r = await parseRecipients(text, { templateAmount: null });
      assert.equal(r.rows.length, 0);
      assert.match(r.error!, /1,000명까지/);
      assert.ok(r.error!.includes(`${line}번째 줄에서 읽기를 멈췄습니다`), r.error);
    }
    // 2 MB of short rows (about 70,000): refused at the first row past the limit, not after reading all of them.
    const many = body(70_000).join('\n');
    assert.ok(Buffer.byteLength(many) < CSV_LIMITS.bytes);
    let turns = 0;
    let ticking = true;
    const tick = () => { turns++; if (ticking) setImmediate(tick); };
    setImmediate(tick);
    const r = await parseRecipients(many, { templateAmount: null });
    ticking = false;
    assert.ok(r.error!.includes('1,001번째 줄에서 읽기를 멈췄습니다'), r.error);
    // Stopped after the slices that held 1,002 records (about 30 KB), far short of the 2 MB's 100-odd slices.
    assert.ok(turns <= 4, `stopped early (${turns} turns)`);
  });

  test('parsing the largest text lets the event loop turn between slices (other requests are answered meanwhile)', async () => {
    // 1,000 recipients padded with extra cells to 2 MB: the most work a file within the limits can ask for.
    const pad = 'x'.repeat(Math.floor(CSV_LIMITS.bytes / 1000) - 60);
    const text = Array.from({ length: 1000 }, (_, i) => `학생${i},010${String(20_000_000 + i)},10000,,,${pad}`).join('\n');
    assert.ok(Buffer.byteLength(text) <= CSV_LIMITS.bytes && Buffer.byteLength(text) > CSV_LIMITS.bytes * 0.95);
    let turns = 0;
    let ticking = true;
    const tick = () => { turns++; if (ticking) setImmediate(tick); };
    setImmediate(tick);
    const r = await parseRecipients(text, { templateAmount: null });
    ticking = false;
    assert.equal(r.rows.length, 1000);
    const slices = Math.ceil(text.length / PARSE_SLICE);
    assert.ok(turns >= slices - 1, `the loop turned ${turns} times over ${slices} slices`);
    // The same for decoding the bytes of the largest file.
    turns = 0;
    ticking = true;
    setImmediate(tick);
    const bytes = iconv.encode(text, 'cp949');
    const d = await decodeCsv(bytes.subarray(0, CSV_LIMITS.bytes));
    ticking = false;
    assert.ok(!('error' in d));
    assert.ok(turns >= Math.ceil(Math.min(bytes.length, CSV_LIMITS.bytes) / DECODE_SLICE) - 1, `decoding: ${turns} turns`);
  });
});

forEachEngine('console: CSV uploads', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;

  test('a class saved by Korean Excel (CP949, no header row): the names read right, the encoding said, and the send makes them', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const r = await uploadBytes(c, t, iconv.encode(lines(CLASS), 'cp949'));
    assert.equal(r.status, 200, r.text.slice(0, 400));
    const p = textOf(r.text);
    for (const s of ['미리 보기: 3명', '김영희', '박철수', '이민준', 'CP949/EUC-KR', '293,000원', '3명에게 보내기 (30P)']) assert.ok(p.includes(s), `shows ${s}`);
    assert.ok(!r.text.includes('\uFFFD'));
    const { _csrf, ...fields } = sendForm(r.text);
    const sent = await c.post('/console/invoices/bulk', fields, { csrf: _csrf });
    assert.equal(sent.status, 303, sent.text.slice(0, 300));
    const rows = await db().selectFrom('invoices').select(['receiver_name', 'amount']).where('account_id', '=', owner.accountId).orderBy('receiver_name').execute();
    assert.deepEqual(rows.map((x) => [x.receiver_name, Number(x.amount)]), [['김영희', 120_000], ['박철수', 98_000], ['이민준', 75_000]]);
  });

  test('UTF-16 "Unicode text" (tabs, a header row) and UTF-8 with a BOM preview alike', async () => {
    const { c } = await ownerClient(t, { points: 1000 });
    const withHead = [['이름', '전화번호', '금액'], ...CLASS];
    for (const bytes of [Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(lines(withHead, '\t'), 'utf-16le')]), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines(withHead), 'utf8')])]) {
      const r = await uploadBytes(c, t, bytes);
      assert.equal(r.status, 200);
      assert.ok(textOf(r.text).includes('3명에게 보내기'));
      assert.equal((r.text.match(/확인됨/g) ?? []).length, 3);
    }
  });

  test('a file that is not text is refused beside the file field, with the form kept; nothing is offered', async () => {
    const { c } = await ownerClient(t, { points: 1000 });
    const r = await uploadBytes(c, t, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0xfe, 0x80, 0x00, 0x41]), { reason: '12월 수강료', description: '안내' });
    assert.equal(r.status, 400);
    assert.match(r.text, /<span class="field-error" id="file-error">파일의 글자를 읽을 수 없습니다/);
    assert.match(r.text, /id="reason" name="reason" maxlength="60" value="12월 수강료"/);
    assert.ok(!r.text.includes('action="/console/invoices/bulk"'));
  });

  test('the preview checks the shared 청구 사유 and every shared field before it offers a send', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const csv = lines(CLASS);
    // No reason, no template: the form again, the problem beside 청구 사유, the rows kept in the text box.
    const none = await c.post('/console/invoices/bulk/preview', { csv, reason: '' }, { from: '/console/invoices/bulk' });
    assert.equal(none.status, 400);
    assert.match(none.text, /id="reason-error">청구 사유를 적어 주세요/);
    assert.ok(none.text.includes('김영희,010-1111-2222,120000'), 'the rows are kept');
    assert.ok(!none.text.includes('action="/console/invoices/bulk"'), 'no send offered');
    // Two problems at once (an over-long reason and a webhook address the mode refuses), each beside its field.
    const two = await c.post('/console/invoices/bulk/preview', { csv, reason: '가'.repeat(61), webhookUrl: 'ftp://example.com/x' }, { from: '/console/invoices/bulk' });
    assert.equal(two.status, 400);
    assert.match(two.text, /id="reason-error">청구 사유는 60자까지 적을 수 있습니다 \(지금 61자\)/);
    assert.match(two.text, /id="webhookUrl-error">웹훅 주소는 https:\/\/로 시작해야 합니다/);
    assert.ok(textOf(two.text).includes('고칠 곳이 2군데 있습니다'));
    // 60 characters is fine; a webhook address the service's policy refuses is found by asking it, in Korean.
    const policy = await c.post('/console/invoices/bulk/preview', { csv, reason: '가'.repeat(60), webhookUrl: 'http://example.com/hooks' }, { from: '/console/invoices/bulk' });
    assert.equal(policy.status, 400);
    assert.match(policy.text, /id="webhookUrl-error">웹훅 주소는 https:\/\/로 시작하는 주소여야 합니다/);
    assert.ok(!/webhookUrl: must/.test(policy.text), 'no English');
    const ok = await c.post('/console/invoices/bulk/preview', { csv, reason: '가'.repeat(60) }, { from: '/console/invoices/bulk' });
    assert.equal(ok.status, 200);
    assert.ok(textOf(ok.text).includes('3명에게 보내기'));
    // A template gives the reason: no reason needed.
    const tpl = await t.app.sunap.invoicing.templates.create(owner.accountId, { name: '월 수강료', reason: '12월 수강료', sendChannel: 'ALIMTALK' });
    const viaTemplate = await c.post('/console/invoices/bulk/preview', { csv, template: tpl.id }, { from: '/console/invoices/bulk' });
    assert.equal(viaTemplate.status, 200, textOf(viaTemplate.text).slice(0, 600));
    assert.equal((await db().selectFrom('invoices').select('id').where('account_id', '=', owner.accountId).execute()).length, 0, 'previews create nothing');
  });

  test('bad rows are not counted in the totals, and no send is offered until they are fixed', async () => {
    const { c } = await ownerClient(t, { points: 1000 });
    const csv = [...CLASS.map((r) => r.join(',')), '잘못된행,0101234,50000'].join('\n');
    const r = await c.post('/console/invoices/bulk/preview', { csv, reason: '수강료' }, { from: '/console/invoices/bulk' });
    assert.equal(r.status, 200);
    const p = textOf(r.text);
    assert.ok(p.includes('미리 보기: 3명 (문제 1행)'), p.slice(0, 300));
    assert.ok(p.includes('293,000원') && !p.includes('343,000원'), 'the total of the three good rows');
    assert.ok(p.includes('30P'), 'points for three');
    assert.ok(!r.text.includes('action="/console/invoices/bulk"'));
    // The problem column comes right after the row number (seen on a phone without scrolling).
    assert.match(r.text, /<th scope="col">행<\/th><th scope="col">확인<\/th>/);
  });

  test('the byte limit: a file of 2 MiB is read, one byte more is refused in Korean (413) while it streams in', async () => {
    const { c } = await ownerClient(t, { points: 1000 });
    const head = Buffer.from(`${lines(CLASS)}\r\n`, 'utf8');
    const fill = (n: number) => Buffer.concat([head, Buffer.alloc(n - head.length, 0x0a)]);
    const atLimit = await uploadBytes(c, t, fill(CSV_LIMITS.bytes));
    assert.equal(atLimit.status, 200);
    assert.ok(textOf(atLimit.text).includes('3명에게 보내기'));
    const over = await uploadBytes(c, t, fill(CSV_LIMITS.bytes + 1));
    assert.equal(over.status, 413);
    assert.ok(textOf(over.text).includes('파일이 너무 큽니다') && textOf(over.text).includes('2MB'));
    // Pasted text past the limit: the same words, beside the text box.
    const pasted = await c.post('/console/invoices/bulk/preview', { csv: `${lines(CLASS)}\n${'\n'.repeat(CSV_LIMITS.bytes)}`, reason: 'x' }, { from: '/console/invoices/bulk' });
    assert.ok([400, 413].includes(pasted.status), String(pasted.status));
    assert.ok(textOf(pasted.text).includes('너무 큽니다'));
  });

  test('/healthz keeps answering while the largest allowed upload and a too-large one run', async () => {
    const { c } = await ownerClient(t, { points: 20_000 });
    const pad = 'x'.repeat(Math.floor(CSV_LIMITS.bytes / 1000) - 60);
    const largest = Buffer.from(Array.from({ length: 1000 }, (_, i) => `학생${i},010${String(30_000_000 + i)},10000,,,${pad}`).join('\n'), 'utf8');
    assert.ok(largest.length <= CSV_LIMITS.bytes);
    const tooLarge = Buffer.alloc(CSV_LIMITS.bytes * 2, 0x61);
    let running = true;
    let answered = 0;
    const failures: string[] = [];
    const poll = (async () => {
      while (running) {
        const res = await fetch(`${t.url}/healthz`).catch((err: Error) => ({ status: 0, text: async () => err.message }));
        if (res.status === 200) answered++;
        else failures.push(String(res.status));
        await res.text();
      }
    })();
    const [a, b] = await Promise.all([uploadBytes(c, t, largest), uploadBytes(c, t, tooLarge)]);
    const during = answered;
    running = false;
    await poll;
    assert.equal(a.status, 200);
    assert.ok(textOf(a.text).includes('미리 보기: 1,000명'));
    assert.equal(b.status, 413);
    assert.deepEqual(failures, []);
    assert.ok(during >= 2, `/healthz answered ${during} times during the uploads`);
  });
});
