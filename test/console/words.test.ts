import assert from 'node:assert/strict';
import { test } from 'node:test';
import { note, noteWords, problemWords } from '../../src/console/views/format.js';
import { forEachEngine, paymentBody, seqNo, withApp } from '../helpers/app.js';
import { eventually } from '../helpers/wait.js';
import { ownerClient, textOf } from './support.js';

test('what went wrong, in Korean: each kind of failure its own sentence', () => {
  assert.match(problemWords('connect ECONNREFUSED 127.0.0.1:9'), /연결을 거부했습니다/);
  assert.match(problemWords('The operation was aborted due to timeout'), /제때 답하지 않았습니다/);
  assert.match(problemWords('getaddrinfo ENOTFOUND nowhere.example'), /주소를 찾을 수 없습니다/);
  assert.match(problemWords('HTTP 503'), /503 오류로 답했습니다/);
  assert.match(problemWords('self-signed certificate'), /보안 인증서/);
  assert.equal(problemWords('something else'), '전달하지 못했습니다');
});

test('the service\'s stored notes (ledger memos, schedule runs) in Korean; anything unknown behind "자세히"', () => {
  assert.deepEqual(noteWords('INITIAL'), { words: '발송', detail: null });
  assert.deepEqual(noteWords('RESEND'), { words: '재발송', detail: null });
  assert.deepEqual(noteWords('SMS carried it'), { words: '남은 포인트 환급 (전달: 문자(SMS))', detail: null });
  assert.deepEqual(noteWords('send failed'), { words: '발송 실패로 포인트 환급', detail: null });
  assert.deepEqual(noteWords('not delivered on any channel'), { words: '어느 채널로도 전달되지 않아 포인트 환급', detail: null });
  assert.deepEqual(noteWords('billed 6'), { words: '6건 청구', detail: null });
  assert.deepEqual(noteWords('billed 1200; left out (no amount): 김철수, 이영희 and 3 more'), { words: '1,200건 청구 · 금액이 없어 뺀 회원: 김철수, 이영희 외 3명', detail: null });
  assert.equal(noteWords('no member has an amount and the template has none').detail, 'no member has an amount and the template has none');
  assert.match(noteWords('waiting for points: balance 5, needs 300').words, /포인트가 모자라/);
  // A merchant's own Korean memo passes unchanged; English the console does not know is "메모" + 자세히.
  assert.deepEqual(noteWords('카드 충전 (승인번호 1234)'), { words: '카드 충전 (승인번호 1234)', detail: null });
  assert.deepEqual(noteWords('something new'), { words: '메모', detail: 'something new' });
  assert.deepEqual(noteWords(null), { words: '', detail: null });
  // The detail is escaped like every value on a page.
  assert.equal(String(note('<b>x</b>')), '메모 <details><summary>자세히</summary><code>&#60;b&#62;x&#60;/b&#62;</code></details>');
});

forEachEngine('console: words a merchant reads', (engine) => {
  const t = withApp(engine);

  test('a failing callback reads in Korean with the raw error behind "자세히"; a send shows its channel in Korean', async () => {
    const { owner, c } = await ownerClient(t, { points: 100 });
    const seq = seqNo('WD');
    await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq, CONFIRM_URL: 'https://127.0.0.1:9/cb' }));
    assert.equal((await t.pay(seq)).approved, true);
    const page = await eventually(async () => {
      const p = await c.get(`/console/payments/${seq}`);
      return p.text.includes('1회차: 실패') ? p.text : undefined;
    }, 'the failed callback on the timeline');
    const text = textOf(page);
    assert.ok(text.includes('받는 서버가 연결을 거부했습니다'), text.slice(0, 2000));
    assert.match(page, /<details><summary>자세히<\/summary><code>[^<]*ECONNREFUSED/);

    // "Send again" by hand: its attempt follows the ones before it in one sequence, never "1회차" twice.
    const payment = await t.app.sunap.database.db.selectFrom('payments').select('id').where('trans_seqno', '=', seq).executeTakeFirstOrThrow();
    const delivery = await t.app.sunap.database.db.selectFrom('deliveries').select('id').where('kind', '=', 'callback').where('ref_id', '=', payment.id).executeTakeFirstOrThrow();
    const before = await t.app.sunap.database.db.selectFrom('outbound_attempts').select('id').where('target', '=', 'CALLBACK').where('ref_id', '=', payment.id).execute();
    assert.equal((await c.post(`/console/deliveries/${delivery.id}/redeliver`, {}, { from: `/console/deliveries/${delivery.id}` })).status, 303);
    const numbers = await eventually(async () => {
      const n = [...textOf((await c.get(`/console/payments/${seq}`)).text).matchAll(/결과 알림\(콜백\) (\d+)회차/g)].map((m) => Number(m[1]));
      return n.length > before.length ? n : undefined;
    }, 'the manual attempt on the timeline');
    assert.deepEqual(numbers, numbers.map((_, i) => i + 1), `one sequence: ${numbers.join(',')}`);

    assert.equal((await c.post('/console/invoices/new', { requestId: 'console-words-0001', name: '김영희', phone: '010-1234-5678', amount: '5000', reason: '수강료' }, { from: '/console/invoices/new' })).status, 303);
    const inv = await t.app.sunap.database.db.selectFrom('invoices').select(['unique_id', 'send_status']).where('account_id', '=', owner.accountId).executeTakeFirstOrThrow();
    await eventually(async () => (await t.app.sunap.database.db.selectFrom('invoices').select('send_status').where('unique_id', '=', inv.unique_id).executeTakeFirstOrThrow()).send_status === 'SENT', 'sent');
    const detail = (await c.get(`/console/invoices/${inv.unique_id}`)).text;
    const sends = detail.slice(detail.indexOf('<tbody>', detail.indexOf('발송 기록')));
    assert.ok(!/<td>ALIMTALK<\/td>|<td>ACCEPTED<\/td>/.test(detail), 'no raw codes');
    assert.ok(textOf(sends).includes('알림톡'));
  });
});
