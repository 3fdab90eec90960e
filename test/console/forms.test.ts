import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_DUE_DAYS } from '../../src/invoicing/index.js';
import { forEachEngine, paymentBody, withApp } from '../helpers/app.js';
import { chars, fine, noEnglish, postRepeated, problemOf, problemsAll, valueOf } from './form-check.js';
import { ConsoleClient, ownerClient, textOf } from './support.js';

/**
 * Forms that teach (docs/console.md, "Forms"): every console form shows all its problems at
 * once, in Korean, beside each field, with the values as typed, on a 400 page with the form;
 * never a bare error page, not for an over-long field, a wrong type or values bad only together.
 */
forEachEngine('console forms', (engine) => {
  const t = withApp(engine);

  test('templates: every problem at once beside its field, values kept, no English; the limits at and one over; a good one saves', async () => {
    const { c, owner } = await ownerClient(t);
    const good = { name: '월 수강료', reason: '12월 수강료', description: '', amount: '', items: '', sendChannel: '', dueDays: '' };
    const bad = await c.post('/console/templates', { ...good, name: chars(41), reason: '', description: chars(201), amount: '12만원', sendChannel: 'FAX', dueDays: String(MAX_DUE_DAYS + 1) }, { from: '/console/templates/new' });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, {
      name: /^템플릿 이름은 40자까지 적을 수 있습니다 \(지금 41자\)\.$/, reason: /^청구 사유를 적어 주세요/, description: /^안내 문구는 200자까지 .*지금 201자/,
      amount: /^금액은 숫자로 적어 주세요 \(100원에서 2,147,483,647원 사이\)/, sendChannel: /목록에서 골라/, dueDays: new RegExp(`0일에서 ${MAX_DUE_DAYS}일 사이여야`),
    });
    assert.equal(valueOf(bad.text, 'name'), chars(41));
    assert.equal(valueOf(bad.text, 'description'), chars(201));
    assert.equal(valueOf(bad.text, 'amount'), '12만원');
    assert.equal(valueOf(bad.text, 'dueDays'), String(MAX_DUE_DAYS + 1));
    assert.equal((await t.app.sunap.invoicing.templates.list(owner.accountId)).length, 0, 'nothing saved');

    // Far over the old schema limits (a pasted page): still the form, in Korean.
    const huge = await c.post('/console/templates', { ...good, name: chars(5000), reason: chars(3000) }, { from: '/console/templates/new' });
    assert.equal(huge.status, 400);
    assert.match(problemOf(huge.text, 'name'), /지금 5,000자/);
    assert.match(problemOf(huge.text, 'reason'), /60자까지/);

    // Each limit exactly at its edge saves; one past it does not (the over-side is above for name, description, dueDays).
    const edge = await c.post('/console/templates', { ...good, name: chars(40), reason: chars(60), description: chars(200), amount: '100', dueDays: String(MAX_DUE_DAYS) }, { from: '/console/templates/new' });
    assert.equal(edge.status, 303, edge.text.slice(0, 300));
    const over = await c.post('/console/templates', { ...good, reason: chars(61), amount: '99', dueDays: '0' }, { from: '/console/templates/new' });
    assert.equal(over.status, 400);
    assert.match(problemOf(over.text, 'reason'), /60자까지 .*지금 61자/);
    assert.match(problemOf(over.text, 'amount'), /100원에서 .* 사이여야/);
    assert.ok(fine(over.text, 'dueDays'), '0 days is allowed');
    const saved = (await t.app.sunap.invoicing.templates.list(owner.accountId))[0]!;
    assert.equal(saved.name, chars(40));
    assert.equal(saved.dueDays, MAX_DUE_DAYS);

    // Control characters in a one-line name, beside it.
    const ctl = await c.post('/console/templates', { ...good, name: '월\t수강료' }, { from: '/console/templates/new' });
    assert.equal(ctl.status, 400);
    assert.match(problemOf(ctl.text, 'name'), /제어 문자/);
  });

  test('templates: values bad only together (items against the amount) are said beside the field; editing keeps the values; a doubled field is no error page', async () => {
    const { c, owner } = await ownerClient(t);
    const base = { name: '교재', reason: '교재비', description: '', sendChannel: '', dueDays: '' };
    const mismatch = await c.post('/console/templates', { ...base, amount: '20000', items: '교재:15000' }, { from: '/console/templates/new' });
    assert.equal(mismatch.status, 400);
    assert.equal(problemOf(mismatch.text, 'items'), '항목 합계(15,000원)가 금액(20,000원)과 다릅니다.');
    const noAmount = await c.post('/console/templates', { ...base, amount: '', items: '교재:15000' }, { from: '/console/templates/new' });
    assert.match(problemOf(noAmount.text, 'amount'), /항목이 있으면 금액도/);
    noEnglish(noAmount.text);
    assert.equal((await c.post('/console/templates', { ...base, amount: '15,000원', items: '교재:15000' }, { from: '/console/templates/new' })).status, 303);

    const id = (await t.app.sunap.invoicing.templates.list(owner.accountId))[0]!.id;
    const edit = await c.post(`/console/templates/${id}`, { ...base, name: '', amount: '15000', items: '교재:15000', dueDays: '-1' }, { from: `/console/templates/${id}` });
    assert.equal(edit.status, 400);
    problemsAll(edit.text, { name: /템플릿 이름을 적어 주세요/, dueDays: /숫자로 적어 주세요/ });
    assert.equal(valueOf(edit.text, 'items'), '교재:15000');
    assert.equal(valueOf(edit.text, 'dueDays'), '-1');
    assert.match(edit.text, new RegExp(`action="/console/templates/${id}"`), 'still the edit form');

    // name=a&name=b: the last one counts, as a browser's doubled field would; never a schema error page.
    const twice = await postRepeated(c, t.url, '/console/templates', [['name', chars(41)], ['name', '두 번'], ['reason', '사유'], ['reason', '']], '/console/templates/new');
    assert.equal(twice.status, 400);
    assert.equal(valueOf(twice.text, 'name'), '두 번');
    assert.match(problemOf(twice.text, 'reason'), /청구 사유를 적어 주세요/);
  });

  test('team invite: a bad email and an unknown role at once, beside each, kept; 254 characters at the edge; an invite defaults to 조회 전용', async () => {
    const { c } = await ownerClient(t);
    const page = await c.get('/console/team');
    assert.equal(valueOf(page.text, 'role'), 'viewer', 'the invite form starts at 조회 전용');
    const bad = await c.post('/console/team/invite', { email: 'teacher-at-example', role: 'admin' }, { from: '/console/team' });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, { email: /^이메일 주소 형식이 아닙니다/, role: /^역할을 목록에서 골라/ });
    assert.equal(valueOf(bad.text, 'email'), 'teacher-at-example');
    // 254 characters is the longest email; 255 is refused beside the field.
    const at = (n: number) => `${'a'.repeat(n - '@example.com'.length)}@example.com`;
    const over = await c.post('/console/team/invite', { email: at(255), role: 'viewer' }, { from: '/console/team' });
    assert.equal(over.status, 400);
    assert.match(problemOf(over.text, 'email'), /254자까지 .*지금 255자/);
    const edge = await c.post('/console/team/invite', { email: at(254), role: 'manager' }, { from: '/console/team' });
    assert.equal(edge.status, 200);
    assert.match(edge.text, /\/console\/invite\/[A-Za-z0-9_-]+/, 'the link is shown');
    // No role sent at all: a viewer.
    const plain = await c.post('/console/team/invite', { email: 'plain@example.com' }, { from: '/console/team' });
    assert.equal(plain.status, 200);
    const row = await t.app.sunap.database.db.selectFrom('console_invites').select('role').where('email', '=', 'plain@example.com').executeTakeFirstOrThrow();
    assert.equal(row.role, 'viewer');
    // An email already a member's, said beside the field in Korean.
    const { owner: other } = await ownerClient(t);
    const taken = await c.post('/console/team/invite', { email: other.email, role: 'viewer' }, { from: '/console/team' });
    assert.equal(taken.status, 400);
    assert.match(problemOf(taken.text, 'email'), /이미 있습니다/);
    assert.equal(valueOf(taken.text, 'email'), other.email);
    noEnglish(taken.text);
  });

  test('team: a role change that would leave no owner is said beside that member\'s role; removing the first account is said in Korean; the word is 팀에서 빼기', async () => {
    const { c, owner } = await ownerClient(t);
    const bad = await c.post(`/console/team/${owner.accountId}/role`, { role: 'viewer' }, { from: '/console/team' });
    assert.equal(bad.status, 409);
    assert.match(problemOf(bad.text, `role-${owner.accountId}`), /소유자가 한 명 이상/);
    noEnglish(bad.text);
    const unknown = await c.post(`/console/team/${owner.accountId}/role`, { role: 'boss' }, { from: '/console/team' });
    assert.equal(unknown.status, 400);
    assert.match(problemOf(unknown.text, `role-${owner.accountId}`), /목록에서 골라/);
    const first = await c.post(`/console/team/${owner.accountId}/remove`, {}, { from: '/console/team' });
    assert.equal(first.status, 409);
    assert.ok(first.text.includes('팀의 첫 계정은 청구서와 포인트를 가지고 있어 팀에서 뺄 수 없습니다.'));
    noEnglish(first.text);
    const page = (await c.get('/console/team')).text;
    // Removal is 팀에서 빼기; 내보내기 is left to exports (the role table on this page lists those).
    assert.ok(!page.includes('멤버 내보내기'), 'removal is never called 내보내기');
    const { AUDIT_ACTIONS } = await import('../../src/console/audit.js');
    assert.equal(AUDIT_ACTIONS['team.remove'], '팀에서 빼기');
  });

  test('account password: both problems at once, beside each; 8 characters at the edge; a wrong current password beside its field', async () => {
    const { c, owner } = await ownerClient(t);
    const bad = await c.post('/console/account/password', { current: '', next: 'short' }, { from: '/console/account' });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, { current: /^지금 비밀번호를 적어 주세요/, next: /^새 비밀번호는 8자 이상이어야 합니다 \(지금 5자\)/ });
    assert.equal(valueOf(bad.text, 'next'), '', 'a password is never written back');
    const seven = await c.post('/console/account/password', { current: owner.password, next: '1234567' }, { from: '/console/account' });
    assert.match(problemOf(seven.text, 'next'), /8자 이상/);
    const long = await c.post('/console/account/password', { current: owner.password, next: chars(201, 'x') }, { from: '/console/account' });
    assert.match(problemOf(long.text, 'next'), /200자까지 .*지금 201자/);
    const wrong = await c.post('/console/account/password', { current: 'not my password', next: '12345678' }, { from: '/console/account' });
    assert.equal(wrong.status, 400);
    assert.equal(problemOf(wrong.text, 'current'), '지금 비밀번호가 맞지 않습니다.');
    const ok = await c.post('/console/account/password', { current: owner.password, next: chars(200, 'y') }, { from: '/console/account' });
    assert.equal(ok.status, 303, 'exactly 200 characters is accepted');
    await new ConsoleClient(t).signIn(owner.email, chars(200, 'y'));
  });

  test('sign-in and invite: empty or over-long fields beside each with the email kept; wrong credentials one sentence; an invite password of 8 is enough, 7 is not', async () => {
    const { c, owner } = await ownerClient(t);
    const anon = new ConsoleClient(t);
    const empty = await anon.post('/console/login', { email: '', password: '', next: '/console' }, { from: '/console/login' });
    assert.equal(empty.status, 400);
    problemsAll(empty.text, { email: /^이메일을 적어 주세요/, password: /^비밀번호를 적어 주세요/ });
    const long = await anon.post('/console/login', { email: chars(255, 'a'), password: chars(201, 'b'), next: '/console' }, { from: '/console/login' });
    assert.equal(long.status, 400);
    problemsAll(long.text, { email: /254자까지/, password: /200자까지/ });
    assert.equal(valueOf(long.text, 'email'), chars(255, 'a'));
    const wrong = await anon.post('/console/login', { email: owner.email, password: 'wrong password', next: '/console' }, { from: '/console/login' });
    assert.equal(wrong.status, 401);
    assert.ok(textOf(wrong.text).includes('이메일 또는 비밀번호가 올바르지 않습니다.'));
    assert.equal(valueOf(wrong.text, 'email'), owner.email);
    noEnglish(wrong.text);

    const r = await c.post('/console/team/invite', { email: 'joiner@example.com', role: 'viewer' }, { from: '/console/team' });
    const link = /\/console\/invite\/([A-Za-z0-9_-]+)/.exec(r.text)![1]!;
    const joiner = new ConsoleClient(t);
    const seven = await joiner.post(`/console/invite/${link}`, { password: '1234567' }, { from: `/console/invite/${link}` });
    assert.equal(seven.status, 400);
    assert.match(problemOf(seven.text, 'password'), /^비밀번호는 8자 이상이어야 합니다/);
    const huge = await joiner.post(`/console/invite/${link}`, { password: chars(5000, 'x') }, { from: `/console/invite/${link}` });
    assert.equal(huge.status, 400);
    assert.match(problemOf(huge.text, 'password'), /200자까지/);
    assert.equal((await joiner.post(`/console/invite/${link}`, { password: '12345678' }, { from: `/console/invite/${link}` })).status, 303);
  });

  test('store settings: four problems at once beside each, kept; 60 characters of name at the edge, 61 over', async () => {
    const { c } = await ownerClient(t);
    const bad = await c.post('/console/settings/store', { name: chars(61), ceoName: chars(31), bizRegNum: '123-45-67890', tel: '12' }, { from: '/console/settings' });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, { name: /60자까지 .*지금 61자/, ceoName: /대표자는 30자까지/, bizRegNum: /올바른 사업자등록번호가 아닙니다/, tel: /8~12자리/ });
    assert.equal(valueOf(bad.text, 'name'), chars(61));
    assert.equal(valueOf(bad.text, 'tel'), '12');
    const empty = await c.post('/console/settings/store', { name: ' ', ceoName: '', bizRegNum: '', tel: '' }, { from: '/console/settings' });
    assert.match(problemOf(empty.text, 'name'), /상점 이름을 적어 주세요/);
    const ctl = await c.post('/console/settings/store', { name: '행복\t학원', ceoName: '', bizRegNum: '', tel: '' }, { from: '/console/settings' });
    assert.match(problemOf(ctl.text, 'name'), /제어 문자/);
    noEnglish(ctl.text);
    const ok = await c.post('/console/settings/store', { name: chars(60), ceoName: chars(30), bizRegNum: '', tel: '02-123-4567' }, { from: '/console/settings' });
    assert.equal(ok.status, 303);
    assert.equal((await t.app.sunap.gateway.findStore(t.storeCode))?.name, chars(60));
  });

  test('processor settings: several problems at once; a key far past the old limit is said beside it, not an error page; typed values kept', async () => {
    const { c } = await ownerClient(t);
    const r = await postRepeated(c, t.url, '/console/settings/processor', [['processor', 'paypal'], ['way', 'checkout']], '/console/settings');
    assert.equal(r.status, 400);
    problemsAll(r.text, { processor: /결제사를 목록에서 골라/, methods: /결제수단을 하나 이상/ });
    const key = await postRepeated(c, t.url, '/console/settings/processor', [['processor', 'toss'], ['way', 'checkout'], ['methods', 'CARD'], ['clientKey', chars(400, 'k')], ['secretKey', 'test_sk_x']], '/console/settings');
    assert.equal(key.status, 400);
    assert.match(problemOf(key.text, 'clientKey'), /클라이언트 키/);
    assert.equal(valueOf(key.text, 'clientKey'), chars(400, 'k'));
    assert.equal(valueOf(key.text, 'secretKey'), '', 'a secret is never written back');
    noEnglish(key.text);
  });

  test('payment cancel: reason and confirmation at once, reason kept; 100 characters at the edge, 101 over; control characters beside the reason', async () => {
    const { c } = await ownerClient(t);
    const body = paymentBody({});
    await t.gw('requestPayment', body);
    const seq = String(body.TRANS_SEQNO);
    assert.equal((await t.pay(seq)).approved, true);
    const from = `/console/payments/${seq}/cancel`;
    const bad = await c.post(from, { reason: chars(101) }, { from });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, { reason: /100자까지 .*지금 101자/, confirm: /전액 취소를 확인해 주세요/ });
    assert.equal(valueOf(bad.text, 'reason'), chars(101));
    const none = await c.post(from, { reason: '', confirm: 'yes' }, { from });
    assert.match(problemOf(none.text, 'reason'), /취소 사유를 적어 주세요/);
    assert.match(none.text, /id="confirm"[^>]* checked/, 'the ticked confirmation stays ticked');
    const ctl = await c.post(from, { reason: '환불\n=1+1', confirm: 'yes' }, { from });
    assert.match(problemOf(ctl.text, 'reason'), /제어 문자/);
    noEnglish(ctl.text);
    const state = async () => (await t.app.sunap.database.db.selectFrom('payments').select('state').where('trans_seqno', '=', seq).executeTakeFirstOrThrow()).state;
    assert.equal(await state(), 'APPROVE_COMPLETE', 'nothing changed');
    const ok = await c.post(from, { reason: chars(100), confirm: 'yes' }, { from });
    assert.equal(ok.status, 303);
    assert.equal(await state(), 'CANCEL_COMPLETE');
  });

  test('points recharge: the limits at and one past each end, beside the field with the value kept', async () => {
    const { c } = await ownerClient(t);
    const { RECHARGE_LIMITS } = await import('../../src/invoicing/index.js');
    for (const [typed, re] of [[String(RECHARGE_LIMITS.min - 1), /1,000P에서 1,000,000P 사이여야/], [String(RECHARGE_LIMITS.max + 1), /사이여야/], ['만 포인트', /숫자로 적어 주세요/], ['', /적어 주세요/]] as const) {
      const r = await c.post('/console/points/recharge', { points: typed }, { from: '/console/points' });
      assert.equal(r.status, 400, typed);
      assert.match(problemOf(r.text, 'points'), re, typed);
      assert.equal(valueOf(r.text, 'points'), typed);
      noEnglish(r.text);
    }
    assert.equal((await c.post('/console/points/recharge', { points: RECHARGE_LIMITS.min.toLocaleString('ko-KR') }, { from: '/console/points' })).status, 303);
    assert.equal((await c.post('/console/points/recharge', { points: String(RECHARGE_LIMITS.max) }, { from: '/console/points' })).status, 303);
  });

  test('webhook endpoint: address and events at once, kept; 500 characters at the edge, 501 over', async () => {
    const { c } = await ownerClient(t);
    const from = '/console/deliveries/endpoints';
    const bad = await c.post(from, { url: 'http://insecure.example' }, { from });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, { url: /https:\/\/로 시작해야/, events: /하나 이상 골라/ });
    assert.equal(valueOf(bad.text, 'url'), 'http://insecure.example');
    assert.ok(!/name="events" value="[^"]*" checked/.test(bad.text), 'the events as sent (none) stay unticked');
    const base = 'https://hooks.example.com/';
    const over = await c.post(from, { url: base + 'a'.repeat(501 - base.length), events: 'bill.paid' }, { from });
    assert.equal(over.status, 400);
    assert.match(problemOf(over.text, 'url'), /500자까지 .*지금 501자/);
    assert.match(over.text, /name="events" value="bill.paid" checked/);
    assert.ok(!/name="events" value="payment.approved" checked/.test(over.text));
    const ok = await c.post(from, { url: base + 'a'.repeat(500 - base.length), events: 'bill.paid' }, { from });
    assert.equal(ok.status, 200);
    assert.ok(textOf(ok.text).includes('엔드포인트를 등록했습니다'));
  });

  test('classes: a new class, a member added and a rename each show every problem at once beside its field, values kept; 40/30 characters at the edge', async () => {
    const { c, owner } = await ownerClient(t);
    const bad = await c.post('/console/classes', { name: chars(41), memo: chars(201), csv: '' }, { from: '/console/classes/new' });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, { name: /반 이름은 40자까지 .*지금 41자/, memo: /메모는 200자까지/ });
    assert.equal(valueOf(bad.text, 'name'), chars(41));
    assert.equal(valueOf(bad.text, 'memo'), chars(201));
    // A bad name and a bad CSV row together: both said, the pasted text kept.
    const both = await c.post('/console/classes', { name: '', memo: '', csv: '이름,전화번호,금액\n가,010-1234-5678,10000\n나,12,10000' }, { from: '/console/classes/new' });
    assert.equal(both.status, 400);
    assert.match(problemOf(both.text, 'name'), /반 이름을 적어 주세요/);
    assert.ok(textOf(both.text).includes('3번째 줄 (나): 전화번호는 10~11자리'));
    assert.match(valueOf(both.text, 'csv')!, /나,12,10000/);
    const made = await c.post('/console/classes', { name: chars(40), memo: chars(200), csv: '' }, { from: '/console/classes/new' });
    assert.equal(made.status, 303);
    const id = /\/console\/classes\/([^?]+)/.exec(made.location!)![1]!;
    const from = `/console/classes/${id}`;

    const member = await c.post(`/console/classes/${id}/members`, { name: chars(31), phone: '12', guardianPhone: '34', amount: '99' }, { from });
    assert.equal(member.status, 400);
    problemsAll(member.text, { 'm-name': /이름은 30자까지/, 'm-phone': /^전화번호는 10~11자리/, 'm-guardian': /^보호자 전화번호는 10~11자리/, 'm-amount': /100원에서/ });
    assert.equal(valueOf(member.text, 'm-name'), chars(31));
    assert.equal(valueOf(member.text, 'm-amount'), '99');
    assert.equal((await c.post(`/console/classes/${id}/members`, { name: chars(30), phone: '010-1234-5678', guardianPhone: '', amount: '100' }, { from })).status, 303);
    const twice = await c.post(`/console/classes/${id}/members`, { name: chars(30), phone: '01012345678', guardianPhone: '', amount: '' }, { from });
    assert.equal(twice.status, 400);
    assert.match(problemOf(twice.text, 'm-phone'), /이미 이 반에/);

    const rename = await c.post(from, { name: '', memo: chars(201) }, { from });
    assert.equal(rename.status, 400);
    problemsAll(rename.text, { name: /반 이름을 적어 주세요/, memo: /200자까지/ });
    assert.equal(valueOf(rename.text, 'memo'), chars(201), 'the memo as typed, not the saved one');
    const empty = await c.post(`/console/classes/${id}/import`, { csv: '', mode: 'append' }, { from });
    assert.match(problemOf(empty.text, 'csv'), /붙여넣어 주세요/);
    const cls = await t.app.sunap.invoicing.billing.classes.get(owner.accountId, id);
    assert.equal(cls.class.name, chars(40));
  });

  test('schedules: every problem the form can see at once, beside each (a reminder without its count only together), kept; each limit at its edge', async () => {
    const { c, owner } = await ownerClient(t);
    const cls = (await t.app.sunap.invoicing.billing.classes.create(owner.accountId, { name: '피아노 A', members: [] })).class;
    const tpl = await t.app.sunap.invoicing.templates.create(owner.accountId, { name: '월 수강료', reason: '수강료', amount: 100_000 });
    const from = '/console/schedules/new';
    const bad = await c.post('/console/schedules', { classId: cls.id, templateId: '', repeat: 'MONTHLY', dayOfMonth: '32', time: '25:00', at: '', dueDays: '366', beforeDays: '31', afterDays: '', times: '' }, { from });
    assert.equal(bad.status, 400);
    problemsAll(bad.text, {
      templateId: /템플릿을 골라/, dayOfMonth: /1일에서 31일 사이여야/, time: /00:00~23:59/, dueDays: /0일에서 365일 사이여야/, beforeDays: /1일에서 30일 사이여야/, times: /최대 몇 번을 적어/,
    });
    assert.equal(valueOf(bad.text, 'dayOfMonth'), '32');
    assert.equal(valueOf(bad.text, 'beforeDays'), '31');
    const once = await c.post('/console/schedules', { classId: cls.id, templateId: tpl.id, repeat: 'ONCE', at: '', times: '6' }, { from });
    problemsAll(once.text, { at: /날짜와 시각을 골라/, times: /1번에서 5번 사이여야/, beforeDays: /하나 이상을 적어/ });
    const ok = await c.post('/console/schedules', { classId: cls.id, templateId: tpl.id, repeat: 'MONTHLY', dayOfMonth: '31', time: '23:59', at: '', dueDays: '365', beforeDays: '30', afterDays: '30', times: '5' }, { from });
    assert.equal(ok.status, 303, ok.text.slice(0, 400));
  });
});
