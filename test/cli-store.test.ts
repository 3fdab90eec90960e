import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { openDatabase } from '../src/db/index.js';
import { forEachEngine } from './helpers/app.js';
import { cli } from './helpers/cli.js';
import { createTestDatabase } from './helpers/db.js';

/**
 * `sunap store show | set-processor | reset-processor` (README.md, "Operator CLI"): a store's
 * processor settings through the real bin, --json and text, the exit codes, every refusal naming
 * its option, and the secrets sealed at rest and never printed again.
 */
const SECRET = 'test_sk_Gj9dQ2LmZx0PwKc7';
const CLIENT = 'test_ck_Rb4TyN8sVe3JqHu1';

forEachEngine('sunap store processor settings', (engine) => {
  let url: string;
  let drop: () => Promise<void>;
  let storeCode: string;
  before(async () => {
    ({ url, drop } = await createTestDatabase(engine));
  });
  after(async () => drop?.());
  const { sunap, json, fails } = cli(() => url, '33'.repeat(32));

  test('a new store follows the operator; set-processor seals the secret and show never prints it; text output names what is set', async () => {
    const p = await json('platform', 'create', '--name', '플랫폼');
    storeCode = (await json('store', 'create', '--platform-code', p.platformCode, '--name', '학원')).storeCode;
    assert.deepEqual(await json('store', 'show', '--store-code', storeCode), {
      storeCode, processor: 'sandbox', way: 'checkout', methods: ['CARD', 'EASY_PAY', 'VIRTUAL_ACCOUNT'], source: 'operator', keys: [],
    });
    const set = await json('store', 'set-processor', '--store-code', storeCode, '--processor', 'toss', '--client-key', CLIENT, '--secret-key', SECRET, '--methods', 'card, easy_pay,TRANSFER');
    const expected = { storeCode, processor: 'toss', way: 'checkout', methods: ['CARD', 'EASY_PAY', 'TRANSFER'], source: 'store', keys: [{ processor: 'toss', clientKey: CLIENT, secretsSet: ['secretKey'] }] };
    assert.deepEqual(set, expected);
    assert.deepEqual(await json('store', 'show', '--store-code', storeCode), expected);
    const text = (await sunap('store', 'show', '--store-code', storeCode)).stdout;
    assert.equal(text, `storeCode: ${storeCode}\nprocessor: toss\nway: checkout\nmethods: CARD, EASY_PAY, TRANSFER\nsource: store\nkeys toss: clientKey ${CLIENT}; secrets set: secretKey\n`);
    assert.ok(!text.includes(SECRET));
    // A later change keeps the secret already given.
    assert.deepEqual((await json('store', 'set-processor', '--store-code', storeCode, '--way', 'key-in')).keys, expected.keys);
    const db = openDatabase(url);
    try {
      const row = await db.db.selectFrom('store_processor_keys').selectAll().where('store_code', '=', storeCode).executeTakeFirstOrThrow();
      assert.ok(!row.secrets_sealed.includes(SECRET) && !row.public_keys.includes(SECRET), 'sealed at rest');
      assert.match(row.secrets_sealed, /^v1\./);
      assert.equal((await db.db.selectFrom('store_processors').select('way').where('store_code', '=', storeCode).executeTakeFirstOrThrow()).way, 'key-in');
    } finally {
      await db.close();
    }
    if (engine === 'sqlite') {
      const file = url.slice('sqlite:'.length);
      for (const f of [file, `${file}-wal`]) {
        try {
          assert.ok(!readFileSync(f).includes(Buffer.from(SECRET)), `the secret is not in ${f}`);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
    }
  });

  test('every refusal names its option and changes nothing (exit 1); an unknown store is refused too', async () => {
    const before = await json('store', 'show', '--store-code', storeCode);
    const cases: [string[], RegExp][] = [
      [['--processor', 'paypal'], /^sunap: --processor: must be one of sandbox, toss, portone\n$/],
      [['--way', 'sideways'], /^sunap: --way: must be checkout or key-in\n$/],
      [['--processor', 'portone', '--way', 'key-in', '--api-secret', 'a'.repeat(32), '--store-id', `store-${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`, '--channel-key', `channel-key-${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`], /--way: PortOne takes payments through its window only/],
      [['--methods', 'CARD,CASH'], /^sunap: --methods: CASH is not a method; choose from CARD, EASY_PAY, TRANSFER, VIRTUAL_ACCOUNT, MOBILE_PHONE\n$/],
      [['--methods', ','], /^sunap: --methods: choose at least one of CARD, EASY_PAY, TRANSFER, VIRTUAL_ACCOUNT, MOBILE_PHONE\n$/],
      [['--client-key', 'test_gck_Rb4TyN8sVe3JqHu1'], /--client-key: a payment widget key/],
      [['--client-key', 'pk_live_123456789'], /--client-key: must be a Toss client key of the API individual integration/],
      [['--client-key', 'live_ck_Rb4TyN8sVe3JqHu1'], /--secret-key: is not of the same mode as the client key/],
      [['--api-secret', 'a'.repeat(32)], /--api-secret: toss takes no apiSecret/],
    ];
    for (const [args, re] of cases) {
      const r = await fails('store', 'set-processor', '--store-code', storeCode, ...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, re, args.join(' '));
      assert.equal(r.stdout, '');
    }
    assert.deepEqual(await json('store', 'show', '--store-code', storeCode), before, 'nothing changed');
    const unknown = await fails('store', 'show', '--store-code', 'SDNOSUCH');
    assert.deepEqual([unknown.code, unknown.stderr], [1, 'sunap: --store-code: no store SDNOSUCH\n']);
    const missing = await fails('store', 'set-processor', '--processor', 'toss');
    assert.equal(missing.code, 64, 'a missing --store-code is a usage error');
  });

  test('toss without keys of its own needs them when the operator has none; reset-processor goes back to the operator and forgets the keys', async () => {
    const p = await json('platform', 'create', '--name', '플랫폼2');
    const code = (await json('store', 'create', '--platform-code', p.platformCode, '--name', '학원2')).storeCode;
    const r = await fails('store', 'set-processor', '--store-code', code, '--processor', 'toss');
    assert.equal(r.stderr, 'sunap: --client-key: is required for toss (checkout); --secret-key: is required for toss (checkout)\n');
    assert.equal((await json('store', 'set-processor', '--store-code', code, '--processor', 'toss', '--way', 'key-in', '--secret-key', SECRET)).way, 'key-in', 'key-in needs only the secret key');
    assert.deepEqual(await json('store', 'reset-processor', '--store-code', code), {
      storeCode: code, processor: 'sandbox', way: 'checkout', methods: ['CARD', 'EASY_PAY', 'VIRTUAL_ACCOUNT'], source: 'operator', keys: [],
    });
    const db = openDatabase(url);
    try {
      assert.equal((await db.db.selectFrom('store_processor_keys').select('store_code').where('store_code', '=', code).execute()).length, 0);
    } finally {
      await db.close();
    }
  });
});
