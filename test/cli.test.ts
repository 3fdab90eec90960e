import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { openStore, type Store } from '../src/db/index.js';
import { cli, sunapBin as bin } from './helpers/cli.js';
import { createTestDatabase, engines } from './helpers/db.js';

const run = promisify(execFile);

for (const engine of engines) {
  describe(`sunap CLI [${engine}]`, () => {
    let url: string;
    let drop: () => Promise<void>;
    before(async () => {
      ({ url, drop } = await createTestDatabase(engine));
    });
    after(async () => drop?.());

    const { sunap, json, fails } = cli(() => url, '22'.repeat(32));

    test('migrate --json lists what it applied, then nothing', async () => {
      const first = await json('migrate');
      assert.deepEqual(Object.keys(first), ['applied']);
      assert.ok(first.applied.includes('0001_gateway'));
      assert.deepEqual(await json('migrate'), { applied: [] });
    });

    test('platform, store and key rotation: --json outputs and the key sealed at rest', async () => {
      const p = await json('platform', 'create', '--name', '학원 플랫폼');
      assert.deepEqual(Object.keys(p), ['platformCode', 'apiKey']);
      assert.match(p.platformCode, /^PC[0-9A-F]{10}$/);
      assert.ok(p.apiKey.length >= 32);
      const s = await json('store', 'create', '--platform-code', p.platformCode, '--name', '행복 피아노', '--ceo-name', '김대표', '--biz-reg-num', '1234567890', '--tel', '0212345678');
      assert.deepEqual(Object.keys(s), ['storeCode']);
      const noCat = await json('store', 'create', '--platform-code', p.platformCode, '--name', '무단말 상점', '--no-cat');
      const r = await json('platform', 'rotate-key', '--platform-code', p.platformCode, '--grace-seconds', '30');
      assert.deepEqual(Object.keys(r), ['platformCode', 'apiKey']);
      assert.equal(r.platformCode, p.platformCode);
      assert.notEqual(r.apiKey, p.apiKey);

      const store: Store = openStore(url);
      try {
        const stores = await store.db.selectFrom('stores').select(['code', 'cat_enabled', 'ceo_name']).where('platform_code', '=', p.platformCode).execute();
        assert.deepEqual(stores.map((x) => [x.code, x.cat_enabled]).sort(), [[s.storeCode, 1], [noCat.storeCode, 0]].sort());
        const keys = await store.db.selectFrom('platform_keys').select('key_sealed').where('platform_code', '=', p.platformCode).execute();
        assert.equal(keys.length, 2);
        for (const k of keys) {
          assert.ok(!k.key_sealed.includes(p.apiKey) && !k.key_sealed.includes(r.apiKey), 'API keys are encrypted at rest');
        }
      } finally {
        await store.close();
      }
      if (engine === 'sqlite') {
        const bytes = readFileSync(url.slice('sqlite:'.length)).toString('latin1');
        assert.ok(!bytes.includes(p.apiKey) && !bytes.includes(r.apiKey), 'the database file never holds a plain key');
      }
    });

    test('the human form prints the key once with a warning', async () => {
      const out = await sunap('platform', 'create', '--name', 'Plain');
      assert.match(out.stdout, /^platformCode: PC/m);
      assert.match(out.stdout, /^apiKey: /m);
      assert.match(out.stdout, /shown only this once/);
    });

    test('errors: non-zero exit, one line on stderr, nothing on stdout', async () => {
      for (const args of [
        ['platform', 'create', '--json'],
        ['store', 'create', '--platform-code', 'PCNOPE', '--name', 'x', '--json'],
        ['platform', 'rotate-key', '--platform-code', 'PCNOPE', '--json'],
        ['platform', 'rotate-key', '--platform-code', 'PCNOPE', '--grace-seconds', 'soon', '--json'],
        ['platform', 'create', '--name', 'x', '--bogus', '--json'],
        ['nonsense', '--json'],
      ]) {
        const e = await fails(...args);
        assert.notEqual(e.code, 0, args.join(' '));
        assert.equal(e.stdout, '', args.join(' '));
        assert.ok(e.stderr.trim().length > 0);
        assert.match(e.stderr.split('\n')[0]!, /^sunap: /);
      }
    });
  });
}

test('a bad configuration value stops the CLI with the variable named', async () => {
  try {
    await run(process.execPath, [bin, 'migrate', '--json'], { env: { ...process.env, DATABASE_URL: 'mysql://nope' } });
    assert.fail('expected failure');
  } catch (e) {
    const err = e as { code: number; stderr: string; stdout: string };
    assert.notEqual(err.code, 0);
    assert.equal(err.stdout, '');
    assert.match(err.stderr, /^sunap: DATABASE_URL: /);
  }
});

test('sunap serve refuses to start with a bad value, naming it', async () => {
  try {
    await run(process.execPath, [bin, 'serve'], { env: { ...process.env, DATABASE_URL: `sqlite:${join(resolve('.tmp'), 'serve-bad.db')}`, PORT: 'eighty' } });
    assert.fail('expected failure');
  } catch (e) {
    const err = e as { code: number; stderr: string };
    assert.equal(err.code, 2);
    assert.match(err.stderr, /configuration error: PORT: must be a whole number/);
  }
});
