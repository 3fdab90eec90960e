import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../src/platform/errors.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { billBody, newAccount } from './support.js';
import { ownerClient } from '../console/support.js';

forEachEngine('invoicing: billTemplateId', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;
  const newest = (accountId: string) => db().selectFrom('invoices').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').executeTakeFirstOrThrow();

  async function template(accountId: string, body: Record<string, unknown>): Promise<string> {
    return (await t.app.sunap.invoicing.templates.create(accountId, { name: '기본', ...body })).id;
  }

  test('the template fills what the request leaves out; what the request gives wins', async () => {
    const a = await newAccount(t, { points: 1000 });
    const id = await template(a.accountId, {
      reason: '12월 수강료', description: '템플릿 안내', amount: 115_000, sendChannel: 'SMS',
      items: [{ name: '교재', price: 15_000 }, { name: '레슨', price: 100_000 }],
    });
    const members = [{ studentName: '홍길동', studentPhone: '01012345678' }];
    let r = await t.post('/app/v1/sales/bill', { billTemplateId: id, members }, a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    let inv = await newest(a.accountId);
    assert.equal(inv.reason, '12월 수강료');
    assert.equal(inv.description, '템플릿 안내');
    assert.equal(inv.amount, 115_000);
    assert.equal(inv.send_channel, 'SMS');
    assert.equal(JSON.parse(inv.items_json!).length, 2);
    assert.equal(inv.bill_template_id, id);

    // Given fields win; a given amount comes without the template's items (they add up to its amount).
    r = await t.post('/app/v1/sales/bill', { billTemplateId: id, members, reason: '보강 수업', amount: 30_000, sendChannel: 'ALIMTALK' }, a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    inv = await newest(a.accountId);
    assert.equal(inv.reason, '보강 수업');
    assert.equal(inv.description, '템플릿 안내');
    assert.equal(inv.amount, 30_000);
    assert.equal(inv.send_channel, 'ALIMTALK');
    assert.equal(inv.items_json, null);

    // Without a template, reason and amount are required as before.
    r = await t.post('/app/v1/sales/bill', { members, amount: 1000 }, a.h);
    assert.equal(r.status, 400);
    assert.equal(r.body.result_msg, 'reason: is required');
    r = await t.post('/app/v1/sales/bill', { members, reason: 'x' }, a.h);
    assert.equal(r.body.result_msg, 'amount: is required');
    // A template without an amount leaves the amount to the request.
    const noAmount = await template(a.accountId, { reason: '상담비' });
    r = await t.post('/app/v1/sales/bill', { billTemplateId: noAmount, members }, a.h);
    assert.equal(r.body.result_msg, 'amount: is required');

    // Items given without an amount take neither of the template's: the amount is still the request's to give.
    r = await t.post('/app/v1/sales/bill', { billTemplateId: id, members, items: [{ name: '교재', price: 15_000 }] }, a.h);
    assert.equal(r.status, 400);
    assert.equal(r.body.result_msg, 'amount: is required');
    // A description given wins over the template's; a template without one (or without a channel) leaves the request's default.
    r = await t.post('/app/v1/sales/bill', { billTemplateId: id, members, description: '요청 안내' }, a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    assert.equal((await newest(a.accountId)).description, '요청 안내');
    r = await t.post('/app/v1/sales/bill', { billTemplateId: noAmount, members, amount: 5000 }, a.h);
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const plain = await t.post('/app/v1/sales/bill', { members, reason: '상담비', amount: 5000 }, a.h);
    assert.equal(plain.body.result_code, 0, JSON.stringify(plain.body));
    const [withoutTemplate, fromBareTemplate] = await db().selectFrom('invoices').selectAll().where('account_id', '=', a.accountId).orderBy('id', 'desc').limit(2).execute();
    assert.deepEqual([fromBareTemplate!.description, fromBareTemplate!.send_channel], [withoutTemplate!.description, withoutTemplate!.send_channel]);
    assert.equal(fromBareTemplate!.description, null);
  });

  test('an unknown template id, or another account\'s, is -20 billTemplateId: ... and creates nothing', async () => {
    const a = await newAccount(t, { points: 1000 });
    const b = await newAccount(t, { points: 1000 });
    const theirs = await template(b.accountId, { reason: '남의 템플릿', amount: 5000 });
    for (const id of ['tpl_unknown', theirs, 12345]) {
      const r = await t.post('/app/v1/sales/bill', billBody({ billTemplateId: id }), a.h);
      assert.equal(r.status, 400);
      assert.equal(r.body.result_code, -20);
      assert.match(r.body.result_msg, /^billTemplateId: /);
    }
    assert.equal((await db().selectFrom('invoices').select('id').where('account_id', '=', a.accountId).execute()).length, 0);
    // null is absent, as everywhere (public clients send billTemplateId: null).
    assert.equal((await t.post('/app/v1/sales/bill', billBody({ billTemplateId: null }), a.h)).body.result_code, 0);
  });

  test('requestId with a template: a repeat is the same request even after the template changed; other content is -22', async () => {
    const a = await newAccount(t, { points: 1000 });
    const id = await template(a.accountId, { reason: '수강료', amount: 50_000 });
    const members = [{ studentName: '홍길동', studentPhone: '01012345678' }];
    const body = { billTemplateId: id, requestId: 'tpl-repeat-0001', members };
    assert.equal((await t.post('/app/v1/sales/bill', body, a.h)).body.result_code, 0);
    await t.app.sunap.invoicing.templates.update(a.accountId, id, { name: '기본', reason: '수강료', amount: 70_000 });
    assert.equal((await t.post('/app/v1/sales/bill', body, a.h)).body.result_code, 0);
    assert.equal((await db().selectFrom('invoices').select('amount').where('account_id', '=', a.accountId).execute()).map((r) => r.amount).join(), '50000');
    // Deleted meanwhile: the repeat still answers 0.
    await t.app.sunap.invoicing.templates.remove(a.accountId, id);
    assert.equal((await t.post('/app/v1/sales/bill', body, a.h)).body.result_code, 0);
    // An explicit channel is other content than "the template's channel".
    const id2 = await template(a.accountId, { reason: '수강료', amount: 50_000, sendChannel: 'SMS' });
    assert.equal((await t.post('/app/v1/sales/bill', { billTemplateId: id2, requestId: 'tpl-repeat-0002', members }, a.h)).body.result_code, 0);
    const conflict = await t.post('/app/v1/sales/bill', { billTemplateId: id2, requestId: 'tpl-repeat-0002', members, sendChannel: 'ALIMTALK' }, a.h);
    assert.equal(conflict.body.result_code, -22);
  });

  test('templates made in the console work through the API (billTemplateId as the console shows it)', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    const r = await c.post('/console/templates', { name: '월 수강료', reason: '1월 수강료', amount: '120,000', items: '교재:20000; 레슨:100000', sendChannel: 'SMS' }, { from: '/console/templates/new' });
    assert.equal(r.status, 303, r.text.slice(0, 400));
    const list = (await c.get('/console/templates')).text;
    const id = /<code>(tpl_[A-Za-z0-9_-]+)<\/code>/.exec(list)![1]!;
    const login = await t.post('/app/v1/auth/login', { email: owner.email, password: owner.password });
    const h = { 'x-access-token': login.body.result_data.accessToken };
    const created = await t.post('/app/v1/sales/bill', { billTemplateId: id, members: [{ studentName: '김', studentPhone: '01012345678' }] }, h);
    assert.equal(created.body.result_code, 0, JSON.stringify(created.body));
    const inv = await newest(owner.accountId);
    assert.equal(inv.amount, 120_000);
    assert.equal(inv.reason, '1월 수강료');
    // A bad template is refused with the field named (in Korean, beside it: test/console/forms.test.ts), nothing saved.
    const bad = await c.post('/console/templates', { name: '틀림', reason: 'x', amount: '1000', items: '교재:2000' }, { from: '/console/templates/new' });
    assert.equal(bad.status, 400);
    assert.ok(bad.text.includes('<span class="field-error" id="items-error">항목 합계(2,000원)가 금액(1,000원)과 다릅니다.</span>'));
    assert.equal((await t.app.sunap.invoicing.templates.list(owner.accountId)).length, 1);
  });

  test('the template service refuses a bad template naming the field and saves nothing; items need their amount; an unknown or another team\'s id is not found', async () => {
    const a = await newAccount(t);
    const b = await newAccount(t);
    const svc = t.app.sunap.invoicing.templates;
    const refused = (message: string) => (e: unknown) => e instanceof AppError && e.kind === 'VALIDATION' && e.message === message;
    const items = [{ name: '교재', price: 2000 }];
    await assert.rejects(svc.create(a.accountId, { reason: '수강료' }), refused('name: is required'));
    await assert.rejects(svc.create(a.accountId, { name: 'x'.repeat(41), reason: '수강료' }), refused('name: must be at most 40 characters'));
    await assert.rejects(svc.create(a.accountId, { name: '교재', reason: '수강료', items }), refused('amount: is required when the template has items'));
    await assert.rejects(svc.create(a.accountId, { name: '교재', reason: '수강료', items, amount: 1000 }), refused('items: the net sum of the items (2000) must equal the amount (1000)'));
    assert.deepEqual(await svc.list(a.accountId), []);
    const ok = await svc.create(a.accountId, { name: '교재', reason: '수강료', items, amount: 2000 });
    assert.deepEqual([ok.name, ok.amount, ok.items], ['교재', 2000, items]);
    await assert.rejects(svc.update(a.accountId, ok.id, { name: '교재', reason: '수강료', items }), refused('amount: is required when the template has items'));
    await assert.rejects(svc.update(a.accountId, ok.id, { reason: '수강료' }), refused('name: is required'));
    assert.equal((await svc.get(a.accountId, ok.id)).amount, 2000, 'a refused update changes nothing');
    const notFound = (e: unknown) => e instanceof AppError && e.kind === 'NOT_FOUND' && e.message === 'id: no such template';
    await assert.rejects(svc.get(b.accountId, ok.id), notFound);
    await assert.rejects(svc.update(b.accountId, ok.id, { name: '남의 것', reason: '수강료' }), notFound);
    await assert.rejects(svc.remove(b.accountId, ok.id), notFound);
    await assert.rejects(svc.get(a.accountId, 'tpl_unknown'), notFound);
    assert.equal((await svc.update(a.accountId, ok.id, { name: '이름만', reason: '수강료' })).items.length, 0);
    const full = await svc.update(a.accountId, ok.id, { name: '전부', reason: '1월 수강료', description: '안내', amount: 3000, items: [{ name: '레슨', price: 3000 }], sendChannel: 'SMS' });
    assert.deepEqual(await svc.get(a.accountId, ok.id), full);
    assert.deepEqual([full.name, full.reason, full.description, full.amount, full.items, full.sendChannel], ['전부', '1월 수강료', '안내', 3000, [{ name: '레슨', price: 3000 }], 'SMS']);
    await svc.remove(a.accountId, ok.id);
    await assert.rejects(svc.remove(a.accountId, ok.id), notFound);
  });

  test('at most 200 templates a team: the 200th is saved, the 201st refused; another team is not counted', async () => {
    const a = await newAccount(t);
    const b = await newAccount(t);
    const svc = t.app.sunap.invoicing.templates;
    const now = t.app.sunap.clock.nowMs();
    await db().insertInto('bill_templates').values(Array.from({ length: 199 }, (_, i) => ({
      id: `tpl_limit_${a.accountId}_${i}`, account_id: a.accountId, name: `t${i}`, reason: '수강료', description: null, amount: 1000, items_json: null, send_channel: null, created_at: now, updated_at: now,
    }))).execute();
    await svc.create(b.accountId, { name: '남의 팀', reason: '수강료' });
    const last = await svc.create(a.accountId, { name: '200번째', reason: '수강료' });
    assert.equal((await svc.list(a.accountId)).length, 200);
    await assert.rejects(svc.create(a.accountId, { name: '201번째', reason: '수강료' }), (e) => e instanceof AppError && e.kind === 'VALIDATION' && e.message === 'templates: at most 200 per team; delete one first');
    assert.equal((await svc.list(a.accountId)).length, 200);
    await svc.remove(a.accountId, last.id);
    assert.equal((await svc.create(a.accountId, { name: '다시 200번째', reason: '수강료' })).name, '다시 200번째');
  });
});
