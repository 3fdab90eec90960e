import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createInvoices } from '../../src/invoicing/creation.js';
import type { CreateBillBody } from '../../src/invoicing/schemas.js';
import { AppError } from '../../src/platform/errors.js';
import { merchantUrlPolicy } from '../../src/platform/urls.js';
import { forEachEngine, startApp, type TestApp } from '../helpers/app.js';
import { afterEachRead } from '../helpers/db.js';
import { docExample } from '../helpers/openapi.js';
import { accountRow, billBody, createOne, ledgerMatches, newAccount, points, waitSent, type Login } from './support.js';

const KST_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

function expectError(r: { status: number; body: any }, status: number, code: number, msgStart?: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.result_code, code, JSON.stringify(r.body));
  assert.equal(r.body.result_data, null);
  if (msgStart) assert.ok(String(r.body.result_msg).startsWith(msgStart), `"${r.body.result_msg}" should start with "${msgStart}"`);
}

forEachEngine('invoices', (engine) => {
  let t: TestApp;
  let a: Login;
  before(async () => {
    t = await startApp(engine);
    a = await newAccount(t, { points: 100_000 });
  });
  after(async () => t?.close());

  const create = (body: unknown, who: Login = a) => t.post('/app/v1/sales/bill', body, who.h);

  test('every limit and rule of the creation input: 400 / -20 naming the field, nothing created', async () => {
    const before = await points(t, a);
    const count = async () => (await t.get('/app/v1/sales/bill', a.h)).body.result_data.totalCount;
    const n0 = await count();
    const member = { studentName: '홍길동', studentPhone: '01012345678' };
    const item = (over: Record<string, unknown> = {}) => ({ name: '레슨', price: 128000, ...over });
    const cases: [Record<string, unknown>, string][] = [
      [billBody({ reason: undefined }), 'reason: is required'],
      [billBody({ reason: '' }), 'reason:'],
      [billBody({ reason: 'ㄱ'.repeat(61) }), 'reason: must be at most 60 characters'],
      [billBody({ description: 'ㄱ'.repeat(201) }), 'description: must be at most 200 characters'],
      [billBody({ amount: 99 }), 'amount:'],
      [billBody({ amount: 2147483648 }), 'amount:'],
      [billBody({ amount: 1000.5 }), 'amount:'],
      [billBody({ amount: '128000' }), 'amount:'],
      [billBody({ amount: undefined }), 'amount: is required'],
      [billBody({ members: [] }), 'members: must have at least 1 entry'],
      [billBody({ members: Array.from({ length: 1001 }, () => member) }), 'members: must have at most 1000 entries'],
      [billBody({ members: undefined }), 'members: is required'],
      [billBody({ members: [{ ...member, studentName: 'ㄱ'.repeat(31) }] }), 'members[0].studentName: must be at most 30 characters'],
      [billBody({ members: [{ ...member, studentName: '' }] }), 'members[0].studentName:'],
      [billBody({ members: [member, { ...member, studentPhone: '010-1234-5678' }] }), 'members[1].studentPhone: must be 10 to 11 digits'],
      [billBody({ members: [{ ...member, studentPhone: '012345678' }] }), 'members[0].studentPhone:'],
      [billBody({ members: [{ ...member, guardianPhone: '0101234567890' }] }), 'members[0].guardianPhone:'],
      [billBody({ items: [] }), 'items: must have at least 1 entry'],
      [billBody({ amount: 101 * 100, items: Array.from({ length: 101 }, () => item({ price: 100 })) }), 'items: must have at most 100 entries'],
      [billBody({ items: [item({ price: 99 })] }), 'items[0].price:'],
      [billBody({ items: [item({ name: 'ㄱ'.repeat(21) })] }), 'items[0].name: must be at most 20 characters'],
      [billBody({ items: [item({ name: '' })] }), 'items[0].name:'],
      [billBody({ items: [item({ type: 'x'.repeat(21) })] }), 'items[0].type:'],
      [billBody({ items: [item({ discountUnit: 'PERCENT' })] }), 'items[0].discountUnit:'],
      [billBody({ items: [item({ price: 100000 })] }), 'items: the net sum of the items (100000) must equal the amount (128000)'],
      [billBody({ items: [item({ discountAmount: 101, discountUnit: 'RATE' })] }), 'items[0].discountAmount:'],
      [billBody({ webhookUrl: 'http://example.com/hook' }), 'webhookUrl: must start with https://'],
      [billBody({ webhookUrl: `https://example.com/${'x'.repeat(481)}` }), 'webhookUrl: must be at most 500 characters'],
      [billBody({ webhookUrl: 'https://example.com/hook', webhookSecret: 'short-secret' }), 'webhookSecret:'],
      [billBody({ webhookUrl: 'https://example.com/hook', webhookSecret: 'has a space in it ok' }), 'webhookSecret:'],
      [billBody({ webhookSecret: 'whsec_0123456789abcdef' }), 'webhookSecret: may only be given together with webhookUrl'],
      [billBody({ requestId: 'short' }), 'requestId:'],
      [billBody({ requestId: 'has space 123' }), 'requestId:'],
      [billBody({ sendChannel: 'FAX' }), 'sendChannel:'],
      [billBody({ templateType: 'OTHER' }), 'templateType:'],
      [billBody({ templateType: 'INDIVIDUAL' }), 'recipientItems: is required when templateType is INDIVIDUAL'],
      [billBody({ templateType: 'INDIVIDUAL', recipientItems: [{ studentName: '다른사람', studentPhone: '01012345678', amount: 1000 }] }), 'recipientItems: members[0] needs exactly one entry'],
      [billBody({ templateType: 'INDIVIDUAL', recipientItems: [{ ...member, studentPhone: '01099998888', amount: 1000 }] }), 'recipientItems: members[0] needs exactly one entry with the same studentName and studentPhone'],
      [billBody({ templateType: 'INDIVIDUAL', reason: undefined, recipientItems: [{ ...member, amount: 1000 }] }), 'reason: is required (or recipientItems[0].reason)'],
      [billBody({ templateType: 'INDIVIDUAL', recipientItems: [{ ...member, amount: 99 }] }), 'recipientItems[0].amount:'],
      [billBody({ templateType: 'INDIVIDUAL', recipientItems: [{ ...member, amount: 5000, items: [item({ price: 4000 })] }] }), 'recipientItems[0].items: the net sum'],
    ];
    for (const [body, msg] of cases) expectError(await create(body), 400, -20, msg);
    expectError(await t.post('/app/v1/sales/bill', '{"reason":', { ...a.h, 'content-type': 'application/json' }), 400, -20);
    expectError(await t.post('/app/v1/sales/bill', '[1,2]', { ...a.h, 'content-type': 'application/json' }), 400, -20);
    assert.equal(await points(t, a), before);
    assert.equal(await count(), n0);
  });

  test('SDK-style nulls are accepted as absent', async () => {
    const r = await create({
      templateType: 'SAME', requestId: null, billTemplateId: null, reason: '12월 수강료', description: null, amount: 150000,
      sendChannel: null, webhookUrl: null, webhookSecret: null, relatedSubject: null, etc: null, recipientItems: null,
      members: [{ studentName: '김철수', studentPhone: '01022223333', guardianPhone: null, studentBirthDate: null, classroomId: null }],
      items: [
        { name: '피아노 레슨', price: 120000, qty: null, discountAmount: null, discountUnit: null, type: null },
        { name: '교재비', price: 30000, qty: 1, discountAmount: null, discountUnit: null, type: null },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { result_code: 0, result_msg: 'SUCCESS', result_data: null });
    const list = await t.get('/app/v1/sales/bill?size=1', a.h);
    const bill = list.body.result_data.bills[0];
    assert.equal(bill.reason, '12월 수강료');
    assert.equal(bill.amount, 150000);
    assert.equal(bill.sendChannel, 'ALIMTALK');
    assert.equal(bill.requestId, null);
  });

  test('items: discounts (AMOUNT, RATE floored), qty, type, stored and shown in the detail', async () => {
    // 333 × 3 = 999, 10 % → 99.9 floored to 99 → 900; 5000 − 1000 = 4000; 100 × 2 = 200 → 5100
    const id = await createOne(t, a, {
      amount: 5100, items: [
        { name: '연필', price: 333, qty: 3, discountAmount: 10, discountUnit: 'RATE', type: '문구' },
        { name: '교재', price: 5000, discountAmount: 1000 },
        { name: '지우개', price: 100, qty: 2, discountAmount: 0, discountUnit: 'AMOUNT' },
      ],
    });
    const d = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
    assert.deepEqual(d.bill.items, [
      { name: '연필', price: 333, qty: 3, discountAmount: 10, discountUnit: 'RATE', type: '문구', amount: 900 },
      { name: '교재', price: 5000, qty: 1, discountAmount: 1000, discountUnit: 'AMOUNT', type: null, amount: 4000 },
      { name: '지우개', price: 100, qty: 2, discountAmount: 0, discountUnit: 'AMOUNT', type: null, amount: 200 },
    ]);
  });

  test('INDIVIDUAL: per-recipient amount, items, reason; top-level amount may be omitted', async () => {
    const r = await create({
      templateType: 'INDIVIDUAL', reason: '1월 수강료',
      members: [
        { studentName: '가나다', studentPhone: '01011110001' },
        { studentName: '라마바', studentPhone: '01011110002', guardianPhone: '01099990002' },
      ],
      recipientItems: [
        { studentName: '라마바', studentPhone: '01011110002', amount: 70000, reason: '1월 수강료 (주 2회)', description: '형제 할인 적용' },
        { studentName: '가나다', studentPhone: '01011110001', amount: 50000, items: [{ name: '레슨', price: 40000 }, { name: '교재', price: 10000 }] },
      ],
    });
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const bills = (await t.get('/app/v1/sales/bill?size=2', a.h)).body.result_data.bills;
    const byName = Object.fromEntries(bills.map((b: any) => [b.receiver.name, b]));
    assert.equal(byName['가나다'].amount, 50000);
    assert.equal(byName['가나다'].reason, '1월 수강료');
    assert.equal(byName['가나다'].templateType, 'INDIVIDUAL');
    assert.equal(byName['라마바'].amount, 70000);
    assert.equal(byName['라마바'].reason, '1월 수강료 (주 2회)');
    assert.deepEqual(byName['라마바'].receiver, { name: '라마바', phone: '01011110002' });
    const d1 = (await t.get(`/app/v1/sales/bill/${byName['가나다'].uniqueId}`, a.h)).body.result_data;
    assert.deepEqual(d1.bill.items.map((i: any) => i.name), ['레슨', '교재']);
    const d2 = (await t.get(`/app/v1/sales/bill/${byName['라마바'].uniqueId}`, a.h)).body.result_data;
    assert.equal(d2.bill.description, '형제 할인 적용');
    assert.deepEqual(d2.bill.items, []);
  });

  test('creation says whether it made anything (the worker is woken only then): a new request yes, its repeat no', async () => {
    const b = await newAccount(t, { points: 1000 });
    const db = t.app.sunap.database.db;
    const account = await accountRow(t, b);
    const deps = { clock: t.app.sunap.clock, box: t.app.sunap.box, costs: t.app.sunap.config.costs, webhookUrlPolicy: merchantUrlPolicy('sandbox') };
    const body = billBody({ requestId: `made-${engine}-0001` }) as CreateBillBody;
    assert.equal(await createInvoices(db, deps, account, body), true);
    assert.equal(await createInvoices(db, deps, account, body), false);
    assert.equal(await createInvoices(db, deps, account, billBody() as CreateBillBody), true, 'without a requestId every request is new');
    assert.equal((await t.get('/app/v1/sales/bill', b.h)).body.result_data.totalCount, 2);
    assert.equal(await createInvoices(db, deps, account, billBody({ etc: '3반' }) as CreateBillBody), true);
    const rows = await db.selectFrom('invoices').select(['request_id', 'request_hash', 'etc']).where('account_id', '=', b.accountId).orderBy('id').execute();
    assert.deepEqual(rows.map((r) => [r.request_id, r.request_hash === null, r.etc]), [[`made-${engine}-0001`, false, null], [null, true, null], [null, true, '3반']],
      'a hash is kept only with a requestId; etc as given, or null');
  });

  test('a repeat that commits between the check and the insert (a concurrent request): same content answers as done, other content -22; nothing doubled', async () => {
    const db = t.app.sunap.database.db;
    const deps = { clock: t.app.sunap.clock, box: t.app.sunap.box, costs: t.app.sunap.config.costs, webhookUrlPolicy: merchantUrlPolicy('sandbox') };
    for (const same of [true, false]) {
      const b = await newAccount(t, { points: 1000 });
      const account = await accountRow(t, b);
      const body = billBody({ requestId: `raced-${engine}-${same}` }) as CreateBillBody;
      let raced = false;
      // Right after the request's first read (its check for an earlier request), the concurrent one commits.
      const racing = afterEachRead(db, async () => {
        if (!raced) {
          raced = true;
          assert.equal(await createInvoices(db, deps, account, same ? body : { ...body, amount: 129000 }), true);
        }
      });
      const made = createInvoices(racing, deps, account, body);
      if (same) assert.equal(await made, false);
      else await assert.rejects(made, (e) => e instanceof AppError && e.kind === 'IDEMPOTENCY_CONFLICT');
      assert.equal(raced, true);
      assert.equal((await t.get('/app/v1/sales/bill', b.h)).body.result_data.totalCount, 1);
      assert.equal(await points(t, b), 1000 - deps.costs.ALIMTALK, 'one reservation');
    }
  });

  test('requestId: the same content creates nothing new; other content -22; several members -23', async () => {
    const b = await newAccount(t, { points: 1000 });
    const body = billBody({ requestId: `order-${engine}-0001` });
    assert.equal((await create(body, b)).body.result_code, 0);
    const again = await create({ ...body, description: body.description, sendChannel: 'ALIMTALK', templateType: 'SAME' }, b);
    assert.deepEqual(again.body, { result_code: 0, result_msg: 'SUCCESS', result_data: null });
    const list = (await t.get('/app/v1/sales/bill', b.h)).body.result_data;
    assert.equal(list.totalCount, 1);
    assert.equal(list.bills[0].requestId, `order-${engine}-0001`);
    assert.equal(await points(t, b), 990);
    expectError(await create({ ...body, amount: 129000 }, b), 400, -22, 'requestId: a different invoice cannot be sent with the same requestId');
    // A used requestId with several members is refused for having several members, before it is compared.
    expectError(await create({ ...body, members: [{ studentName: '갑', studentPhone: '01011112222' }, { studentName: '을', studentPhone: '01011113333' }] }, b), 400, -23,
      'requestId: idempotent sending supports one recipient only');
    expectError(await create(billBody({
      requestId: `order-${engine}-0002`,
      members: [{ studentName: '갑', studentPhone: '01011112222' }, { studentName: '을', studentPhone: '01011113333' }],
    }), b), 400, -23, 'requestId: idempotent sending supports one recipient only');
    // The same requestId is free for another account.
    const c = await newAccount(t, { points: 100 });
    assert.equal((await create(body, c)).body.result_code, 0);
    assert.equal((await t.get('/app/v1/sales/bill', c.h)).body.result_data.totalCount, 1);
  });

  test('20 concurrent duplicates: exactly one invoice and one deduction', async () => {
    const b = await newAccount(t, { points: 1000 });
    const body = billBody({ requestId: `race-${engine}-${Date.now()}` });
    const rs = await Promise.all(Array.from({ length: 20 }, () => create(body, b)));
    for (const r of rs) assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const db = t.app.sunap.database.db;
    const invoices = await db.selectFrom('invoices').select('id').where('account_id', '=', b.accountId).execute();
    assert.equal(invoices.length, 1);
    const reserves = await db.selectFrom('ledger').select('delta').where('account_id', '=', b.accountId).where('kind', '=', 'RESERVE').execute();
    assert.equal(reserves.length, 1);
    assert.equal(await points(t, b), 990);
    const sends = await db.selectFrom('sends').select('id').where('account_id', '=', b.accountId).execute();
    assert.equal(sends.length, 1);
    await waitSent(t, b, (await t.get('/app/v1/sales/bill', b.h)).body.result_data.bills[0].uniqueId);
    const sum = await ledgerMatches(t, b.accountId);
    assert.equal(sum.balance, sum.ledger);
  });

  test('1000 members in one request: 1000 invoices, one send each, points for all', async () => {
    const b = await newAccount(t, { points: 10_000 });
    const members = Array.from({ length: 1000 }, (_, i) => ({ studentName: `학생${i}`, studentPhone: `0105${String(i + 1).padStart(7, '0')}` }));
    const started = Date.now();
    const r = await create(billBody({ members }), b);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    assert.ok(Date.now() - started < 15_000, 'creation stays well within a request timeout');
    assert.equal((await t.get('/app/v1/sales/bill?size=1', b.h)).body.result_data.totalCount, 1000);
    const db = t.app.sunap.database.db;
    const sends = await db.selectFrom('sends').select('id').where('account_id', '=', b.accountId).execute();
    assert.equal(sends.length, 1000);
    const trans = await db.selectFrom('invoices').select('trans_seqno').where('account_id', '=', b.accountId).execute();
    assert.equal(new Set(trans.map((x) => x.trans_seqno)).size, 1000);
    const sum = await ledgerMatches(t, b.accountId);
    assert.equal(sum.balance, sum.ledger);
    // 10,000 points for 1000 ALIMTALK recipients: none left for one more.
    expectError(await create(billBody({ members: members.slice(0, 1) }), b), 409, -21);
  });

  test('insufficient points: 409 / -21 for the whole request, nothing taken or created', async () => {
    const b = await newAccount(t, { points: 25 });
    const three = billBody({ members: [1, 2, 3].map((i) => ({ studentName: `학생${i}`, studentPhone: `0101234000${i}` })) });
    expectError(await create(three, b), 409, -21, 'points: insufficient send points');
    assert.equal(await points(t, b), 25);
    assert.equal((await t.get('/app/v1/sales/bill', b.h)).body.result_data.totalCount, 0);
    // SMS and ALIMTALK_THEN_SMS reserve the SMS price (30).
    expectError(await create(billBody({ sendChannel: 'ALIMTALK_THEN_SMS' }), b), 409, -21);
    expectError(await create(billBody({ sendChannel: 'SMS' }), b), 409, -21);
    // Two ALIMTALK recipients (20) fit.
    assert.equal((await create({ ...three, members: (three.members as unknown[]).slice(0, 2) }, b)).body.result_code, 0);
    assert.equal(await points(t, b), 5);
    const sum = await ledgerMatches(t, b.accountId);
    assert.equal(sum.balance, sum.ledger);
  });

  test('list: newest first, paging, month filter, shapes; bad query 400 / -20', async () => {
    const b = await newAccount(t, { points: 1000 });
    for (let i = 1; i <= 3; i++) await createOne(t, b, { reason: `청구 ${i}` });
    const r = await t.get('/app/v1/sales/bill?page=1&size=2', b.h);
    assert.equal(r.status, 200);
    const d = r.body.result_data;
    assert.equal(d.page, 1);
    assert.equal(d.size, 2);
    assert.equal(d.totalCount, 3);
    assert.deepEqual(d.bills.map((x: any) => x.reason), ['청구 3', '청구 2']);
    const p2 = (await t.get('/app/v1/sales/bill?page=2&size=2', b.h)).body.result_data;
    assert.deepEqual(p2.bills.map((x: any) => x.reason), ['청구 1']);
    const bill = d.bills[0];
    for (const k of ['id', 'uniqueId', 'paymentId', 'status', 'receiver', 'amount', 'reason', 'createDateTime', 'doneDateTime',
      'firstSentAt', 'lastSentAt', 'sendCount', 'sendChannel', 'requestId', 'sendStatus']) assert.ok(k in bill, `bill has ${k}`);
    assert.equal(typeof bill.id, 'number');
    assert.match(bill.uniqueId, /^[0-9a-f-]{36}$/);
    assert.match(bill.paymentId, /^INV[A-Z2-7]{24}$/);
    assert.equal(bill.status, 'PENDING');
    assert.match(bill.createDateTime, KST_ISO);
    assert.equal(bill.doneDateTime, null);
    assert.deepEqual(bill.receiver, { name: '홍길동', phone: '01012345678' });
    // Counted from the bills' own times: made just as a KST month ended, they would span two.
    const month = bill.createDateTime.slice(0, 7);
    const inMonth = [...d.bills, ...p2.bills].filter((x: any) => x.createDateTime.startsWith(month)).length;
    assert.equal((await t.get(`/app/v1/sales/bill?month=${month}`, b.h)).body.result_data.totalCount, inMonth);
    assert.equal((await t.get('/app/v1/sales/bill?month=2001-01', b.h)).body.result_data.totalCount, 0);
    assert.equal((await t.get('/app/v1/sales/bill', b.h)).body.result_data.size, 10);
    assert.equal((await t.get('/app/v1/sales/bill?size=100', b.h)).body.result_data.size, 100);
    expectError(await t.get('/app/v1/sales/bill?size=101', b.h), 400, -20, 'size:');
    expectError(await t.get('/app/v1/sales/bill?page=0', b.h), 400, -20, 'page:');
    expectError(await t.get('/app/v1/sales/bill?month=2026-13', b.h), 400, -20, 'month:');
    expectError(await t.get('/app/v1/sales/summary?month=202611', b.h), 400, -20, 'month:');
  });

  test('detail by uniqueId or numeric id; webhook secret never shown; unknown 404 / -10', async () => {
    // billTemplateId must name one of the account's templates (docs/reference.md, "Templates").
    const template = await t.app.sunap.invoicing.templates.create(a.accountId, { name: '기본', reason: '템플릿 사유' });
    const id = await createOne(t, a, {
      webhookUrl: 'https://partner.example.com/hooks/sunap', webhookSecret: 'whsec_0123456789abcdef',
      relatedSubject: '피아노', etc: '메모', billTemplateId: template.id,
      members: [{ studentName: '이영희', studentPhone: '01055556666', studentBirthDate: '2015-03-01', classroomId: 7 }],
    });
    const r = await t.get(`/app/v1/sales/bill/${id}`, a.h);
    assert.equal(r.status, 200);
    const d = r.body.result_data;
    assert.deepEqual(Object.keys(d).sort(), ['bill', 'payment', 'sendHistories', 'sendInfo']);
    assert.equal(d.bill.uniqueId, id);
    assert.equal(d.bill.webhookUrl, 'https://partner.example.com/hooks/sunap');
    assert.equal(d.bill.relatedSubject, '피아노');
    assert.equal(d.bill.billTemplateId, template.id);
    assert.equal(d.bill.classroomId, '7');
    assert.equal(d.bill.studentBirthDate, '2015-03-01');
    assert.equal(d.payment, null);
    assert.ok(!JSON.stringify(r.body).includes('whsec_0123456789abcdef'));
    assert.ok(!JSON.stringify(r.body).toLowerCase().includes('secret'));
    // Sealed at rest.
    const row = await t.app.sunap.database.db.selectFrom('invoices').select('webhook_secret_sealed').where('unique_id', '=', id).executeTakeFirstOrThrow();
    assert.ok(row.webhook_secret_sealed && !row.webhook_secret_sealed.includes('0123456789abcdef'));
    const sent = await waitSent(t, a, id);
    assert.equal(sent.sendInfo.sendCount, 1);
    assert.match(sent.sendInfo.firstSentAt, KST_ISO);
    assert.equal(sent.sendHistories.length, 1);
    assert.deepEqual(Object.keys(sent.sendHistories[0]).sort(), ['deliveryStatus', 'errorMessage', 'receiverPhone', 'sendChannel', 'sendResult', 'sendType', 'sentAt']);
    const byNum = await t.get(`/app/v1/sales/bill/${d.bill.id}`, a.h);
    assert.equal(byNum.body.result_data.bill.uniqueId, id);
    expectError(await t.get('/app/v1/sales/bill/00000000-0000-0000-0000-000000000000', a.h), 404, -10);
    expectError(await t.get('/app/v1/sales/bill/999999999', a.h), 404, -10);
  });

  test('summary: shape and default month', async () => {
    const r = await t.get('/app/v1/sales/summary', a.h);
    assert.equal(r.status, 200);
    const s = r.body.result_data;
    assert.deepEqual(Object.keys(s).sort(), ['canceledAmount', 'canceledCount', 'month', 'netAmount', 'paidAmount', 'paidCount']);
    assert.match(s.month, /^\d{4}-\d{2}$/);
    const old = (await t.get('/app/v1/sales/summary?month=2001-01', a.h)).body.result_data;
    assert.deepEqual(old, { month: '2001-01', paidCount: 0, paidAmount: 0, canceledCount: 0, canceledAmount: 0, netAmount: 0 });
  });

  test('delete: PENDING only; the invoice disappears and its payment becomes STORE_DELETE', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    const del = await t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h);
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.deepEqual(del.body, { result_code: 0, result_msg: 'SUCCESS', result_data: null });
    expectError(await t.get(`/app/v1/sales/bill/${id}`, a.h), 404, -10);
    const list = (await t.get('/app/v1/sales/bill?size=100', a.h)).body.result_data.bills;
    assert.ok(!list.some((b: any) => b.uniqueId === id));
    assert.equal((await t.get(`/app/v1/sales/public/bill/${d.bill.transSeqNo}`)).status, 404);
    const s = await t.gw('searchPayment', { TRANS_SEQNO: d.bill.transSeqNo });
    assert.equal(s.body.result_data.APPROVE_STATUS, 'STORE_DELETE');
    const pay = await t.pay(d.bill.transSeqNo);
    assert.equal(pay.approved, false);
    expectError(await t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h), 404, -10);
    // Paid: -24; cancelling an unpaid one: -24 too.
    const id2 = await createOne(t, a);
    const d2 = await waitSent(t, a, id2);
    expectError(await t.request('PUT', `/app/v1/sales/bill/${id2}`, undefined, a.h), 409, -24);
    assert.equal((await t.pay(d2.bill.transSeqNo)).approved, true);
    expectError(await t.request('DELETE', `/app/v1/sales/bill/${id2}`, undefined, a.h), 409, -24);
    assert.equal((await t.get(`/app/v1/sales/bill/${id2}`, a.h)).body.result_data.bill.status, 'DONE');
  });

  test('deleting before the first send: no payment is ever issued, the points come back', async () => {
    const b = await newAccount(t, { points: 100 });
    // Hold the worker so the invoice is still WAITING when it is deleted.
    await t.app.sunap.worker.stop();
    try {
      const id = await createOne(t, b);
      assert.equal(await points(t, b), 90);
      const del = await t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, b.h);
      assert.equal(del.body.result_code, 0, JSON.stringify(del.body));
    } finally {
      t.app.sunap.worker.start();
    }
    await t.app.sunap.worker.drain();
    const row = await t.app.sunap.database.db.selectFrom('invoices').select(['payment_id', 'send_status']).where('account_id', '=', b.accountId).executeTakeFirstOrThrow();
    assert.equal(row.payment_id, null);
    assert.equal(row.send_status, 'FAILED');
    assert.equal(await points(t, b), 100);
    const sum = await ledgerMatches(t, b.accountId);
    assert.equal(sum.balance, sum.ledger);
  });

  test('another account gets 404 / -10 for every operation on an invoice it does not own', async () => {
    const id = await createOne(t, a);
    const d = await waitSent(t, a, id);
    const intruder = await newAccount(t, { points: 1000 });
    for (const ref of [id, String(d.bill.id)]) {
      expectError(await t.get(`/app/v1/sales/bill/${ref}`, intruder.h), 404, -10);
      expectError(await t.request('DELETE', `/app/v1/sales/bill/${ref}`, undefined, intruder.h), 404, -10);
      expectError(await t.request('PUT', `/app/v1/sales/bill/${ref}`, undefined, intruder.h), 404, -10);
      expectError(await t.request('POST', `/app/v1/sales/bill/${ref}/refresh-status`, undefined, intruder.h), 404, -10);
    }
    const resend = await t.post('/app/v1/sales/bill/resend', { billIds: [id] }, intruder.h);
    assert.equal(resend.body.result_code, 0);
    assert.deepEqual(resend.body.result_data, [{ uniqueId: id, status: null, sendCount: null, lastSentAt: null, resendResult: 'SKIPPED', reason: 'not found' }]);
    assert.equal(await points(t, intruder), 1000);
    assert.equal((await t.get('/app/v1/sales/bill', intruder.h)).body.result_data.totalCount, 0);
    // Nothing changed for the owner.
    const mine = (await t.get(`/app/v1/sales/bill/${id}`, a.h)).body.result_data;
    assert.equal(mine.bill.status, 'PENDING');
    assert.equal(mine.sendInfo.sendCount, 1);
  });

  test("/docs' examples of the creation body create an invoice as they are", async () => {
    const spec = (await t.get('/docs/json')).body;
    const props = spec.paths['/app/v1/sales/bill'].post.requestBody.content['application/json'].schema.properties;
    const example = (p: { examples?: unknown[]; example?: unknown }) => {
      const v = docExample(p);
      assert.ok(typeof v === 'string' && v.length > 0, JSON.stringify(p).slice(0, 120));
      return v;
    };
    const m = props.members.items.properties;
    const body = {
      reason: '12월 수강료', amount: 128000, description: example(props.description), requestId: example(props.requestId), webhookUrl: example(props.webhookUrl),
      members: [{ studentName: example(m.studentName), studentPhone: example(m.studentPhone) }],
    };
    const r = await create(body);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const made = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0];
    assert.deepEqual([made.requestId, made.receiver], [body.requestId, { name: body.members[0].studentName, phone: body.members[0].studentPhone }]);
    // The points answer documented field by field, as it comes back.
    const pointsDoc = spec.paths['/app/v1/points/me'].get.responses['200'].content['application/json'].schema.properties.result_data;
    const mine = (await t.get('/app/v1/points/me', a.h)).body.result_data;
    assert.deepEqual([Object.keys(pointsDoc.properties), Object.keys(pointsDoc.properties.costs.properties ?? {})], [Object.keys(mine), Object.keys(mine.costs)]);
    // The documented refusal is one this call gives, word for word.
    const no = spec.paths['/app/v1/sales/bill'].post.responses['400'].content['application/json'].schema.properties;
    const refused = await create({ ...body, amount: body.amount + 1000 });
    assert.equal(refused.status, 400);
    assert.deepEqual([docExample(no.result_code), docExample(no.result_msg)], [refused.body.result_code, refused.body.result_msg]);
  });

  test('the routes are documented under Invoicing with the access-token scheme', async () => {
    const r = await t.get('/docs/json');
    const spec = JSON.parse(r.text);
    const op = spec.paths['/app/v1/sales/bill'].post;
    assert.deepEqual(op.tags, ['Invoicing']);
    assert.deepEqual(op.security, [{ accessToken: [] }]);
    assert.ok(spec.paths['/app/v1/sales/bill/{id}'].put);
    assert.ok(spec.paths['/app/v1/points/me'].get);
    assert.equal(spec.paths['/app/v1/auth/login'].post.security, undefined);
    // Every call: its group, whether it needs the token, a summary, and each error answer it can give, documented.
    const calls: [string, string, string, boolean, number[]][] = [
      ['post', '/app/v1/auth/login', 'Invoicing', false, [400, 401, 403, 429]],
      ['post', '/app/v1/auth/refresh', 'Invoicing', false, [400, 401, 403]],
      ['post', '/app/v1/auth/logout', 'Invoicing', true, [401, 403]],
      ['get', '/app/v1/points/me', 'Invoicing', true, [401, 403]],
      ['post', '/app/v1/sales/bill', 'Invoicing', true, [400, 401, 403, 409]],
      ['get', '/app/v1/sales/bill', 'Invoicing', true, [400, 401, 403]],
      ['get', '/app/v1/sales/summary', 'Invoicing', true, [400, 401, 403]],
      ['post', '/app/v1/sales/bill/resend', 'Invoicing', true, [400, 401, 403, 409]],
      ['get', '/app/v1/sales/bill/{id}', 'Invoicing', true, [400, 401, 403, 404]],
      ['delete', '/app/v1/sales/bill/{id}', 'Invoicing', true, [400, 401, 403, 404, 409]],
      ['put', '/app/v1/sales/bill/{id}', 'Invoicing', true, [400, 401, 403, 404, 409, 502]],
      ['post', '/app/v1/sales/bill/{id}/refresh-status', 'Invoicing', true, [400, 401, 403, 404]],
      ['get', '/app/v1/deliveries', 'Deliveries', true, [400, 401, 403]],
      ['get', '/app/v1/deliveries/{id}', 'Deliveries', true, [400, 401, 403, 404]],
      ['post', '/app/v1/deliveries/{id}/redeliver', 'Deliveries', true, [400, 401, 403, 404]],
      ['post', '/app/v1/deliveries/recover', 'Deliveries', true, [400, 401, 403]],
      ['get', '/app/v1/webhook-endpoints', 'Webhook endpoints', true, [401, 403]],
      ['post', '/app/v1/webhook-endpoints', 'Webhook endpoints', true, [400, 401, 403]],
      ['get', '/app/v1/webhook-endpoints/{id}', 'Webhook endpoints', true, [400, 401, 403, 404]],
      ['patch', '/app/v1/webhook-endpoints/{id}', 'Webhook endpoints', true, [400, 401, 403, 404]],
      ['delete', '/app/v1/webhook-endpoints/{id}', 'Webhook endpoints', true, [400, 401, 403, 404]],
      ['post', '/app/v1/webhook-endpoints/{id}/rotate-secret', 'Webhook endpoints', true, [400, 401, 403, 404, 409]],
      ['post', '/app/v1/webhook-endpoints/{id}/test', 'Webhook endpoints', true, [400, 401, 403, 404, 409]],
    ];
    for (const [method, path, tag, secured, errors] of calls) {
      const call = spec.paths[path]?.[method];
      const name = `${method.toUpperCase()} ${path}`;
      assert.ok(call, name);
      assert.deepEqual(call.tags, [tag], name);
      assert.deepEqual(call.security, secured ? [{ accessToken: [] }] : undefined, name);
      assert.ok(call.summary.length >= 8, name);
      if (path !== '/app/v1/points/me') assert.ok(call.description.length > 20, name);
      assert.deepEqual(Object.keys(call.responses), ['200', ...errors.map(String)], name);
      for (const code of errors) assert.deepEqual(Object.keys(call.responses[code].content['application/json'].schema.properties), ['result_code', 'result_msg', 'result_data'], `${name} ${code}`);
    }
    // A used requestId with other content is a 400 (decisions of docs/reference.md, -22), and /docs says so with an example.
    const bad = spec.paths['/app/v1/sales/bill'].post.responses['400'];
    assert.match(bad.description, /same requestId with a different payload \(-22\)/);
    assert.equal(bad.content['application/json'].example.result_code, -22);
    assert.equal(docExample(bad.content['application/json'].schema.properties.result_code), -22);
  });
});
