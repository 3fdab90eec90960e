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
  // The queue's fairness limits (src/jobs/README.md, "Fairness").
  assert.deepEqual([c.jobConcurrency, c.jobStoreConcurrency, c.jobPlatformConcurrency], [64, 4, 16]);
  assert.equal(loadConfig({ DATABASE_URL: `sqlite:${d}/x.db`, SUNAP_JOB_PLATFORM_CONCURRENCY: '1' }).jobPlatformConcurrency, 1);
  assert.throws(() => loadConfig({ DATABASE_URL: `sqlite:${d}/x.db`, SUNAP_JOB_PLATFORM_CONCURRENCY: '0' }), /SUNAP_JOB_PLATFORM_CONCURRENCY/);
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

test('SUNAP_CARD_PROCESSOR: toss is the payment window and needs both keys of one pair; toss-keyin the card-number API and its secret key', () => {
  const base = { DATABASE_URL: 'sqlite::memory:', SUNAP_SECRET_KEY: '11'.repeat(32) };
  const load = (env: Record<string, string>) => loadConfig({ ...base, ...env });
  const problems = (env: Record<string, string>) => {
    try {
      load(env);
    } catch (e) {
      if (e instanceof ConfigError) return e.message;
      throw e;
    }
    return '';
  };
  const window = load({ SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_CLIENT_KEY: 'test_ck_abcdefgh12', SUNAP_TOSS_SECRET_KEY: 'test_sk_abcdefgh12' });
  assert.deepEqual(window.cardProcessor, { kind: 'toss', clientKey: 'test_ck_abcdefgh12', secretKey: 'test_sk_abcdefgh12', baseUrl: 'https://api.tosspayments.com', sdkUrl: 'https://js.tosspayments.com/v2/standard' });
  // The payment page's SDK: Toss's, or the rehearsal fake's (https only, like the API's URL).
  const keys = { SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_CLIENT_KEY: 'test_ck_abcdefgh12', SUNAP_TOSS_SECRET_KEY: 'test_sk_abcdefgh12' };
  assert.equal((load({ ...keys, SUNAP_TOSS_SDK_URL: 'https://localhost:9701/v2/standard' }).cardProcessor as { sdkUrl: string }).sdkUrl, 'https://localhost:9701/v2/standard');
  assert.equal(problems({ ...keys, SUNAP_TOSS_SDK_URL: 'http://localhost:9701/v2/standard' }), 'SUNAP_TOSS_SDK_URL: must be an https:// URL without credentials, got "http://localhost:9701/v2/standard"');
  assert.deepEqual(load({ SUNAP_CARD_PROCESSOR: 'toss-keyin', SUNAP_TOSS_SECRET_KEY: 'test_sk_abcdefgh12' }).cardProcessor, { kind: 'toss-keyin', secretKey: 'test_sk_abcdefgh12', baseUrl: 'https://api.tosspayments.com' });
  // Each missing variable is named, all at once.
  assert.equal(problems({ SUNAP_CARD_PROCESSOR: 'toss' }), '2 problems:\n  - SUNAP_TOSS_SECRET_KEY: required with this provider\n  - SUNAP_TOSS_CLIENT_KEY: required with this provider');
  assert.equal(problems({ SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_SECRET_KEY: 'test_sk_abcdefgh12' }), 'SUNAP_TOSS_CLIENT_KEY: required with this provider');
  assert.equal(problems({ SUNAP_CARD_PROCESSOR: 'toss-keyin' }), 'SUNAP_TOSS_SECRET_KEY: required with this provider', 'key-in needs no client key');
  assert.match(problems({ SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_CLIENT_KEY: 'live_ck_abcdefgh12', SUNAP_TOSS_SECRET_KEY: 'test_sk_abcdefgh12' }), /^SUNAP_TOSS_CLIENT_KEY: must be of the same mode as SUNAP_TOSS_SECRET_KEY/);
  assert.match(problems({ SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_CLIENT_KEY: 'test_gck_abcdefgh12', SUNAP_TOSS_SECRET_KEY: 'test_gsk_abcdefgh12' }), /SUNAP_TOSS_SECRET_KEY: a payment widget key .* SUNAP_TOSS_CLIENT_KEY: a payment widget key/s);
  assert.match(problems({ SUNAP_CARD_PROCESSOR: 'toss', SUNAP_TOSS_CLIENT_KEY: 'test_sk_abcdefgh12', SUNAP_TOSS_SECRET_KEY: 'test_sk_abcdefgh12' }), /^SUNAP_TOSS_CLIENT_KEY: must be a Toss client key/);
  assert.equal(problems({ SUNAP_CARD_PROCESSOR: 'tosspayments' }), 'SUNAP_CARD_PROCESSOR: must be sandbox, toss (Toss Payments\' payment window), toss-keyin (its card-number API, by contract only) or portone (PortOne V2\'s window, any PG), got "tosspayments"');
  // PortOne V2: every missing variable named at once; each key's format; the API's URL https only, for every store's keys too.
  assert.equal(problems({ SUNAP_CARD_PROCESSOR: 'portone' }), ['4 problems:', 'SUNAP_PORTONE_API_SECRET: required with this provider', 'SUNAP_PORTONE_STORE_ID: required with this provider',
    'SUNAP_PORTONE_CHANNEL_KEY: required with this provider', 'SUNAP_PORTONE_WEBHOOK_SECRET: required with this provider'].join('\n  - '));
  const portone = {
    SUNAP_CARD_PROCESSOR: 'portone', SUNAP_PORTONE_API_SECRET: 'a'.repeat(20), SUNAP_PORTONE_STORE_ID: `store-${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`,
    SUNAP_PORTONE_CHANNEL_KEY: `channel-key-${'1'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`, SUNAP_PORTONE_WEBHOOK_SECRET: `whsec_${'b'.repeat(20)}`,
  };
  const ok = load(portone);
  assert.deepEqual([ok.cardProcessor, ok.portoneApiUrl], [{ kind: 'portone', apiSecret: 'a'.repeat(20), storeId: portone.SUNAP_PORTONE_STORE_ID, channelKey: portone.SUNAP_PORTONE_CHANNEL_KEY, webhookSecret: `whsec_${'b'.repeat(20)}` }, 'https://api.portone.io']);
  assert.equal(problems({ ...portone, SUNAP_PORTONE_API_SECRET: 'a'.repeat(19) }), 'SUNAP_PORTONE_API_SECRET: must be a PortOne V2 API secret (20 to 500 letters, digits and _ - + / =), from 결제 연동 → 연동 정보 → V2 API');
  assert.equal(problems({ ...portone, SUNAP_PORTONE_STORE_ID: 'imp12345678' }), 'SUNAP_PORTONE_STORE_ID: must be a PortOne store id (store-…)');
  assert.equal(problems({ ...portone, SUNAP_PORTONE_CHANNEL_KEY: 'channel-key-x' }), 'SUNAP_PORTONE_CHANNEL_KEY: must be the channel key of a PG channel (channel-key-…)');
  assert.equal(problems({ ...portone, SUNAP_PORTONE_WEBHOOK_SECRET: `whsec_${'b'.repeat(19)}` }), 'SUNAP_PORTONE_WEBHOOK_SECRET: must be a PortOne webhook secret (whsec_…)');
  assert.equal(problems({ SUNAP_PORTONE_API_URL: 'http://127.0.0.1:9' }), 'SUNAP_PORTONE_API_URL: must be an https:// URL without credentials, got "http://127.0.0.1:9"');
  assert.equal(load({ SUNAP_PORTONE_API_URL: 'https://localhost:9704/' }).portoneApiUrl, 'https://localhost:9704');
  // Live mode takes PortOne as the operator's processor (no card-processor problem), and names each missing key.
  assert.doesNotMatch(problems({ ...portone, SUNAP_MODE: 'live', SUNAP_SECRET_KEY: 'ab'.repeat(32), SUNAP_PUBLIC_URL: 'https://pay.example.com' }), /SUNAP_CARD_PROCESSOR|SUNAP_PORTONE/);
  assert.match(problems({ ...portone, SUNAP_PORTONE_WEBHOOK_SECRET: '', SUNAP_MODE: 'live', SUNAP_SECRET_KEY: 'ab'.repeat(32), SUNAP_PUBLIC_URL: 'https://pay.example.com' }), /SUNAP_PORTONE_WEBHOOK_SECRET: required with this provider/);
  // Live mode without a real processor says which ones there are.
  assert.match(problems({ SUNAP_MODE: 'live', SUNAP_SECRET_KEY: 'ab'.repeat(32), SUNAP_PUBLIC_URL: 'https://pay.example.com' }),
    /SUNAP_CARD_PROCESSOR: live mode needs a real card processor: toss \(Toss Payments' payment window, with SUNAP_TOSS_CLIENT_KEY and SUNAP_TOSS_SECRET_KEY\) or toss-keyin/);
});
