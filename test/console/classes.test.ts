import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { addMember, ownerClient, recipientsCsv, textOf } from './support.js';

forEachEngine('console: classes', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;

  test('a class from an uploaded CSV, then members added, removed, imported, renamed, archived', async () => {
    const { owner, c } = await ownerClient(t);
    let r = await c.upload('/console/classes', { name: '초등 피아노 A반', memo: '월·수·금' }, { field: 'file', name: 'A반.csv', content: recipientsCsv(30, '55') }, '/console/classes/new');
    assert.equal(r.status, 303, textOf(r.text).slice(0, 500));
    const id = /\/console\/classes\/(cls_[A-Za-z0-9_-]+)\?notice=created/.exec(r.location ?? '')?.[1];
    assert.ok(id, r.location ?? '');
    let page = await c.get(r.location!);
    let text = textOf(page.text);
    assert.ok(text.includes('받는 분 30명') && text.includes('학생0') && text.includes('010-2222-3333') && text.includes('반을 만들었습니다.'), text.slice(0, 800));
    const list = textOf((await c.get('/console/classes')).text);
    assert.ok(list.includes('초등 피아노 A반') && list.includes('30명'));

    // One by hand, refused in Korean with a bad phone, then fine.
    r = await c.post(`/console/classes/${id}/members`, { name: '손님', phone: '010-12' }, { from: `/console/classes/${id}` });
    assert.equal(r.status, 400);
    assert.ok(textOf(r.text).includes('전화번호는 10~11자리 숫자여야 합니다'));
    r = await c.post(`/console/classes/${id}/members`, { name: '손님', phone: '010-7777-1234', amount: '90,000' }, { from: `/console/classes/${id}` });
    assert.equal(r.status, 303);
    r = await c.post(`/console/classes/${id}/members`, { name: '손님', phone: '01077771234' }, { from: `/console/classes/${id}` });
    assert.equal(r.status, 400);
    assert.ok(textOf(r.text).includes('이름과 전화번호가 같은 분이 이미 이 반에 있습니다.'));
    const guest = await db().selectFrom('class_members').select(['id', 'amount']).where('class_id', '=', id!).where('name', '=', '손님').executeTakeFirstOrThrow();
    assert.equal(Number(guest.amount), 90_000);
    r = await c.post(`/console/classes/${id}/members/${guest.id}/delete`, {}, { from: `/console/classes/${id}` });
    assert.equal(r.status, 303);

    // A CSV with a bad row changes nothing and says which line, in Korean.
    r = await c.upload(`/console/classes/${id}/import`, { mode: 'replace' }, { field: 'file', name: 'bad.csv', content: '이름,전화번호,금액\n가,01012345678,1000\n나,0101,1000\n' }, `/console/classes/${id}`);
    assert.equal(r.status, 400);
    assert.ok(textOf(r.text).includes('3번째 줄 (나): 전화번호는 10~11자리 숫자여야 합니다'), textOf(r.text));
    assert.equal((await db().selectFrom('class_members').select('id').where('class_id', '=', id!).execute()).length, 30);
    r = await c.upload(`/console/classes/${id}/import`, { mode: 'replace' }, { field: 'file', name: 'new.csv', content: '이름,전화번호\n가,01012345678\n나,01012345679\n' }, `/console/classes/${id}`);
    assert.equal(r.status, 303);
    assert.equal((await db().selectFrom('class_members').select('id').where('class_id', '=', id!).execute()).length, 2);
    r = await c.upload(`/console/classes/${id}/import`, { mode: 'append' }, { field: 'file', name: 'more.csv', content: '다,01012345670,50000\n' }, `/console/classes/${id}`);
    assert.equal(r.status, 303);
    assert.equal((await db().selectFrom('class_members').select('id').where('class_id', '=', id!).execute()).length, 3);

    r = await c.post(`/console/classes/${id}`, { name: '초등 피아노 B반', memo: '' }, { from: `/console/classes/${id}` });
    assert.equal(r.status, 303);
    r = await c.post(`/console/classes/${id}/archive`, {}, { from: `/console/classes/${id}` });
    assert.equal(r.status, 303);
    assert.ok(!textOf((await c.get('/console/classes')).text).includes('초등 피아노 B반'));
    assert.ok(textOf((await c.get('/console/classes?archived=1')).text).includes('초등 피아노 B반'));
    page = await c.get(`/console/classes/${id}`);
    text = textOf(page.text);
    assert.ok(text.includes('보관됨') && text.includes('보관 해제'));

    const audit = await db().selectFrom('audit_log').select('action').where('tenant_id', '=', owner.accountId).where('action', 'like', 'class.%').execute();
    assert.deepEqual(audit.map((a) => a.action).sort(), ['class.archive', 'class.create', 'class.members', 'class.members', 'class.members', 'class.members', 'class.update']);
  });

  test('a viewer sees classes but no forms, and cannot post', async () => {
    const { c } = await ownerClient(t);
    let r = await c.post('/console/classes', { name: '가반' }, { from: '/console/classes/new' });
    assert.equal(r.status, 303);
    const id = /cls_[A-Za-z0-9_-]+/.exec(r.location ?? '')![0];
    const viewer = await addMember(t, c, 'viewer');
    const page = await viewer.c.get(`/console/classes/${id}`);
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes(`action="/console/classes/${id}/members"`));
    r = await viewer.c.post(`/console/classes/${id}/archive`, {}, { from: `/console/classes/${id}` });
    assert.equal(r.status, 403);
    assert.equal((await viewer.c.get('/console/classes/new')).status, 403);
  });

  test('another team\'s class is not found', async () => {
    const a = await ownerClient(t);
    const b = await ownerClient(t);
    const r = await a.c.post('/console/classes', { name: '가반' }, { from: '/console/classes/new' });
    const id = /cls_[A-Za-z0-9_-]+/.exec(r.location ?? '')![0];
    assert.equal((await b.c.get(`/console/classes/${id}`)).status, 404);
    assert.equal((await b.c.post(`/console/classes/${id}/archive`, {}, { from: '/console/classes' })).status, 404);
  });
});
