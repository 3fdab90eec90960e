import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { billBody, newAccount, points, type Login } from './support.js';

/**
 * Every limit of the invoicing, delivery-log and webhook-endpoint inputs on both sides of its
 * boundary (docs/reference.md, "Limits"): the value at the limit is accepted, the value one past
 * it is refused with 400 / -20 and the words that name the field and say what it takes, and a
 * refused call changes nothing.
 */
forEachEngine('invoicing input limits', (engine) => {
  const t = withApp(engine);
  let a: Login;
  before(async () => {
    a = await newAccount(t, { points: 1_000_000 });
  });

  const refusedWith = (r: { status: number; body: any }, msg: string, what: string) => {
    assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.result_code, -20, what);
    if (msg.endsWith(': ')) assert.ok(String(r.body.result_msg).startsWith(msg), `${what}: ${r.body.result_msg}`);
    else assert.equal(r.body.result_msg, msg, what);
  };
  const count = async () => (await t.get('/app/v1/sales/bill', a.h)).body.result_data.totalCount as number;

  const member = (over: Record<string, unknown> = {}) => ({ studentName: '홍길동', studentPhone: '01012345678', ...over });
  const item = (over: Record<string, unknown> = {}) => ({ name: '레슨', price: 128000, ...over });
  const individual = (entry: Record<string, unknown>) => billBody({ templateType: 'INDIVIDUAL', amount: undefined, recipientItems: [{ ...member(), amount: 128000, ...entry }] });
  const AMOUNT = 'must be a whole number of won from 100 (the minimum amount is 100 won) to 2147483647';
  // [rule, a body at the limit (accepted), a body one past it, the answer's words]
  const creation: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    ['amount from 100', billBody({ amount: 100 }), billBody({ amount: 99 }), `amount: ${AMOUNT}`],
    ['amount up to 2147483647', billBody({ amount: 2_147_483_647 }), billBody({ amount: 2_147_483_648 }), `amount: ${AMOUNT}`],
    ['items[].price from 100', billBody({ amount: 100, items: [item({ price: 100 })] }), billBody({ amount: 128000, items: [item({ price: 99 })] }),
      'items[0].price: must be a whole number of won from 100 to 2147483647'],
    ['items[].qty from 1', billBody({ items: [item({ qty: 1 })] }), billBody({ items: [item({ qty: 0 })] }), 'items[0].qty: must be at least 1'],
    ['items[].qty up to 100000', billBody({ amount: 10_000_000, items: [item({ price: 100, qty: 100_000 })] }),
      billBody({ amount: 10_000_100, items: [item({ price: 100, qty: 100_001 })] }), 'items[0].qty: must be at most 100000'],
    ['items[].discountAmount from 0, AMOUNT named', billBody({ amount: 127000, items: [item({ discountAmount: 1000, discountUnit: 'AMOUNT' })] }),
      billBody({ items: [item({ discountAmount: -1 })] }), 'items[0].discountAmount: must be at least 0'],
    ['items[].type up to 20', billBody({ items: [item({ type: 't'.repeat(20) })] }), billBody({ items: [item({ type: 't'.repeat(21) })] }), 'items[0].type: must be at most 20 characters'],
    ['items up to 100 lines', billBody({ amount: 10_000, items: Array.from({ length: 100 }, () => item({ price: 100 })) }),
      billBody({ amount: 10_100, items: Array.from({ length: 101 }, () => item({ price: 100 })) }), 'items: must have at most 100 entries'],
    ['reason up to 60', billBody({ reason: 'ㄱ'.repeat(60) }), billBody({ reason: 'ㄱ'.repeat(61) }), 'reason: must be at most 60 characters'],
    ['reason not empty', billBody({ reason: 'ㄱ' }), billBody({ reason: '' }), 'reason: must not be empty'],
    ['description up to 200', billBody({ description: 'ㄱ'.repeat(200) }), billBody({ description: 'ㄱ'.repeat(201) }), 'description: must be at most 200 characters'],
    ['studentName up to 30', billBody({ members: [member({ studentName: 'ㄱ'.repeat(30) })] }), billBody({ members: [member({ studentName: 'ㄱ'.repeat(31) })] }),
      'members[0].studentName: must be at most 30 characters'],
    ['studentPhone from 10 digits', billBody({ members: [member({ studentPhone: '0101234567' })] }), billBody({ members: [member({ studentPhone: '010123456' })] }),
      'members[0].studentPhone: must be 10 to 11 digits'],
    ['guardianPhone up to 11 digits', billBody({ members: [member({ guardianPhone: '01098765432' })] }), billBody({ members: [member({ guardianPhone: '010987654321' })] }),
      'members[0].guardianPhone: must be 10 to 11 digits'],
    ['studentBirthDate up to 20', billBody({ members: [member({ studentBirthDate: '2'.repeat(20) })] }), billBody({ members: [member({ studentBirthDate: '2'.repeat(21) })] }),
      'members[0].studentBirthDate: must be at most 20 characters'],
    ['classroomId text up to 64, or a number', billBody({ members: [member({ classroomId: 'c'.repeat(64) }), member({ studentPhone: '01011112222', classroomId: 7 })] }),
      billBody({ members: [member({ classroomId: 'c'.repeat(65) })] }), 'members[0].classroomId: '],
    ['requestId from 8', billBody({ requestId: 'abcd_-12' }), billBody({ requestId: 'abcd_-1' }), 'requestId: must be 8 to 64 letters, digits, _ or -'],
    ['requestId up to 64', billBody({ requestId: 'r'.repeat(64) }), billBody({ requestId: 'r'.repeat(65) }), 'requestId: must be 8 to 64 letters, digits, _ or -'],
    ['webhookUrl up to 500', billBody({ webhookUrl: `https://academy.example.com/${'h'.repeat(472)}` }), billBody({ webhookUrl: `https://academy.example.com/${'h'.repeat(473)}` }),
      'webhookUrl: must be at most 500 characters'],
    ['webhookSecret from 16', billBody({ webhookUrl: 'https://academy.example.com/hooks', webhookSecret: '!'.repeat(16) }),
      billBody({ webhookUrl: 'https://academy.example.com/hooks', webhookSecret: '!'.repeat(15) }), 'webhookSecret: must be 16 to 128 printable ASCII characters without spaces'],
    ['webhookSecret up to 128', billBody({ webhookUrl: 'https://academy.example.com/hooks', webhookSecret: '~'.repeat(128) }),
      billBody({ webhookUrl: 'https://academy.example.com/hooks', webhookSecret: '~'.repeat(129) }), 'webhookSecret: must be 16 to 128 printable ASCII characters without spaces'],
    ['relatedSubject up to 100', billBody({ relatedSubject: 's'.repeat(100) }), billBody({ relatedSubject: 's'.repeat(101) }), 'relatedSubject: must be at most 100 characters'],
    ['etc up to 500', billBody({ etc: 'e'.repeat(500) }), billBody({ etc: 'e'.repeat(501) }), 'etc: must be at most 500 characters'],
    ['templateType SAME named', billBody({ templateType: 'SAME' }), billBody({ templateType: 'same' }), 'templateType: '],
    ['sendChannel SMS named', billBody({ sendChannel: 'SMS' }), billBody({ sendChannel: 'sms' }), 'sendChannel: '],
    ['recipientItems[].reason up to 60', individual({ reason: 'ㄱ'.repeat(60) }), individual({ reason: 'ㄱ'.repeat(61) }), 'recipientItems[0].reason: must be at most 60 characters'],
    ['recipientItems[].description up to 200', individual({ description: 'ㄱ'.repeat(200) }), individual({ description: 'ㄱ'.repeat(201) }),
      'recipientItems[0].description: must be at most 200 characters'],
    ['recipientItems[].amount up to 2147483647', individual({ amount: 2_147_483_647 }), individual({ amount: 2_147_483_648 }), `recipientItems[0].amount: ${AMOUNT}`],
    ['recipientItems[].studentName up to 30', billBody({ templateType: 'INDIVIDUAL', amount: undefined, members: [member({ studentName: 'ㄱ'.repeat(30) })],
      recipientItems: [{ ...member({ studentName: 'ㄱ'.repeat(30) }), amount: 1000 }] }), individual({ studentName: 'ㄱ'.repeat(31) }), 'recipientItems[0].studentName: must be at most 30 characters'],
  ];
  test('recipientItems: 1 to 1000 entries; webhookUrl: another scheme is refused by its own words', async () => {
    const n0 = await count();
    refusedWith(await t.post('/app/v1/sales/bill', billBody({ templateType: 'INDIVIDUAL', recipientItems: [] }), a.h), 'recipientItems: must have at least 1 entry', 'none');
    const many = Array.from({ length: 1001 }, () => ({ ...member(), amount: 1000 }));
    refusedWith(await t.post('/app/v1/sales/bill', billBody({ templateType: 'INDIVIDUAL', recipientItems: many }), a.h), 'recipientItems: must have at most 1000 entries', '1001');
    refusedWith(await t.post('/app/v1/sales/bill', billBody({ webhookUrl: 'ftp://academy.example.com/hooks' }), a.h), 'webhookUrl: must start with https://', 'ftp');
    assert.equal(await count(), n0);
  });

  for (const [rule, accepted, refused, msg] of creation) {
    test(`creation, both sides: ${rule}`, async () => {
      const [n0, p0] = [await count(), await points(t, a)];
      refusedWith(await t.post('/app/v1/sales/bill', refused, a.h), msg, 'one past the limit');
      assert.deepEqual([await count(), await points(t, a)], [n0, p0], 'a refused request changes nothing');
      const r = await t.post('/app/v1/sales/bill', accepted, a.h);
      assert.equal(r.body.result_code, 0, `at the limit: ${JSON.stringify(r.body)}`);
      assert.equal(await count(), n0 + (accepted.members as unknown[]).length);
    });
  }

  test('billTemplateId: up to 100 characters it is looked up (an unknown template), past it refused as too long', async () => {
    const looked = await t.post('/app/v1/sales/bill', billBody({ billTemplateId: 'b'.repeat(100) }), a.h);
    assert.equal(looked.status, 400);
    assert.match(looked.body.result_msg, /^billTemplateId: no template b{100} in this account/);
    const long = await t.post('/app/v1/sales/bill', billBody({ billTemplateId: 'b'.repeat(101) }), a.h);
    assert.equal(long.status, 400);
    assert.match(long.body.result_msg, /^billTemplateId: /);
    assert.doesNotMatch(long.body.result_msg, /no template/, 'the length is refused before any lookup');
  });

  test('the list query: page from 1 with up to 9 digits, size 1 to 100, month yyyy-MM', async () => {
    for (const q of ['page=1', 'page=999999999', 'size=1', 'size=100', 'month=2026-01', 'month=2026-12']) {
      assert.equal((await t.get(`/app/v1/sales/bill?${q}`, a.h)).status, 200, q);
    }
    for (const [q, msg] of [['page=0', 'page: must be a whole number from 1'], ['page=1000000000', 'page: must be a whole number from 1'],
      ['size=0', 'size: must be a whole number from 1 to 100'], ['size=101', 'size: must be a whole number from 1 to 100'],
      ['month=2026-00', 'month: must be yyyy-MM'], ['month=2026-13', 'month: must be yyyy-MM'], ['month=26-11', 'month: must be yyyy-MM']]) {
      refusedWith(await t.get(`/app/v1/sales/bill?${q}`, a.h), msg, q);
    }
    assert.equal((await t.get('/app/v1/sales/summary?month=2026-12', a.h)).status, 200);
    refusedWith(await t.get('/app/v1/sales/summary?month=2026-13', a.h), 'month: must be yyyy-MM', 'summary');
  });

  test('an invoice id up to 64 characters is looked up (404 / -10), past it refused (400 / -20)', async () => {
    const lookedUp = await t.get(`/app/v1/sales/bill/${'9'.repeat(64)}`, a.h);
    assert.deepEqual([lookedUp.status, lookedUp.body.result_code], [404, -10]);
    refusedWith(await t.get(`/app/v1/sales/bill/${'9'.repeat(65)}`, a.h), 'id: must be at most 64 characters', 'a long id');
  });

  test('resend: 1 to 100 ids of up to 64 characters', async () => {
    const ok = await t.post('/app/v1/sales/bill/resend', { billIds: Array.from({ length: 100 }, (_, i) => (i % 2 ? i : 'x'.repeat(64))) }, a.h);
    assert.equal(ok.body.result_code, 0, JSON.stringify(ok.body).slice(0, 300));
    refusedWith(await t.post('/app/v1/sales/bill/resend', { billIds: [] }, a.h), 'billIds: must have at least 1 entry', 'none');
    refusedWith(await t.post('/app/v1/sales/bill/resend', { billIds: Array.from({ length: 101 }, (_, i) => i + 1) }, a.h), 'billIds: must have at most 100 entries', '101');
    refusedWith(await t.post('/app/v1/sales/bill/resend', { billIds: ['x'.repeat(65)] }, a.h), 'billIds[0]: ', 'a long id');
  });

  test('log in: email up to 254 and password up to 200 characters are checked as credentials; longer is refused as input', async () => {
    const asked = await t.post('/app/v1/auth/login', { email: `${'e'.repeat(242)}@example.com`, password: 'p'.repeat(200), loginType: 'EMAIL' });
    assert.notEqual(asked.status, 400, JSON.stringify(asked.body));
    refusedWith(await t.post('/app/v1/auth/login', { email: `${'e'.repeat(243)}@example.com`, password: 'x' }), 'email: must be at most 254 characters', 'email');
    refusedWith(await t.post('/app/v1/auth/login', { email: 'a@example.com', password: 'p'.repeat(201) }), 'password: must be at most 200 characters', 'password');
    refusedWith(await t.post('/app/v1/auth/login', { email: 'a@example.com', password: 'x', loginType: 'PHONE' }), 'loginType: ', 'loginType');
    const asRefresh = await t.post('/app/v1/auth/refresh', { refreshToken: 'r'.repeat(200) });
    assert.notEqual(asRefresh.status, 400, JSON.stringify(asRefresh.body));
    refusedWith(await t.post('/app/v1/auth/refresh', { refreshToken: 'r'.repeat(201) }), 'refreshToken: must be at most 200 characters', 'refresh');
  });

  test('the delivery log query: kind, status, since of 16 to 40 characters (the form checked past the length), numbers up to 64, a cursor up to 200, size 1 to 100', async () => {
    // A time with n characters in all: more digits of a second than the form allows, past 29.
    const since = (n: number) => `2026-11-22T09:00:00.${'0'.repeat(n - 26)}+09:00`;
    assert.deepEqual([since(40).length, since(41).length], [40, 41]);
    for (const q of ['kind=callback', 'kind=webhook', 'status=pending', 'status=delivered', 'status=failed', 'since=2026-11-22T09:00',
      `since=${encodeURIComponent('2026-11-22T09:00:00.000+09:00')}`, `transSeqNo=${'T'.repeat(64)}`, `billId=${'b'.repeat(64)}`, 'size=1', 'size=100']) {
      assert.equal((await t.get(`/app/v1/deliveries?${q}`, a.h)).status, 200, q);
    }
    for (const [q, msg] of [['kind=email', 'kind: must be one of callback, webhook'], ['status=lost', 'status: must be one of pending, delivered, failed'],
      ['since=2026-11-22T09', 'since: must be at least 16 characters'], [`since=${encodeURIComponent(since(40))}`, 'since: must be an ISO 8601 date-time such as 2026-11-22T09:00:00+09:00'],
      [`since=${encodeURIComponent(since(41))}`, 'since: must be at most 40 characters'],
      [`transSeqNo=${'T'.repeat(65)}`, 'transSeqNo: must be at most 64 characters'], ['transSeqNo=', 'transSeqNo: must not be empty'],
      [`billId=${'b'.repeat(65)}`, 'billId: must be at most 64 characters'], [`cursor=${'c'.repeat(201)}`, 'cursor: must be at most 200 characters'],
      ['size=0', 'size: must be a whole number from 1 to 100'], ['size=101', 'size: must be a whole number from 1 to 100']]) {
      refusedWith(await t.get(`/app/v1/deliveries?${q}`, a.h), msg, q);
    }
    const id = `dlv_${'a'.repeat(32)}`;
    assert.equal((await t.get(`/app/v1/deliveries/${id}`, a.h)).status, 404);
    for (const bad of [`dlv_${'a'.repeat(31)}`, `dlv_${'A'.repeat(32)}`, `we_${'a'.repeat(32)}`]) {
      refusedWith(await t.get(`/app/v1/deliveries/${bad}`, a.h), 'id: must be a delivery id (dlv_ and 32 hex digits)', bad);
    }
    refusedWith(await t.post('/app/v1/deliveries/recover', { since: '2026-11-22T09' }, a.h), 'since: must be at least 16 characters', 'recover');
  });

  test('webhook endpoints: an https url up to 500 characters, 1 to 4 known events, enabled true or false, ids we_ and 32 hex digits', async () => {
    const s = await newAccount(t, { storeCode: await t.addStore() });
    const url = (n: number) => `https://academy.example.com/${'h'.repeat(n - 'https://academy.example.com/'.length)}`;
    const all = ['bill.paid', 'bill.canceled', 'payment.approved', 'payment.canceled'];
    const made = await t.post('/app/v1/webhook-endpoints', { url: url(500), events: all }, s.h);
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id = made.body.result_data.id as string;
    for (const [body, msg] of [[{ url: url(501), events: ['bill.paid'] }, 'url: must be at most 500 characters'],
      [{ url: 'http://academy.example.com/h', events: ['bill.paid'] }, 'url: must start with https://'],
      [{ url: url(40), events: [] }, 'events: must have at least 1 entry'],
      [{ url: url(40), events: [...all, 'bill.paid'] }, 'events: must have at most 4 entries'],
      [{ url: url(40), events: ['bill.lost'] }, 'events[0]: must be one of bill.paid, bill.canceled, payment.approved, payment.canceled']] as const) {
      refusedWith(await t.post('/app/v1/webhook-endpoints', body, s.h), msg, JSON.stringify(body).slice(0, 60));
    }
    assert.equal((await t.get('/app/v1/webhook-endpoints', s.h)).body.result_data.length, 1, 'nothing more registered');
    refusedWith(await t.request('PATCH', `/app/v1/webhook-endpoints/${id}`, { enabled: 'no' }, s.h), 'enabled: must be true or false', 'enabled');
    assert.equal((await t.request('PATCH', `/app/v1/webhook-endpoints/${id}`, { enabled: false }, s.h)).body.result_data.enabled, false);
    assert.equal((await t.get(`/app/v1/webhook-endpoints/we_${'0'.repeat(32)}`, s.h)).status, 404);
    for (const bad of [`we_${'0'.repeat(31)}`, `we_${'F'.repeat(32)}`]) {
      refusedWith(await t.get(`/app/v1/webhook-endpoints/${bad}`, s.h), 'id: must be an endpoint id (we_ and 32 hex digits)', bad);
    }
  });
});
