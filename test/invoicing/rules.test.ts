import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { storedLine } from '../../src/gateway/items.js';
import { canonicalJson, newTransSeqNo, recipients, requestHash } from '../../src/invoicing/creation.js';
import { INVOICE_TRANSITIONS, INVOICE_STATUSES, OPEN_SEND_STATUSES, SEND_STATUSES, SEND_TRANSITIONS } from '../../src/invoicing/invoice-state.js';
import { fillTemplate, gatewayItems, INVOICE_TEMPLATE, invoiceMessage, invoiceVariables, itemView, MESSAGE_ITEMS, netItems, NO_DETAILS } from '../../src/invoicing/items.js';
import { reserveCost, settledCost } from '../../src/invoicing/points.js';
import { maskPhone } from '../../src/invoicing/public.js';
import { parseSince } from '../../src/invoicing/delivery-log.js';
import { AppError } from '../../src/platform/errors.js';
import type { Invoice } from '../../src/invoicing/repository.js';
import { resendRefusal } from '../../src/invoicing/resend.js';
import type { CreateBillBody } from '../../src/invoicing/schemas.js';

/**
 * The invoicing side's rules of money, content and state, each on both sides of its boundary,
 * without a server (the HTTP suites prove the same rules end to end).
 */

const costs = { ALIMTALK: 10, SMS: 30 };

describe('send points', () => {
  test('reserved: the configured channel\'s price; with fallback, the SMS price', () => {
    assert.equal(reserveCost('ALIMTALK', costs), 10);
    assert.equal(reserveCost('SMS', costs), 30);
    assert.equal(reserveCost('ALIMTALK_THEN_SMS', costs), 30);
  });

  test('settled: the price of the channel that carried it, never above the reservation; nothing when nothing carried it', () => {
    assert.equal(settledCost(30, 'ALIMTALK', costs), 10, 'ALIMTALK carried a fallback send: 20 back');
    assert.equal(settledCost(30, 'SMS', costs), 30);
    assert.equal(settledCost(10, 'ALIMTALK', costs), 10);
    assert.equal(settledCost(10, 'SMS', costs), 10, 'never more than was reserved');
    assert.equal(settledCost(30, null, costs), 0);
    assert.equal(settledCost(25, 'SMS', costs), 25);
  });
});

describe('invoice lines', () => {
  const item = (over: Record<string, unknown> = {}) => ({ name: '수강료', price: 10000, ...over }) as never;

  test('nets each line with the gateway rule and checks the sum to the won', () => {
    const r = netItems([item({ qty: 2 }), item({ price: 5000, discountAmount: 10, discountUnit: 'RATE', type: '교재' })], 24500, 'items');
    assert.ok(Array.isArray(r));
    assert.deepEqual((r as ReturnType<typeof storedLine>[]).map((l) => [l.net, l.type, l.qty]), [[20000, null, 2], [4500, '교재', 1]]);
    assert.deepEqual(netItems([item()], 10001, 'items'), { error: 'items: the net sum of the items (10000) must equal the amount (10001)' });
    assert.deepEqual(netItems([item()], 9999, 'recipientItems[2].items'), { error: 'recipientItems[2].items: the net sum of the items (10000) must equal the amount (9999)' });
    assert.deepEqual(netItems([item(), item({ discountAmount: 10001 })], 10000, 'items'), { error: 'items[1].discountAmount: is larger than the line amount' });
    assert.deepEqual(netItems([item({ discountAmount: 101, discountUnit: 'RATE' })], 0, 'items'), { error: 'items[0].discountAmount: a RATE discount must be at most 100' });
  });

  test('as the API shows them, and as the invoice\'s payment gets them', () => {
    const l = storedLine({ name: '교재', unitPrice: 14000, qty: 2, discountAmount: 1000, net: 27000, type: '책' });
    assert.deepEqual(itemView(l), { name: '교재', price: 14000, qty: 2, discountAmount: 1000, discountUnit: 'AMOUNT', type: '책', amount: 27000 });
    assert.deepEqual(gatewayItems([l]), [{ name: '교재', unitPrice: 14000, qty: 2, discountAmount: 1000, discountUnit: 'AMOUNT' }]);
  });
});

describe('the message', () => {
  const base = { businessName: '행복 피아노', receiverName: '홍길동', reason: '11월 수강료', amount: 128000, description: null, link: 'https://pay.example/checkout?tid=1' };
  const lines = (n: number) => Array.from({ length: n }, (_, i) => storedLine({ name: `항목${i + 1}`, unitPrice: 1000, qty: i === 0 ? 2 : 1, net: i === 0 ? 2000 : 1000 }));

  test('the template with every variable filled: business, recipient, reason, amount and the link', () => {
    const text = invoiceMessage({ ...base, items: [] });
    assert.equal(text, ['[행복 피아노] 청구서 안내', '', '홍길동님, 11월 수강료 청구서가 도착했습니다.', '청구 금액: 128,000원', '', NO_DETAILS, '', '결제하기: https://pay.example/checkout?tid=1'].join('\n'));
    assert.ok(!/#\{/.test(text), 'no variable left unfilled');
    for (const v of ['#{상호}', '#{고객명}', '#{청구사유}', '#{청구금액}', '#{청구내용}', '#{결제링크}']) assert.ok(INVOICE_TEMPLATE.includes(v), v);
    assert.equal(NO_DETAILS, '아래 링크에서 카드로 결제하실 수 있습니다.', 'an invoice without items or description still says something');
    // The exact text registered with Kakao: a changed line (even a blank one) needs a new approval.
    assert.equal(INVOICE_TEMPLATE, '[#{상호}] 청구서 안내\n\n#{고객명}님, #{청구사유} 청구서가 도착했습니다.\n청구 금액: #{청구금액}\n\n#{청구내용}\n\n결제하기: #{결제링크}');
  });

  test('at most five items, then how many more; a quantity shows only above 1', () => {
    assert.equal(MESSAGE_ITEMS, 5);
    const five = invoiceVariables({ ...base, items: lines(5) })['#{청구내용}']!;
    assert.equal(five, ['청구 항목', '- 항목1 x2 2,000원', '- 항목2 1,000원', '- 항목3 1,000원', '- 항목4 1,000원', '- 항목5 1,000원'].join('\n'));
    const six = invoiceVariables({ ...base, items: lines(6) })['#{청구내용}']!;
    assert.ok(six.endsWith('- 항목5 1,000원\n외 1건'));
    assert.ok(!six.includes('항목6'));
    assert.ok(invoiceVariables({ ...base, items: lines(12) })['#{청구내용}']!.endsWith('외 7건'));
  });

  test('the description after the items, or alone', () => {
    assert.equal(invoiceVariables({ ...base, items: lines(1), description: '10일까지' })['#{청구내용}'], '청구 항목\n- 항목1 x2 2,000원\n\n10일까지');
    assert.equal(invoiceVariables({ ...base, items: [], description: '10일까지' })['#{청구내용}'], '10일까지');
  });

  test('a value that looks like a variable is left as it is (one pass)', () => {
    assert.equal(fillTemplate('#{a} #{b}', { '#{a}': '#{b}', '#{b}': 'B' }), '#{b} B');
    assert.equal(fillTemplate('#{unknown}', {}), '#{unknown}');
  });
});

describe('one invoice per requestId: the request fingerprint', () => {
  const body = (over: Partial<CreateBillBody> = {}): CreateBillBody => ({ reason: '수강료', amount: 10000, members: [{ studentName: '홍길동', studentPhone: '01012345678' }], ...over });

  test('canonical JSON sorts keys at every depth and drops undefined members', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[2,{"y":2,"z":1}]},"b":1}');
    assert.equal(canonicalJson([3, 'x', null, true]), '[3,"x",null,true]');
  });

  test('the same content hashes the same whatever the key order; spelled-out defaults are the same content', () => {
    const h = requestHash(body());
    assert.match(h, /^[0-9a-f]{64}$/);
    assert.equal(requestHash({ members: [{ studentPhone: '01012345678', studentName: '홍길동' }], amount: 10000, reason: '수강료' }), h);
    assert.equal(requestHash(body({ templateType: 'SAME' })), h);
    assert.equal(requestHash(body({ sendChannel: 'ALIMTALK' })), h);
  });

  test('any other content hashes differently', () => {
    const h = requestHash(body());
    assert.notEqual(requestHash(body({ amount: 10001 })), h);
    assert.notEqual(requestHash(body({ sendChannel: 'SMS' })), h);
    assert.notEqual(requestHash(body({ members: [{ studentName: '홍길동', studentPhone: '01012345679' }] })), h);
    assert.notEqual(requestHash(body({ description: '' })), h);
  });
});

describe('recipients', () => {
  test('SAME: one per member with the shared amount; the guardian\'s number is kept apart', () => {
    const r = recipients({ reason: 'r', amount: 5000, members: [{ studentName: 'a', studentPhone: '01000000001', guardianPhone: '01000000002', classroomId: 7 }, { studentName: 'b', studentPhone: '01000000003' }] });
    assert.deepEqual(r.map((x) => [x.name, x.phone, x.guardianPhone, x.amount, x.classroomId]), [['a', '01000000001', '01000000002', 5000, '7'], ['b', '01000000003', null, 5000, null]]);
  });

  test('SAME needs an amount; INDIVIDUAL needs exactly one entry per member', () => {
    assert.throws(() => recipients({ reason: 'r', members: [{ studentName: 'a', studentPhone: '01000000001' }] }), /amount: is required/);
    const members = [{ studentName: 'a', studentPhone: '01000000001' }, { studentName: 'b', studentPhone: '01000000002' }];
    assert.throws(() => recipients({ reason: 'r', templateType: 'INDIVIDUAL', members }), /recipientItems: is required when templateType is INDIVIDUAL/);
    assert.throws(() => recipients({ reason: 'r', templateType: 'INDIVIDUAL', members, recipientItems: [{ studentName: 'a', studentPhone: '01000000001', amount: 100 }] }), /exactly one entry per member/);
    assert.throws(() => recipients({
      reason: 'r', templateType: 'INDIVIDUAL', members,
      recipientItems: [{ studentName: 'a', studentPhone: '01000000001', amount: 100 }, { studentName: 'a', studentPhone: '01000000001', amount: 200 }],
    }), /members\[0\] needs exactly one entry/);
    const r = recipients({
      reason: 'r', description: 'd', templateType: 'INDIVIDUAL', members,
      recipientItems: [{ studentName: 'b', studentPhone: '01000000002', amount: 200, reason: 'rb' }, { studentName: 'a', studentPhone: '01000000001', amount: 100, description: 'da' }],
    });
    assert.deepEqual(r.map((x) => [x.name, x.amount, x.reason, x.description]), [['a', 100, 'r', 'da'], ['b', 200, 'rb', 'd']]);
  });
});

describe('the invoice and send state machines', () => {
  test('an invoice is paid only while PENDING and cancelled only once DONE', () => {
    assert.deepEqual(INVOICE_STATUSES, ['PENDING', 'DONE', 'CANCELED']);
    assert.deepEqual(INVOICE_TRANSITIONS.paid, { from: ['PENDING'], to: 'DONE' });
    assert.deepEqual(INVOICE_TRANSITIONS.canceled, { from: ['DONE'], to: 'CANCELED' });
  });

  test('a send settles once, from WAITING or ACCEPTING, and only open sends can move', () => {
    assert.deepEqual([...OPEN_SEND_STATUSES], ['WAITING', 'ACCEPTING']);
    for (const [event, t] of Object.entries(SEND_TRANSITIONS)) {
      assert.deepEqual([...t.from], ['WAITING', 'ACCEPTING'], event);
      assert.ok(SEND_STATUSES.includes(t.to));
    }
    assert.equal(SEND_TRANSITIONS.succeeded.to, 'SUCCESS');
    assert.equal(SEND_TRANSITIONS.failed.to, 'FAILED');
    assert.equal(SEND_TRANSITIONS.accepting.to, 'ACCEPTING');
  });
});

describe('resend: what may be sent again', () => {
  const inv = (over: Partial<Invoice> = {}) => ({ id: 1, deleted_at: null, status: 'PENDING', send_count: 1, send_status: 'SENT', ...over }) as Invoice;

  test('an already-sent unpaid invoice, once per request', () => {
    const seen = new Set<number>();
    assert.equal(resendRefusal(inv(), seen), undefined);
    seen.add(1);
    assert.equal(resendRefusal(inv(), seen), 'listed more than once in this request');
  });

  test('every reason to skip', () => {
    const none = new Set<number>();
    assert.equal(resendRefusal(undefined, none), 'not found');
    assert.equal(resendRefusal(inv({ deleted_at: 1 }), none), 'deleted');
    assert.equal(resendRefusal(inv({ status: 'DONE' }), none), 'already paid');
    assert.equal(resendRefusal(inv({ status: 'CANCELED' }), none), 'cancelled');
    assert.equal(resendRefusal(inv({ send_count: 0, send_status: 'WAITING' }), none), 'not sent yet: the first send is in progress');
    assert.equal(resendRefusal(inv({ send_count: 0, send_status: 'FAILED' }), none), 'not sent yet: the first send failed');
  });
});

describe('public lookup', () => {
  test('the middle digits of a number are hidden', () => {
    assert.equal(maskPhone('01012345678'), '010-****-5678');
    assert.equal(maskPhone('0101234567'), '010-***-4567');
    assert.equal(maskPhone('0212345678'), '02-****-5678');
    assert.equal(maskPhone('021234567'), '02-***-4567');
    assert.equal(maskPhone('010-1234-5678'), '010-****-5678');
    assert.equal(maskPhone('12345678'), '123-*-5678');
    assert.equal(maskPhone('1234567'), '*******');
    assert.equal(maskPhone(''), '');
  });

  test('a new transaction number: INV and 24 base32 characters, never the same twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const n = newTransSeqNo();
      assert.match(n, /^INV[A-Z2-7]{24}$/);
      seen.add(n);
    }
    assert.equal(seen.size, 200);
  });
});

describe('the delivery log\'s since', () => {
  const at = Date.UTC(2026, 10, 22, 0, 0, 0);
  test('an ISO 8601 date-time with an offset or Z is read as written; without one, as KST; minutes, seconds and milliseconds', () => {
    assert.equal(parseSince('2026-11-22T09:00:00+09:00'), at);
    assert.equal(parseSince('2026-11-21T19:00:00-05:00'), at);
    assert.equal(parseSince('2026-11-22T00:00:00Z'), at);
    assert.equal(parseSince('2026-11-22T00:00:00z'), at);
    assert.equal(parseSince('2026-11-22T09:00:00'), at, 'no offset: KST');
    assert.equal(parseSince('2026-11-22T09:00'), at);
    assert.equal(parseSince('2026-11-22T09:00:00.123'), at + 123);
    assert.equal(parseSince('2026-11-22T09:00:00.1+09:00'), at + 100);
  });

  test('anything else is refused, naming the field and giving an example', () => {
    const refused = (field: string) => (e: unknown) => e instanceof AppError && e.kind === 'VALIDATION'
      && e.message === `${field}: must be an ISO 8601 date-time such as 2026-11-22T09:00:00+09:00`;
    for (const bad of ['yesterday', '2026-11-22', '2026-11-22 09:00:00', 'Nov 22 2026 09:00', '2026-11-22T09:00:00+0900', '2026-11-22T09:00:00+9:00', '2026-13-22T09:00:00', '',
      'x2026-11-22T09:00:00Z', '2026-11-22T09:00:00Zx', '2026-11-22T09:00:00+09:00x', '2026-11-22T9:00', '2026-11-22T09:0', '2026-11-22T09:00:5', '2026-11-22T09:00:00.', '2026-11-22T09:00:00.1234', '2026-11-22T09:00:00+09:00+09:00']) {
      assert.throws(() => parseSince(bad), refused('since'), JSON.stringify(bad));
    }
    assert.throws(() => parseSince('soon', 'from'), refused('from'));
  });
});
