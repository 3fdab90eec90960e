import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.js';

const dir = () => mkdtempSync(join(tmpdir(), 'sunap-cfg-'));

test('defaults are those of the README configuration table', () => {
  const d = dir();
  const c = loadConfig({ DATABASE_URL: `sqlite:${d}/x.db` });
  assert.equal(c.port, 8080);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.mode, 'sandbox');
  assert.equal(c.publicUrl, 'http://localhost:8080');
  assert.equal(c.paymentPageUrl, 'http://localhost:8080/checkout');
  assert.equal(c.publicPayPageUrl, 'http://localhost:8080/pay');
  assert.equal(c.allowPrivateTargets, true);
  assert.equal(c.signMaxSkewSeconds, 600);
  assert.deepEqual(c.costs, { ALIMTALK: 10, SMS: 30 });
  assert.equal(c.sqliteGroupCommit, true);
  assert.equal(c.pgPoolSize, 10);
  // The sandbox master key is generated once into the data directory and reused.
  const key = readFileSync(join(d, 'secret.key'), 'utf8').trim();
  assert.equal(key, c.secretKey.toString('hex'));
  assert.equal(loadConfig({ DATABASE_URL: `sqlite:${d}/x.db` }).secretKey.toString('hex'), key);
});

test('overrides and derived URLs', () => {
  const c = loadConfig({
    DATABASE_URL: `sqlite:${dir()}/x.db`, PORT: '9000', SUNAP_PUBLIC_URL: 'https://pay.example.com/',
    SUNAP_PAYMENT_PAGE_URL: 'https://checkout.example.com/p', SUNAP_ALLOW_PRIVATE_TARGETS: 'false', SUNAP_SIGN_MAX_SKEW_SECONDS: '0',
    SUNAP_SQLITE_GROUP_COMMIT: 'false', SUNAP_PG_POOL_SIZE: '1',
  });
  assert.equal(c.port, 9000);
  assert.equal(c.publicUrl, 'https://pay.example.com');
  assert.equal(c.paymentPageUrl, 'https://checkout.example.com/p');
  assert.equal(c.publicPayPageUrl, 'https://pay.example.com/pay');
  assert.equal(c.allowPrivateTargets, false);
  assert.equal(c.signMaxSkewSeconds, 0);
  assert.equal(c.sqliteGroupCommit, false);
  assert.equal(c.pgPoolSize, 1);
  assert.equal(loadConfig({ DATABASE_URL: `sqlite:${dir()}/x.db`, SUNAP_PG_POOL_SIZE: '1000' }).pgPoolSize, 1000);
});

test('a bad value is a clear start-up error naming the variable', () => {
  const base = { DATABASE_URL: `sqlite:${dir()}/x.db` };
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'eighty' }, /^PORT: /],
    [{ PORT: '70000' }, /^PORT: must be between/],
    [{ SUNAP_MODE: 'prod' }, /^SUNAP_MODE: must be sandbox or live/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: /],
    [{ SUNAP_PUBLIC_URL: 'ftp://x' }, /^SUNAP_PUBLIC_URL: /],
    [{ SUNAP_ALLOW_PRIVATE_TARGETS: 'maybe' }, /^SUNAP_ALLOW_PRIVATE_TARGETS: /],
    [{ SUNAP_SQLITE_GROUP_COMMIT: 'sometimes' }, /^SUNAP_SQLITE_GROUP_COMMIT: must be true or false/],
    [{ SUNAP_PG_POOL_SIZE: '0' }, /^SUNAP_PG_POOL_SIZE: must be between 1 and 1000/],
    [{ SUNAP_PG_POOL_SIZE: '1001' }, /^SUNAP_PG_POOL_SIZE: must be between 1 and 1000/],
    [{ SUNAP_PG_POOL_SIZE: 'ten' }, /^SUNAP_PG_POOL_SIZE: /],
    [{ SUNAP_SIGN_MAX_SKEW_SECONDS: '-1' }, /^SUNAP_SIGN_MAX_SKEW_SECONDS: /],
    [{ SUNAP_SECRET_KEY: 'short' }, /^SUNAP_SECRET_KEY: /],
    [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/],
    [{ SUNAP_MODE: 'live', SUNAP_SECRET_KEY: 'ab'.repeat(32) }, /SUNAP_CARD_PROCESSOR: live mode needs a real card processor/],
  ];
  for (const [env, re] of cases) {
    assert.throws(() => loadConfig({ ...base, ...env }), (e: unknown) => e instanceof ConfigError && re.test((e as Error).message), JSON.stringify(env));
  }
});
