import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_CLASS_MEMBERS, MAX_CLASSES } from '../../src/invoicing/classes.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { newAccount, type Login } from './support.js';

const member = (i: number, over: Record<string, unknown> = {}) => ({ name: `학생${i}`, phone: `0105550${String(i).padStart(4, '0')}`, ...over });

test('classes: the limits', () => {
  assert.equal(MAX_CLASSES, 200);
  assert.equal(MAX_CLASS_MEMBERS, 1000);
});

forEachEngine('billing: classes through the API', (engine) => {
  const t = withApp(engine);
  const call = (a: Login, method: string, path: string, body?: unknown) => t.request(method, path, body, a.h);

  test('create, read, rename, add and remove members, replace them, archive and bring back', async () => {
    const a = await newAccount(t);
    let r = await call(a, 'POST', '/app/v1/classes', {
      name: '초등 피아노 A반', memo: '월·수·금',
      members: [member(1, { guardianPhone: '01099990001', amount: 128000 }), member(2, { amount: 128000, items: [{ name: '레슨', price: 100000 }, { name: '교재', price: 28000 }] }), member(3)],
    });
    assert.equal(r.body.result_code, 0, JSON.stringify(r.body));
    const id = r.body.result_data.class.id as string;
    assert.match(id, /^cls_/);
    assert.equal(r.body.result_data.class.memberCount, 3);
    assert.deepEqual(r.body.result_data.members.map((m: any) => [m.name, m.guardianPhone, m.amount, m.items.length]), [
      ['학생1', '01099990001', 128000, 0], ['학생2', null, 128000, 2], ['학생3', null, null, 0],
    ]);

    r = await call(a, 'PUT', `/app/v1/classes/${id}`, { name: '초등 피아노 B반' });
    assert.equal(r.body.result_data.name, '초등 피아노 B반');
    assert.equal(r.body.result_data.memo, null);

    r = await call(a, 'POST', `/app/v1/classes/${id}/members`, { members: [member(4)] });
    assert.equal(r.body.result_data.length, 4);
    assert.equal(r.body.result_data[3].name, '학생4', 'added at the end');
    r = await call(a, 'POST', `/app/v1/classes/${id}/members`, { members: [member(1)] });
    assert.equal(r.status, 400);
    assert.equal(r.body.result_msg, 'members: someone with the same name and phone is in the class already');

    const removed = (await call(a, 'GET', `/app/v1/classes/${id}`)).body.result_data.members[0].id;
    assert.equal((await call(a, 'DELETE', `/app/v1/classes/${id}/members/${removed}`)).body.result_code, 0);
    assert.equal((await call(a, 'DELETE', `/app/v1/classes/${id}/members/${removed}`)).body.result_code, -10);
    r = await call(a, 'GET', `/app/v1/classes/${id}`);
    assert.deepEqual(r.body.result_data.members.map((m: any) => m.name), ['학생2', '학생3', '학생4']);

    r = await call(a, 'PUT', `/app/v1/classes/${id}/members`, { members: [member(7), member(8)] });
    assert.deepEqual(r.body.result_data.map((m: any) => m.name), ['학생7', '학생8']);

    // Archived: out of the list, in the archived list; back again.
    assert.equal((await call(a, 'POST', `/app/v1/classes/${id}/archive`)).body.result_data.archived, true);
    assert.equal((await call(a, 'GET', '/app/v1/classes')).body.result_data.classes.length, 0);
    assert.equal((await call(a, 'GET', '/app/v1/classes?archived=true')).body.result_data.classes[0].id, id);
    assert.equal((await call(a, 'POST', `/app/v1/classes/${id}/unarchive`)).body.result_data.archived, false);
    const list = (await call(a, 'GET', '/app/v1/classes')).body.result_data.classes;
    assert.equal(list.length, 1);
    assert.equal(list[0].memberCount, 2);
  });

  test('a person may be in several classes; a team has many; another team sees none of them', async () => {
    const a = await newAccount(t);
    const b = await newAccount(t);
    const one = (await call(a, 'POST', '/app/v1/classes', { name: '가반', members: [member(1)] })).body.result_data.class.id;
    const two = (await call(a, 'POST', '/app/v1/classes', { name: '나반', members: [member(1)] })).body.result_data.class.id;
    assert.notEqual(one, two);
    assert.equal((await call(a, 'GET', '/app/v1/classes')).body.result_data.classes.length, 2);
    for (const [m, p, body] of [['GET', `/app/v1/classes/${one}`, undefined], ['PUT', `/app/v1/classes/${one}`, { name: 'x' }], ['POST', `/app/v1/classes/${one}/archive`, undefined],
      ['POST', `/app/v1/classes/${one}/members`, { members: [member(2)] }], ['PUT', `/app/v1/classes/${one}/members`, { members: [] }]] as const) {
      const r = await call(b, m, p, body);
      assert.equal(r.status, 404, `${m} ${p}`);
      assert.equal(r.body.result_msg, 'id: no such class');
    }
    assert.equal((await call(b, 'GET', '/app/v1/classes')).body.result_data.classes.length, 0);
    assert.equal((await call(a, 'GET', `/app/v1/classes/${one}`)).body.result_data.members.length, 1, 'untouched');
  });

  test('bad input names the field and changes nothing', async () => {
    const a = await newAccount(t);
    const cases: [unknown, string][] = [
      [{ name: '' }, 'name: must not be empty'],
      [{ name: 'x'.repeat(41) }, 'name: must be at most 40 characters'],
      [{ name: '반', members: [member(1, { phone: '010-1234' })] }, 'members[0].phone: must be 10 to 11 digits'],
      [{ name: '반', members: [member(1), member(2, { name: '' })] }, 'members[1].name: must not be empty'],
      [{ name: '반', members: [member(1, { amount: 99 })] }, 'members[0].amount: must be a whole number of won from 100 to 2147483647'],
      [{ name: '반', members: [member(1, { items: [{ name: '레슨', price: 1000 }] })] }, 'members[0].amount: is required when the member has items'],
      [{ name: '반', members: [member(1, { amount: 2000, items: [{ name: '레슨', price: 1000 }] })] }, 'members[0].items: the net sum of the items (1000) must equal the amount (2000)'],
      [{ name: '반', members: [member(1), member(1)] }, 'members[1]: the same name and phone as members[0]; a person is in a class once'],
    ];
    for (const [body, msg] of cases) {
      const r = await call(a, 'POST', '/app/v1/classes', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.result_msg, msg);
    }
    assert.equal((await call(a, 'GET', '/app/v1/classes')).body.result_data.classes.length, 0);
    // 1000 members fit; 1001 do not (both sides of the limit).
    const many = Array.from({ length: MAX_CLASS_MEMBERS + 1 }, (_, i) => member(i));
    let r = await call(a, 'POST', '/app/v1/classes', { name: '큰 반', members: many });
    assert.equal(r.status, 400);
    assert.equal(r.body.result_msg, 'members: must have at most 1000 entries');
    r = await call(a, 'POST', '/app/v1/classes', { name: '큰 반', members: many.slice(0, MAX_CLASS_MEMBERS) });
    assert.equal(r.body.result_data.class.memberCount, 1000);
    r = await call(a, 'POST', `/app/v1/classes/${r.body.result_data.class.id}/members`, { members: [member(5000)] });
    assert.equal(r.body.result_msg, 'members: at most 1000 per class (it has 1000)');
  });

  test('a viewer reads classes but cannot change them', async () => {
    const a = await newAccount(t);
    const id = (await call(a, 'POST', '/app/v1/classes', { name: '가반' })).body.result_data.class.id;
    const db = t.app.sunap.database.db;
    await db.updateTable('accounts').set({ role: 'viewer' }).where('id', '=', a.accountId).execute();
    try {
      assert.equal((await call(a, 'GET', `/app/v1/classes/${id}`)).body.result_code, 0);
      const r = await call(a, 'PUT', `/app/v1/classes/${id}`, { name: 'x' });
      assert.equal(r.status, 403);
      assert.equal(r.body.result_msg, 'account: a viewer may only read');
    } finally {
      await db.updateTable('accounts').set({ role: 'owner' }).where('id', '=', a.accountId).execute();
    }
  });

  test('/docs: the class calls under Billing with the token, and the documented examples work as they are', async () => {
    const a = await newAccount(t);
    const spec = JSON.parse((await t.get('/docs/json')).text);
    for (const [m, p] of [['get', '/app/v1/classes'], ['post', '/app/v1/classes'], ['get', '/app/v1/classes/{id}'], ['put', '/app/v1/classes/{id}'],
      ['post', '/app/v1/classes/{id}/archive'], ['post', '/app/v1/classes/{id}/unarchive'], ['put', '/app/v1/classes/{id}/members'],
      ['post', '/app/v1/classes/{id}/members'], ['delete', '/app/v1/classes/{id}/members/{memberId}']] as const) {
      const op = spec.paths[p]?.[m];
      assert.ok(op, `${m} ${p} documented`);
      assert.deepEqual(op.tags, ['Billing']);
      assert.deepEqual(op.security, [{ accessToken: [] }]);
      assert.ok(op.responses['401'] && op.responses['403'], `${m} ${p} documents its token errors`);
    }
    const example = (p: string, m: string) => {
      const c = spec.paths[p][m].requestBody.content['application/json'];
      return c.example ?? c.schema.examples?.[0] ?? Object.values(c.examples ?? {})[0];
    };
    const created = await call(a, 'POST', '/app/v1/classes', example('/app/v1/classes', 'post'));
    assert.equal(created.body.result_code, 0, JSON.stringify(created.body));
    assert.equal(created.body.result_data.class.memberCount, 3);
    const id = created.body.result_data.class.id;
    for (const [m, p] of [['put', '/app/v1/classes/{id}'], ['put', '/app/v1/classes/{id}/members'], ['post', '/app/v1/classes/{id}/members']] as const) {
      const r = await call(a, m.toUpperCase(), p.replace('{id}', id), example(p, m));
      assert.equal(r.body.result_code, 0, `${m} ${p}: ${JSON.stringify(r.body)}`);
    }
  });
});
