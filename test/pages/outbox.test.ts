import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, startApp, type TestApp } from '../helpers/app.js';

/** Rows as the sandbox messaging adapter writes them (src/ports/sandbox-messaging.ts). */
async function addMessage(t: TestApp, m: { channel: 'ALIMTALK' | 'SMS'; to: string; text: string; link: string | null; status?: 'ACCEPTED' | 'DELIVERED' | 'FAILED' | 'FAULT'; at: number }) {
  await t.app.sunap.database.db.insertInto('sandbox_messages').values({
    id: newId(), idempotency_key: newId(), channel: m.channel, to_phone: m.to, text: m.text, link: m.link,
    delivery_status: m.status ?? 'ACCEPTED', sent_at: m.at,
  }).execute();
}

forEachEngine('sandbox outbox', (engine) => {
  let t: TestApp;
  const base = Date.UTC(2026, 0, 15, 3, 0, 0); // 12:00 KST
  before(async () => {
    t = await startApp(engine);
    await addMessage(t, { channel: 'ALIMTALK', to: '01011112222', text: '[행복 피아노 학원] 청구서 안내\n\n결제하기: https://pay.example/checkout?tid=1&token=a', link: 'https://pay.example/checkout?tid=1&token=a', at: base });
    await addMessage(t, { channel: 'SMS', to: '01033334444', text: '두 번째 <b>메시지</b>', link: 'https://pay.example/checkout?tid=2&token=b', status: 'DELIVERED', at: base + 60_000 });
    await addMessage(t, { channel: 'ALIMTALK', to: '01011112222', text: '세 번째', link: null, status: 'FAILED', at: base + 120_000 });
    await addMessage(t, { channel: 'SMS', to: '01055556666', text: '링크가 이상한 메시지', link: 'javascript:alert(1)', at: base + 180_000 });
  });
  after(async () => t?.close());

  test('GET /sandbox/messages: newest first, the documented fields, sentAt in UTC', async () => {
    const r = await t.get('/sandbox/messages');
    assert.equal(r.status, 200);
    const { messages } = r.body;
    assert.equal(messages.length, 4);
    assert.deepEqual(messages.map((m: { to: string }) => m.to), ['01055556666', '01011112222', '01033334444', '01011112222']);
    assert.deepEqual(messages[3], {
      channel: 'ALIMTALK', to: '01011112222',
      text: '[행복 피아노 학원] 청구서 안내\n\n결제하기: https://pay.example/checkout?tid=1&token=a',
      link: 'https://pay.example/checkout?tid=1&token=a', deliveryStatus: 'ACCEPTED', sentAt: '2026-01-15T03:00:00.000Z',
    });
    assert.equal(messages[1].link, null);
    assert.equal(messages[1].deliveryStatus, 'FAILED');
    assert.equal(messages[2].deliveryStatus, 'DELIVERED');
  });

  test('GET /sandbox/messages?phone= filters by recipient; dashes are ignored', async () => {
    let r = await t.get('/sandbox/messages?phone=01011112222');
    assert.deepEqual(r.body.messages.map((m: { text: string }) => m.text.split('\n')[0]), ['세 번째', '[행복 피아노 학원] 청구서 안내']);
    r = await t.get('/sandbox/messages?phone=010-3333-4444');
    assert.equal(r.body.messages.length, 1);
    assert.equal(r.body.messages[0].channel, 'SMS');
    r = await t.get('/sandbox/messages?phone=01099999999');
    assert.deepEqual(r.body, { messages: [] });
    r = await t.get('/sandbox/messages?phone=abc');
    assert.deepEqual(r.body, { messages: [] }, 'a filter without digits matches nothing');
    r = await t.get('/sandbox/messages?limit=2');
    assert.equal(r.body.messages.length, 2);
    r = await t.get('/sandbox/messages?limit=x');
    assert.equal(r.status, 400);
    assert.match(r.body.result_msg, /^limit: /);
  });

  test('GET /sandbox/outbox lists each message with its link, escaped, with line breaks', async () => {
    const r = await t.get('/sandbox/outbox');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.match(r.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const h = r.text;
    assert.ok(h.includes('<a class="btn secondary" href="https://pay.example/checkout?tid&#61;1&#38;token&#61;a">'), 'a clickable link to the payment page');
    assert.ok(h.includes('[행복 피아노 학원] 청구서 안내<br><br>결제하기'), 'line breaks kept');
    assert.ok(h.includes('두 번째 &#60;b&#62;메시지&#60;/b&#62;'), 'text escaped');
    assert.ok(!h.includes('javascript:'), 'only http(s) links become links');
    assert.ok(h.includes('01033334444') && h.includes('알림톡') && h.includes('문자'));
    assert.ok(h.includes('2026-01-15 12:00:00 KST'));
    assert.ok(h.includes('<form method="get" action="/sandbox/outbox"'));
    // Newest first on the page too.
    assert.ok(h.indexOf('링크가 이상한 메시지') < h.indexOf('세 번째'));
    assert.ok(h.indexOf('세 번째') < h.indexOf('두 번째'));
  });

  test('GET /sandbox/outbox?phone= shows one recipient and keeps the filter in the form', async () => {
    const r = await t.get('/sandbox/outbox?phone=010-3333-4444');
    assert.equal(r.status, 200);
    assert.ok(r.text.includes('두 번째'));
    assert.ok(!r.text.includes('세 번째'));
    assert.ok(r.text.includes('value="01033334444"'));
    const none = await t.get('/sandbox/outbox?phone=01000000001');
    assert.ok(none.text.includes('이 번호로 보낸 메시지가 없습니다.'));
  });

  test('both are documented under Sandbox in /docs', async () => {
    const r = await t.get('/docs/json');
    assert.deepEqual(r.body.paths['/sandbox/messages']?.get?.tags, ['Sandbox']);
    assert.deepEqual(r.body.paths['/sandbox/outbox']?.get?.tags, ['Sandbox']);
  });
});
