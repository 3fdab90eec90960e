import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { addMember, ownerClient, textOf, type ConsoleClient } from './support.js';

/**
 * The store's processor settings in the console (docs/console.md, "Settings"): the owner sets
 * the processor, the way, the methods and the keys; managers and viewers may not; a secret is
 * sealed, never shown again and kept when left blank; bad values are named in Korean and change
 * nothing; the audit log names the secrets that are set, never their values.
 */
const SECRET = 'live_sk_Zq8Wm3Ny6Pt1Lc4Ha';
const CLIENT = 'live_ck_Vd2Rs7Kf9Bx5Tg0Ej';

forEachEngine('console: processor settings', (engine) => {
  const t = withApp(engine);
  const db = () => t.app.sunap.database.db;

  /** A form post with repeated fields (the methods' checkboxes). */
  async function save(c: ConsoleClient, fields: [string, string][]) {
    const body = new URLSearchParams([['_csrf', await c.csrf('/console/settings')], ...fields]);
    const res = await fetch(`${t.url}/console/settings/processor`, { method: 'POST', redirect: 'manual', body, headers: { cookie: c.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' } });
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  }

  test('the owner sets Toss with its keys: saved, the secret sealed and never shown again, kept when left blank', async () => {
    const { c } = await ownerClient(t);
    const page = textOf((await c.get('/console/settings')).text);
    assert.ok(page.includes('결제 설정') && page.includes('운영자의 결제사 설정으로 결제를 받습니다'));
    const r = await save(c, [['processor', 'toss'], ['way', 'checkout'], ['methods', 'CARD'], ['methods', 'VIRTUAL_ACCOUNT'], ['clientKey', CLIENT], ['secretKey', SECRET]]);
    assert.deepEqual([r.status, r.location], [303, '/console/settings?notice=processor']);
    const after = await c.get('/console/settings?notice=processor');
    const text = textOf(after.text);
    assert.ok(text.includes('결제 설정을 저장했습니다') && text.includes('토스페이먼츠 · 결제사 결제창 · 카드, 가상계좌'));
    assert.ok(after.text.includes(`value="${CLIENT}"`), 'the client key is shown');
    assert.ok(!after.text.includes(SECRET), 'the secret is not');
    assert.ok(text.includes('저장되어 있습니다. 바꿀 때만 입력하세요'));
    const row = await db().selectFrom('store_processor_keys').selectAll().where('store_code', '=', t.storeCode).executeTakeFirstOrThrow();
    assert.ok(!row.secrets_sealed.includes(SECRET));
    assert.equal(JSON.parse(t.app.sunap.box.open(row.secrets_sealed)).secretKey, SECRET);
    // Saved again without the secret: it stays.
    assert.equal((await save(c, [['processor', 'toss'], ['way', 'key-in'], ['methods', 'CARD'], ['clientKey', CLIENT], ['secretKey', '']])).status, 303);
    const again = await db().selectFrom('store_processor_keys').selectAll().where('store_code', '=', t.storeCode).executeTakeFirstOrThrow();
    assert.equal(JSON.parse(t.app.sunap.box.open(again.secrets_sealed)).secretKey, SECRET);
    assert.equal((await db().selectFrom('store_processors').select('way').where('store_code', '=', t.storeCode).executeTakeFirstOrThrow()).way, 'key-in');
    const audit = textOf((await c.get('/console/settings')).text);
    assert.ok(audit.includes('결제 설정 변경') && audit.includes('secrets set: toss.secretKey'));
    assert.ok(!t.logs.join('').includes(SECRET), 'not in a log line');
    if (engine === 'sqlite') {
      const file = t.databaseUrl.slice('sqlite:'.length);
      for (const f of [file, `${file}-wal`]) {
        try {
          assert.ok(!readFileSync(f).includes(Buffer.from(SECRET)), `not in ${f}`);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
    }
    // Back to the operator's settings: the keys go too.
    const reset = await c.post('/console/settings/processor/reset', {}, { from: '/console/settings' });
    assert.deepEqual([reset.status, reset.location], [303, '/console/settings?notice=processor-reset']);
    assert.equal((await db().selectFrom('store_processor_keys').select('store_code').where('store_code', '=', t.storeCode).execute()).length, 0);
    assert.ok(textOf((await c.get('/console/settings?notice=processor-reset')).text).includes('운영자의 결제 설정으로 되돌렸습니다'));
  });

  test('bad values: each field named in Korean, 400, nothing saved; the secret typed is not echoed', async () => {
    const { c } = await ownerClient(t);
    const cases: [[string, string][], string][] = [
      [[['processor', 'paypal'], ['methods', 'CARD']], '결제사를 목록에서 골라 주세요'],
      [[['processor', 'sandbox'], ['way', 'checkout']], '결제수단을 하나 이상 골라 주세요'],
      [[['processor', 'toss'], ['way', 'checkout'], ['methods', 'CARD'], ['clientKey', 'test_gck_Rb4TyN8sVe3JqHu1'], ['secretKey', 'test_sk_Gj9dQ2LmZx0PwKc7']], '토스페이먼츠 API 개별 연동의 클라이언트 키'],
      [[['processor', 'toss'], ['way', 'checkout'], ['methods', 'CARD'], ['clientKey', CLIENT], ['secretKey', 'test_sk_Gj9dQ2LmZx0PwKc7']], '클라이언트 키와 test/live가 같아야 합니다'],
      [[['processor', 'portone'], ['way', 'key-in'], ['methods', 'CARD']], '카드번호 입력(키인)은 샌드박스와 토스페이먼츠에서만'],
    ];
    for (const [fields, words] of cases) {
      const r = await save(c, fields);
      assert.equal(r.status, 400, JSON.stringify(fields));
      assert.ok(textOf(r.text).includes(words), `${JSON.stringify(fields)}: ${words}`);
      assert.ok(!r.text.includes('test_sk_Gj9dQ2LmZx0PwKc7'), 'a typed secret is never put back into the form');
    }
    assert.equal((await db().selectFrom('store_processors').select('store_code').where('store_code', '=', t.storeCode).execute()).length, 0, 'nothing saved');
  });

  test('managers and viewers may not see or change the settings (403)', async () => {
    const { c } = await ownerClient(t);
    for (const role of ['manager', 'viewer'] as const) {
      const m = await addMember(t, c, role);
      assert.equal((await m.c.get('/console/settings')).status, 403, role);
      const csrf = await m.c.csrf('/console/account');
      const r = await m.c.post('/console/settings/processor', { processor: 'sandbox', way: 'key-in', methods: 'CARD' }, { csrf });
      assert.equal(r.status, 403, role);
      assert.equal((await m.c.post('/console/settings/processor/reset', {}, { csrf })).status, 403, role);
    }
    assert.equal((await db().selectFrom('store_processors').select('store_code').execute()).length, 0);
  });
});
