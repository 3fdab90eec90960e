import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { DENSE_WINDOW, PARTIAL_MIN, PARTIAL_WINDOW, TRIGRAM_MIN } from '../../src/db/search.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { ownerClient, textOf } from './support.js';

forEachEngine('console: search by what a customer can tell you', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;
  const names = (page: string) => [...page.matchAll(/href="\/console\/invoices\/[0-9a-f-]{36}">([^<]+)</g)].map((m) => m[1]).sort();

  test('the rule: a part of 3 characters or more at any age; of 2 among the newest 1,000', () => {
    assert.equal(PARTIAL_MIN, 2);
    assert.equal(TRIGRAM_MIN, 3);
    assert.equal(PARTIAL_WINDOW, 1000);
    assert.equal(DENSE_WINDOW, 1000);
  });

  test('invoices: a phone\'s last 4 (student or guardian), part of a name (Korean), of a reason, of a number; the hint says so; another team sees none', async () => {
    const { c } = await ownerClient(t, { points: 10_000 });
    const csv = ['이름,전화번호,금액,보호자 전화번호', '김영희,010-1234-5678,10000,010-9999-7777', '박철수,010-2222-3333,20000,', '이영수,010-4444-5555,30000,'].join('\n');
    const pre = await c.post('/console/invoices/bulk/preview', { csv, reason: '겨울방학 특강' }, { from: '/console/invoices/bulk' });
    assert.equal(pre.status, 200);
    assert.equal((await c.post('/console/invoices/bulk', { csv, reason: '겨울방학 특강' }, { csrf: /name="_csrf" value="([^"]+)"/.exec(pre.text)![1]! })).status, 303);
    const q = async (term: string) => names((await c.get(`/console/invoices?q=${encodeURIComponent(term)}`)).text);
    assert.deepEqual(await q('5678'), ['김영희'], 'the phone\'s last 4');
    assert.deepEqual(await q('7777'), ['김영희'], 'the guardian phone\'s last 4');
    assert.deepEqual(await q('영희'), ['김영희'], 'part of a name');
    assert.deepEqual(await q('영수'), ['이영수']);
    assert.deepEqual(await q('1234-56'), ['김영희'], 'part of a number, dashes ignored');
    assert.deepEqual(await q('방학'), ['김영희', '박철수', '이영수'], 'part of the reason');
    assert.deepEqual(await q('영'), [], 'one character is not a part');
    assert.deepEqual(await q('010-2222-3333'), ['박철수'], 'the whole number still');
    const list = textOf((await c.get('/console/invoices')).text);
    assert.ok(list.includes('전화번호 뒤 4자리') && list.includes('이름 끝 2자(영희)') && list.includes('3자 이상은 전체에서, 2자는 최근 1,000건에서'), 'the hint says what can be searched');
    // Another team searches the same words and finds nothing of this one.
    const other = await ownerClient(t);
    for (const term of ['5678', '영희', '방학']) assert.deepEqual(names((await other.c.get(`/console/invoices?q=${encodeURIComponent(term)}`)).text), [], term);
  });

  test('a part of 2 characters is looked for among the newest 1,000 invoices; of 3 or more, a whole value, a name\'s last 2 or the last 4 at any age', async () => {
    const { owner, c } = await ownerClient(t, { points: 1000 });
    assert.equal((await c.post('/console/invoices/new', { requestId: `console-old-${randomUUID().slice(0, 8)}`, name: '오래된손님', phone: '010-8765-4321', amount: '5000', reason: '지난 청구' }, { from: '/console/invoices/new' })).status, 303);
    const old = await db().selectFrom('invoices').selectAll().where('account_id', '=', owner.accountId).executeTakeFirstOrThrow();
    // Newer invoices straight into the table (as many as the window), each a copy with its own ids.
    const add = async (n: number, from: number) => {
      for (let i = 0; i < n; i += 500) {
        const rows = Array.from({ length: Math.min(500, n - i) }, (_, j) => {
          const { id: _id, ...rest } = old;
          void _id;
          const k = from + i + j;
          return { ...rest, unique_id: randomUUID(), trans_seqno: `W${k}${randomUUID().slice(0, 8)}`, request_id: null, request_hash: null, receiver_name: `새고객${k}`, receiver_phone: '01000000000', reason: '새 청구', created_at: Number(old.created_at) + 1 + k };
        });
        await db().insertInto('invoices').values(rows).execute();
      }
    };
    await add(PARTIAL_WINDOW - 1, 0);
    const q = async (term: string) => (await c.get(`/console/invoices?q=${encodeURIComponent(term)}`)).text.includes('오래된손님');
    assert.ok(await q('된손'), 'the 1,000th newest is still looked at');
    await add(1, PARTIAL_WINDOW);
    assert.ok(!(await q('된손')), 'the 1,001st newest is past the window for 2 characters');
    assert.ok(await q('래된손'), '3 characters: through the text index, at any age');
    assert.ok(await q('손님'), 'the name\'s last 2 characters, at any age');
    assert.ok(await q('오래된손님'), 'the whole name at any age');
    assert.ok(await q('4321'), 'the last 4 at any age');
    await sql`delete from invoices where account_id = ${owner.accountId} and trans_seqno like 'W%'`.execute(db());
  });
});
