/**
 * The adapters against the fakes, one rule at a time on both sides of its boundary: the
 * providers' auth as the fakes check it, SMS/LMS by EUC-KR length, the Toss test-code header,
 * the card company table, and the provider settings.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { INVOICE_TEMPLATE } from '../../src/invoicing/index.js';
import { ConfigError, loadConfig } from '../../src/platform/config.js';
import { secretKeyWeakness } from '../../src/platform/providers.js';
import { eucKrBytes, SolapiMessaging, solapiAuthorization } from '../../src/ports/solapi-messaging.js';
import { cardCompany } from '../../src/ports/toss-codes.js';
import { TossCardProcessor } from '../../src/ports/toss-card-processor.js';
import { FAKE_SOLAPI } from '../fakes/solapi.js';
import { LIVE_SECRET_KEY, liveEnv, withFakes } from './support.js';

const card = { number: '4242424242424242', expiryMonth: '12', expiryYear: '39', holderId: '900101', passwordDigits: '12' };

describe('provider adapters against the fakes', () => {
  const f = withFakes();
  const solapi = (over: Partial<Record<keyof typeof FAKE_SOLAPI, string>> = {}) => new SolapiMessaging({ ...FAKE_SOLAPI, ...over, baseUrl: f.solapi.url, timeoutMs: 1500 });
  const toss = (over: { secretKey?: string; testCode?: string } = {}) => new TossCardProcessor({ secretKey: f.toss.secretKey, baseUrl: f.toss.url, timeoutMs: 1500, ...over });

  test('SMS up to 90 bytes in EUC-KR, LMS from 91 (Hangul counts two bytes)', async () => {
    assert.equal(eucKrBytes('가나a'), 5);
    const cases: [string, string][] = [['가'.repeat(45), 'SMS'], ['가'.repeat(45) + 'a', 'LMS'], ['a'.repeat(90), 'SMS'], ['a'.repeat(91), 'LMS']];
    for (const [i, [text, type]] of cases.entries()) {
      const r = await solapi().send({ idempotencyKey: `sms-${i}-${Date.now()}`, channel: 'SMS', to: '01012340001', text, link: '' });
      assert.equal(r.accepted, true);
      assert.equal(f.solapi.messages.at(-1)!.type, type, `${text.length} characters`);
    }
  });

  test('Solapi refuses a wrong secret, a date 15 minutes off and a signature used twice; the adapter never reuses one', async () => {
    const wrong = await solapi({ apiSecret: 'NOTTHESECRET000000000000000000AB' }).send({ idempotencyKey: 'k1', channel: 'SMS', to: '01012340002', text: 'x', link: '' });
    assert.equal(wrong.accepted, false);
    assert.match((wrong as { error: string }).error, /SignatureDoesNotMatch/);

    f.solapi.clockOffsetMs = 16 * 60_000;
    const skewed = await solapi().send({ idempotencyKey: 'k2', channel: 'SMS', to: '01012340002', text: 'x', link: '' });
    assert.match((skewed as { error: string }).error, /RequestTimeTooSkewed.*server clock is more than 15 minutes off/);
    f.solapi.clockOffsetMs = 14 * 60_000;
    assert.equal((await solapi().checkCredentials()).ok, true, 'within 15 minutes is accepted');
    f.solapi.clockOffsetMs = 0;

    const header = solapiAuthorization(FAKE_SOLAPI.apiKey, FAKE_SOLAPI.apiSecret);
    const once = await fetch(`${f.solapi.url}/messages/v4/list?limit=1`, { headers: { authorization: header } });
    const twice = await fetch(`${f.solapi.url}/messages/v4/list?limit=1`, { headers: { authorization: header } });
    assert.equal(once.status, 200);
    assert.equal(twice.status, 401);
    assert.equal(((await twice.json()) as { errorCode: string }).errorCode, 'DuplicatedSignature');
    assert.notEqual(solapiAuthorization('k', 's'), solapiAuthorization('k', 's'), 'a new salt every call');
    assert.equal(f.solapi.messages.filter((m) => m.to === '01012340002').length, 0);
  });

  test('ALIMTALK variables must fill the approved template; a message that does not match is refused', async () => {
    const bad = await solapi().send({ idempotencyKey: 'tpl-1', channel: 'ALIMTALK', to: '01012340003', text: 'not the template', link: '', variables: {} });
    assert.equal(bad.accepted, false);
    assert.match((bad as { error: string }).error, /3012/);
    assert.ok(INVOICE_TEMPLATE.includes('#{청구내용}'));
  });

  test('a TossPayments-Test-Code forces that error (test keys only), and codes map to Korean card company names', async () => {
    const r = await toss({ testCode: 'EXCEED_MAX_DAILY_PAYMENT_COUNT' }).approve({ idempotencyKey: `order-${Date.now()}`, amount: 1000, installmentMonth: '00', card });
    assert.deepEqual(r, { outcome: 'DECLINED', message: '이 카드의 하루 결제 횟수를 초과했습니다' });
    assert.equal(cardCompany('41'), '신한카드');
    assert.equal(cardCompany('W1'), '우리카드');
    assert.equal(cardCompany('11'), 'KB국민카드');
    assert.equal(cardCompany('ZZ'), '카드사(ZZ)');
    const installment = await toss().approve({ idempotencyKey: `order-i-${Date.now()}`, amount: 60_000, installmentMonth: '03', card });
    assert.equal(installment.outcome, 'APPROVED');
    assert.equal(f.toss.requests.at(-1)!.json.cardInstallmentPlan, 3);
    const lump = await toss().approve({ idempotencyKey: `order-l-${Date.now()}`, amount: 60_000, installmentMonth: '00', card });
    assert.equal(lump.outcome, 'APPROVED');
    assert.equal('cardInstallmentPlan' in f.toss.requests.at(-1)!.json, false, 'a lump sum sends no plan');
  });

  test('the same Idempotency-Key answers the first result and charges once', async () => {
    const key = `order-idem-${Date.now()}`;
    const [a, b] = await Promise.all([toss().approve({ idempotencyKey: key, amount: 1000, installmentMonth: '00', card }), toss().approve({ idempotencyKey: key, amount: 1000, installmentMonth: '00', card })]);
    assert.deepEqual(a, b);
    assert.equal(f.toss.approvals.get(key), 1);
    const cancel = { idempotencyKey: `cancel-${key}`, approvalNumber: '', amount: 1000, cardBin: '424242', cardLast4: '4242', processorRef: (a as { processorRef: string }).processorRef };
    assert.deepEqual(await toss().cancel(cancel), { outcome: 'CANCELED' });
    assert.deepEqual(await toss().cancel({ ...cancel, idempotencyKey: 'another-key' }), { outcome: 'CANCELED' }, 'already cancelled is success');
    assert.deepEqual(await toss().cancel({ ...cancel, processorRef: null }), { outcome: 'FAILED', message: 'the approval has no Toss paymentKey on record; cancel it in the Toss dashboard' });
  });
});

describe('provider settings', () => {
  const fakes = { toss: { secretKey: 'test_sk_x0000000', url: 'https://localhost:1' }, solapi: { url: 'https://localhost:2' } } as never;
  const load = (over: Record<string, string>) => loadConfig({ DATABASE_URL: 'sqlite::memory:', ...liveEnv(fakes), ...over });

  test('live mode with everything given starts; each setting is checked by name', () => {
    const c = load({});
    assert.equal(c.cardProcessor.kind, 'toss-keyin');
    assert.equal(c.messaging.kind, 'solapi');
    const cases: [Record<string, string>, RegExp][] = [
      [{ SUNAP_TOSS_SECRET_KEY: 'test_ck_clientkey000' }, /SUNAP_TOSS_SECRET_KEY: must be a Toss secret key/],
      [{ SUNAP_TOSS_API_URL: 'http://localhost:1' }, /SUNAP_TOSS_API_URL: must be an https:\/\/ URL/],
      [{ SUNAP_TOSS_SECRET_KEY: 'live_sk_abcdefgh12', SUNAP_TOSS_TEST_CODE: 'REJECT_CARD_COMPANY' }, /SUNAP_TOSS_TEST_CODE: only with a test key/],
      [{ SUNAP_SOLAPI_SENDER: '02-1234-5678' }, /SUNAP_SOLAPI_SENDER: must be the registered sender number/],
      [{ SUNAP_MESSAGING_PROVIDER: 'aligo' }, /SUNAP_MESSAGING_PROVIDER: must be sandbox or solapi/],
      [{ SUNAP_PUBLIC_URL: 'http://pay.example.com' }, /SUNAP_PUBLIC_URL: must be https:\/\/ in live mode/],
      [{ SUNAP_SECRET_KEY: '' }, /SUNAP_SECRET_KEY: required in live mode/],
    ];
    for (const [env, re] of cases) assert.throws(() => load(env), (e: unknown) => e instanceof ConfigError && re.test((e as Error).message), JSON.stringify(env));
    assert.doesNotThrow(() => load({ SUNAP_TOSS_SECRET_KEY: 'live_sk_abcdefgh12' }));
  });

  test('secret key strength: refused patterns, and a random key passes', () => {
    assert.match(secretKeyWeakness(Buffer.alloc(32))!, /only 1 distinct byte/);
    assert.match(secretKeyWeakness(Buffer.from('0123456789abcdef'.repeat(4), 'hex'))!, /only 8 distinct/);
    assert.match(secretKeyWeakness(Buffer.from(Array.from({ length: 32 }, (_, i) => (200 + 3 * i) % 256)))!, /counting sequence/);
    assert.equal(secretKeyWeakness(Buffer.from(LIVE_SECRET_KEY, 'hex')), null);
    const sandbox = loadConfig({ DATABASE_URL: 'sqlite::memory:', SUNAP_SECRET_KEY: '11'.repeat(32) });
    assert.deepEqual(sandbox.warnings.length, 1);
    assert.match(sandbox.warnings[0]!, /live mode would refuse it/);
  });
});
