import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPlatform, createStore, OperatorError, rotateKey } from '../../src/gateway/merchants.js';
import { SecretBox } from '../../src/platform/crypto.js';
import { forEachEngine } from '../helpers/app.js';
import { withDatabase, withFailingInserts } from '../helpers/db.js';

/** The operator's actions on platforms and stores (`sunap platform|store ...`), on the database itself. */
const box = new SecretBox(Buffer.alloc(32, 7));
const NOW = Date.UTC(2026, 10, 23, 1, 0, 0);
const refused = (message: string) => (e: unknown) => e instanceof OperatorError && e.message === message;

forEachEngine('platforms and stores', (engine) => {
  const h = withDatabase(engine);

  test('a platform: a PC code of ten capital hex digits, its name trimmed, its key sealed; a blank name is refused', async () => {
    await assert.rejects(createPlatform(h.db, box, NOW, { name: ' \t ' }), refused('--name: must not be empty'));
    const { platformCode, apiKey } = await createPlatform(h.db, box, NOW, { name: '  행복 플랫폼 ' });
    assert.match(platformCode, /^PC[0-9A-F]{10}$/);
    assert.match(apiKey, /^sk_/);
    const row = await h.db.selectFrom('platforms').selectAll().where('code', '=', platformCode).executeTakeFirstOrThrow();
    assert.equal(row.name, '행복 플랫폼');
    const key = await h.db.selectFrom('platform_keys').selectAll().where('platform_code', '=', platformCode).executeTakeFirstOrThrow();
    assert.equal(box.open(key.key_sealed), apiKey);
    assert.notEqual(key.key_sealed, apiKey);
    await assert.rejects(createPlatform(h.db, box, NOW, { name: 'again', code: platformCode }), refused(`platform ${platformCode} already exists`));
  });

  test('a key rotation needs a platform that exists', async () => {
    await assert.rejects(rotateKey(h.db, box, NOW, { platformCode: 'PC0000000000', graceSeconds: 60 }), refused('--platform-code: no platform PC0000000000'));
    const { platformCode } = await createPlatform(h.db, box, NOW, { name: 'p' });
    const r = await rotateKey(h.db, box, NOW, { platformCode, graceSeconds: 60 });
    assert.equal(r.platformCode, platformCode);
    assert.equal((await h.db.selectFrom('platform_keys').select('id').where('platform_code', '=', platformCode).execute()).length, 2);
  });

  test('a store: an SD code, its name trimmed, CAT on unless turned off; a blank name or an unknown platform is refused', async () => {
    const { platformCode } = await createPlatform(h.db, box, NOW, { name: 'p' });
    await assert.rejects(createStore(h.db, NOW, { platformCode, name: '   ' }), refused('--name: must not be empty'));
    await assert.rejects(createStore(h.db, NOW, { platformCode: 'PC0000000000', name: '상점' }), refused('--platform-code: no platform PC0000000000'));
    const a = await createStore(h.db, NOW, { platformCode, name: ' 행복 피아노 학원 ' });
    assert.match(a.storeCode, /^SD[0-9A-F]{10}$/);
    const row = await h.db.selectFrom('stores').selectAll().where('code', '=', a.storeCode).executeTakeFirstOrThrow();
    assert.deepEqual({ name: row.name, ceo: row.ceo_name, biz: row.biz_reg_num, tel: row.tel, cat: Number(row.cat_enabled), at: Number(row.created_at) },
      { name: '행복 피아노 학원', ceo: '', biz: '', tel: '', cat: 1, at: NOW });
    const b = await createStore(h.db, NOW, { platformCode, name: 's', cat: false, ceoName: '김대표', bizRegNum: '1234567890', tel: '0212345678' });
    const rowB = await h.db.selectFrom('stores').selectAll().where('code', '=', b.storeCode).executeTakeFirstOrThrow();
    assert.deepEqual([rowB.ceo_name, rowB.biz_reg_num, rowB.tel, Number(rowB.cat_enabled)], ['김대표', '1234567890', '0212345678', 0]);
    await assert.rejects(createStore(h.db, NOW, { platformCode, name: 's', code: a.storeCode }), refused(`store ${a.storeCode} already exists`));
  });

  test('a database failure while writing a platform or a store is thrown as it is, never reported as a duplicate', async () => {
    const { platformCode } = await createPlatform(h.db, box, NOW, { name: 'p' });
    for (const table of ['platforms', 'stores'] as const) {
      // Only the insert fails, as a full disk would make it fail.
      const write = (): Promise<unknown> => table === 'platforms' ? createPlatform(h.db, box, NOW, { name: 'q' }) : createStore(h.db, NOW, { platformCode, name: 's' });
      await assert.rejects(withFailingInserts(h.db, engine, table, write),
        (e: unknown) => !(e instanceof OperatorError) && /simulated write failure/.test(String((e as Error).message)));
    }
  });

  test('names people read refuse control characters (the operator\'s --name and --ceo-name): nothing is made; the same name without it is', async () => {
    const CONTROL = 'must not contain control characters (line breaks, tabs and the like)';
    await assert.rejects(createPlatform(h.db, box, NOW, { name: '플랫폼\n=1+1' }), refused(`--name: ${CONTROL}`));
    assert.equal((await h.db.selectFrom('platforms').select('code').where('name', 'like', '플랫폼%=1+1').execute()).length, 0);
    const { platformCode } = await createPlatform(h.db, box, NOW, { name: '플랫폼 =1+1' });
    await assert.rejects(createStore(h.db, NOW, { platformCode, name: '학원\t본점' }), refused(`--name: ${CONTROL}`));
    await assert.rejects(createStore(h.db, NOW, { platformCode, name: '학원', ceoName: '김\u0085대표' }), refused(`--ceo-name: ${CONTROL}`));
    assert.equal((await h.db.selectFrom('stores').select('code').where('platform_code', '=', platformCode).execute()).length, 0, 'nothing made');
    assert.ok((await createStore(h.db, NOW, { platformCode, name: '학원 본점', ceoName: '김대표' })).storeCode);
  });
});
