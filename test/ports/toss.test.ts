import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { OutcomeUnknown } from '../../src/ports/card-processor.js';
import { APPROVE_ERRORS, approveError, CARD_COMPANIES, cardCompany } from '../../src/ports/toss-codes.js';
import { TossCardProcessor } from '../../src/ports/toss-card-processor.js';
import { captureLog } from '../helpers/log.js';
import { ScriptedServer } from '../helpers/scripted-server.js';

/**
 * The Toss Payments adapter's mapping of each answer Toss documents (docs/going-live.md, "Toss
 * Payments"), one scripted answer at a time: what an approval and a cancel send, what every
 * outcome becomes, the look-up after a lost answer, and the doctor's key check. The behaviour
 * against a fake that checks Toss's auth and idempotency is in test/live/adapters and cards.
 */
describe('Toss adapter, answer by answer', () => {
  // Any other answer is Toss's "no such payment".
  const server = new ScriptedServer({ status: 404, body: { code: 'NOT_FOUND_PAYMENT', message: '존재하지 않는 결제 정보 입니다.' } });
  const { seen, script } = server;
  let base: string;
  before(async () => {
    base = (await server.start()).url;
  });
  after(() => server.close());
  const { lines, log } = captureLog();
  beforeEach(() => {
    server.reset();
    lines.length = 0;
  });
  const toss = (over: { testCode?: string; secretKey?: string } = {}) => new TossCardProcessor({ secretKey: 'test_sk_abc', baseUrl: base, timeoutMs: 300, ...over }, log);
  const card = { number: '4242424242424242', expiryMonth: '12', expiryYear: '39', holderId: '900101', passwordDigits: '12' };
  const approval = (over: { installmentMonth?: string; orderName?: string } = {}) => ({ idempotencyKey: 'att/1', amount: 11000, installmentMonth: '00', card, orderName: '수업료', ...over });
  const done = (card: Record<string, string> = { approveNo: '00012345', issuerCode: '41', acquirerCode: '31' }) => ({ status: 200, body: { status: 'DONE', paymentKey: 'pk_1', card } });

  describe('approve', () => {
    test('one POST of the card and amount, keyed by the attempt, with Basic auth; the test code only when set', async () => {
      script.push(done(), done());
      await toss().approve(approval());
      assert.equal(seen[0]!.method, 'POST');
      assert.equal(seen[0]!.path, '/v1/payments/key-in');
      assert.equal(seen[0]!.headers.authorization, `Basic ${Buffer.from('test_sk_abc:').toString('base64')}`);
      assert.equal(seen[0]!.headers['content-type'], 'application/json');
      assert.equal(seen[0]!.headers['idempotency-key'], 'att/1');
      assert.equal(seen[0]!.headers['tosspayments-test-code'], undefined);
      assert.deepEqual(JSON.parse(seen[0]!.body), {
        amount: 11000, orderId: 'att/1', orderName: '수업료', cardNumber: '4242424242424242', cardExpirationYear: '39', cardExpirationMonth: '12',
        customerIdentityNumber: '900101', cardPassword: '12',
      });
      await toss({ testCode: 'REJECT_CARD_COMPANY' }).approve(approval());
      assert.equal(seen[1]!.headers['tosspayments-test-code'], 'REJECT_CARD_COMPANY');
    });

    test('an installment plan is sent from two months; none for a lump sum or one month; the order name defaults and is cut at 100', async () => {
      for (let i = 0; i < 5; i++) script.push(done());
      await toss().approve(approval({ installmentMonth: '02' }));
      await toss().approve(approval({ installmentMonth: '01' }));
      await toss().approve(approval({ installmentMonth: '00' }));
      await toss().approve(approval({ orderName: '' }));
      await toss().approve(approval({ orderName: '가'.repeat(150) }));
      const sent = seen.map((s) => JSON.parse(s.body));
      assert.equal(sent[0].cardInstallmentPlan, 2);
      assert.equal('cardInstallmentPlan' in sent[1], false);
      assert.equal('cardInstallmentPlan' in sent[2], false);
      assert.equal(sent[3].orderName, '결제');
      assert.equal(sent[4].orderName, '가'.repeat(100));
    });

    test('DONE is approved with the approval number, the payment key, and the issuer and acquirer by name', async () => {
      script.push(done(), done({ approveNo: '7', issuerCode: '11' }), done({ approveNo: '8', issuerCode: 'ZZ', acquirerCode: '' }));
      assert.deepEqual(await toss().approve(approval()), { outcome: 'APPROVED', approvalNumber: '00012345', processorRef: 'pk_1', issuerName: '신한카드', accepterName: 'BC카드' });
      assert.deepEqual(await toss().approve(approval()), { outcome: 'APPROVED', approvalNumber: '7', processorRef: 'pk_1', issuerName: 'KB국민카드', accepterName: 'KB국민카드' }, 'no acquirer: the issuer');
      assert.deepEqual(await toss().approve(approval()), { outcome: 'APPROVED', approvalNumber: '8', processorRef: 'pk_1', issuerName: '카드사(ZZ)', accepterName: '카드사(ZZ)' });
    });

    test('an order that is cancelled, aborted or expired is declined; any other state is not known yet', async () => {
      script.push(
        { status: 200, body: { status: 'CANCELED' } }, { status: 200, body: { status: 'PARTIAL_CANCELED' } },
        { status: 200, body: { status: 'ABORTED', failure: { code: 'REJECT_CARD_COMPANY', message: 'x' } } },
        { status: 200, body: { status: 'EXPIRED', failure: { code: 'SOMETHING_NEW', message: '새로운 사유' } } },
        { status: 200, body: { status: 'ABORTED', failure: { code: 'PROVIDER_ERROR' } } },
        { status: 200, body: { status: 'ABORTED', failure: { code: 'DUPLICATED_ORDER_ID' } } },
        { status: 200, body: { status: 'IN_PROGRESS' } }, { status: 200, body: {} },
      );
      const t = toss();
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '카드사에서 취소된 결제입니다' });
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '카드사에서 취소된 결제입니다' });
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '카드사에서 승인을 거절했습니다' });
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '새로운 사유' });
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '카드사 처리 중 일시적인 오류가 발생했습니다. 잠시 후 다시 시도해 주세요' });
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '카드 결제가 승인되지 않았습니다' });
      await assert.rejects(t.approve(approval()), (e: Error) => e instanceof OutcomeUnknown && e.message === 'toss: the order is IN_PROGRESS');
      await assert.rejects(t.approve(approval()), (e: Error) => e instanceof OutcomeUnknown && e.message === 'toss: the order is in an unknown state');
    });

    test('a refusal: a decline with the page\'s words, or an error (logged; a refused key logged as such)', async () => {
      script.push(
        { status: 400, body: { code: 'INVALID_CARD_EXPIRATION', message: '유효기간 오류' } },
        { status: 400, body: { code: 'NEW_CODE', message: '토스의 새 사유' } },
        { status: 401, body: { code: 'UNAUTHORIZED_KEY', message: '인증되지 않은 시크릿 키' } },
      );
      const t = toss();
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '카드 유효기간을 다시 확인해 주세요' });
      assert.deepEqual(await t.approve(approval()), { outcome: 'DECLINED', message: '토스의 새 사유' });
      assert.equal(lines.length, 0, 'a decline is not an operator problem');
      assert.deepEqual(await t.approve(approval()), { outcome: 'ERROR', message: '결제 설정 문제로 지금은 결제할 수 없습니다. 가맹점에 문의해 주세요' });
      assert.deepEqual(lines.map((l) => [l.level, l.code, l.msg]), [
        [50, 'UNAUTHORIZED_KEY', 'toss: the secret key was refused (SUNAP_TOSS_SECRET_KEY); run sunap doctor'],
        [40, 'UNAUTHORIZED_KEY', 'toss: approval not made'],
      ]);
      assert.deepEqual([lines[1]!.attempt, lines[1]!.status], ['att/1', 401]);
    });

    test('each of the three key codes is logged as a refused key; a decline code is not', async () => {
      for (const code of ['UNAUTHORIZED_KEY', 'INVALID_API_KEY', 'FORBIDDEN_REQUEST', 'INVALID_CARD_NUMBER']) {
        lines.length = 0;
        script.push({ status: 401, body: { code } });
        await toss().approve(approval());
        assert.equal(lines.some((l) => l.msg === 'toss: the secret key was refused (SUNAP_TOSS_SECRET_KEY); run sunap doctor'), code !== 'INVALID_CARD_NUMBER', code);
      }
    });

    test('an order already processed, or an open outcome, is settled by looking the order up', async () => {
      script.push({ status: 409, body: { code: 'DUPLICATED_ORDER_ID' } }, done());
      assert.equal((await toss().approve(approval())).outcome, 'APPROVED');
      assert.deepEqual(seen.map((s) => `${s.method} ${s.path}`), ['POST /v1/payments/key-in', 'GET /v1/payments/orders/att%2F1']);
      assert.equal(seen[1]!.body, '');
      assert.equal(seen[1]!.headers['content-type'], undefined);
      assert.deepEqual(lines.map((l) => l.msg), ['toss: approval outcome open; looking it up']);
      assert.deepEqual([lines[0]!.attempt, lines[0]!.code, lines[0]!.status], ['att/1', 'DUPLICATED_ORDER_ID', 409]);
      seen.length = 0;
      script.push({ status: 500, body: { code: 'FAILED_INTERNAL_SYSTEM_PROCESSING' } }, { status: 200, body: { status: 'ABORTED', failure: { code: 'REJECT_CARD_PAYMENT' } } });
      assert.deepEqual(await toss().approve(approval()), { outcome: 'DECLINED', message: '한도 초과 또는 잔액 부족으로 결제되지 않았습니다' });
      assert.equal(seen.length, 2);
    });

    test('a lost answer: looked up after a pause; not found or a failed look-up leaves the outcome unknown', async () => {
      script.push({ status: 200, body: { status: 'DONE' }, delayMs: 1000 }, done());
      const started = Date.now();
      assert.equal((await toss().approve(approval())).outcome, 'APPROVED');
      assert.ok(Date.now() - started >= 300 + 500 - 20, 'the time limit, then the pause');
      assert.equal(lines[0]!.msg, 'toss: approval unanswered; looking it up');
      assert.deepEqual([lines[0]!.attempt, lines[0]!.problem], ['att/1', `POST ${base}/v1/payments/key-in: no answer within 300 ms`]);
      script.push({ status: 500, body: {}, delayMs: 1000 });
      await assert.rejects(toss().approve(approval()), (e: Error) => e instanceof OutcomeUnknown && e.message === 'toss: the approval\'s answer was lost and the order is not known yet');
      script.push({ status: 500, body: {}, delayMs: 1000 }, { status: 500, body: { code: 'X' } });
      await assert.rejects(toss().approve(approval()), (e: Error) => e instanceof OutcomeUnknown
        && e.message === 'toss: the approval\'s answer was lost and the look-up failed (toss: look-up of an order answered 500 X)');
    });
  });

  test('lookup: an order Toss never saw is null (both of its not-found codes, on a 404); anything else is an error', async () => {
    script.push({ status: 404, body: { code: 'NOT_FOUND_PAYMENT' } }, { status: 404, body: { code: 'NOT_FOUND' } }, { status: 404, body: { code: 'NOT_FOUND_METHOD' } }, { status: 400, body: { code: 'NOT_FOUND_PAYMENT' } });
    assert.equal(await toss().lookup('k'), null);
    assert.equal(await toss().lookup('k'), null);
    await assert.rejects(toss().lookup('k'), (e: Error) => e.message === 'toss: look-up of an order answered 404 NOT_FOUND_METHOD');
    await assert.rejects(toss().lookup('k'), (e: Error) => e.message === 'toss: look-up of an order answered 400 NOT_FOUND_PAYMENT');
  });

  test('its own time budget: two calls and the pause before the look-up', () => {
    assert.equal(toss().callLimitMs, 2 * 300 + 500);
  });

  test('without a logger every path still answers (the logger is optional)', async () => {
    const quiet = new TossCardProcessor({ secretKey: 'test_sk_abc', baseUrl: base, timeoutMs: 300 });
    script.push({ status: 401, body: { code: 'UNAUTHORIZED_KEY' } }, { status: 400, body: { code: 'REJECT_CARD_COMPANY' } }, { status: 409, body: { code: 'DUPLICATED_ORDER_ID' } }, done());
    assert.equal((await quiet.approve(approval())).outcome, 'ERROR');
    assert.equal((await quiet.approve(approval())).outcome, 'DECLINED');
    assert.equal((await quiet.approve(approval())).outcome, 'APPROVED');
    script.push({ status: 200, body: {}, delayMs: 1000 }, done());
    assert.equal((await quiet.approve(approval())).outcome, 'APPROVED');
    script.push({ status: 200, body: {}, delayMs: 1000 }, { status: 401, body: { code: 'UNAUTHORIZED_KEY' } });
    assert.equal((await quiet.cancel({ idempotencyKey: 'c', approvalNumber: '1', amount: 1, cardBin: '', cardLast4: '', processorRef: 'pk', reason: '' } as never)).outcome, 'FAILED');
  });

  test('an error that is not a lost answer (a malformed base URL) is thrown as it is, never looked up or retried', async () => {
    const broken = new TossCardProcessor({ secretKey: 'test_sk_abc', baseUrl: 'not a url', timeoutMs: 300 }, log);
    await assert.rejects(broken.approve(approval()), (e: Error) => e instanceof TypeError && !(e instanceof OutcomeUnknown));
    await assert.rejects(broken.cancel({ idempotencyKey: 'c', approvalNumber: '1', amount: 1, cardBin: '', cardLast4: '', processorRef: 'pk', reason: '' } as never), TypeError);
    assert.equal(lines.length, 0, 'no look-up or retry was logged');
  });

  describe('cancel', () => {
    const cancel = (over: { processorRef?: string | null; reason?: string } = {}) => ({
      idempotencyKey: 'cx-1', approvalNumber: '1', amount: 11000, cardBin: '424242', cardLast4: '4242', processorRef: 'pk/1', reason: '고객 요청', ...over,
    });
    test('one POST to the payment\'s cancel with the reason, keyed; a default reason; cut at 200', async () => {
      script.push({ status: 200, body: {} }, { status: 200, body: {} }, { status: 200, body: {} });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'CANCELED' });
      assert.equal(seen[0]!.path, '/v1/payments/pk%2F1/cancel');
      assert.equal(seen[0]!.headers['idempotency-key'], 'cx-1');
      assert.deepEqual(JSON.parse(seen[0]!.body), { cancelReason: '고객 요청' });
      await toss().cancel(cancel({ reason: '' }) as never);
      await toss().cancel(cancel({ reason: '가'.repeat(250) }) as never);
      assert.equal(JSON.parse(seen[1]!.body).cancelReason, '결제 취소');
      assert.equal(JSON.parse(seen[2]!.body).cancelReason, '가'.repeat(200));
    });
    test('without a payment key nothing is sent', async () => {
      assert.deepEqual(await toss().cancel(cancel({ processorRef: null }) as never), { outcome: 'FAILED', message: 'the approval has no Toss paymentKey on record; cancel it in the Toss dashboard' });
      assert.equal(seen.length, 0);
    });
    test('already cancelled or refunded is success', async () => {
      script.push({ status: 400, body: { code: 'ALREADY_CANCELED_PAYMENT' } }, { status: 400, body: { code: 'ALREADY_REFUND_PAYMENT' } });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'CANCELED' });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'CANCELED' });
    });
    test('a server error, a request still processing or no answer is tried once more with the same key; then not confirmed', async () => {
      script.push({ status: 500, body: {} }, { status: 200, body: {} });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'CANCELED' });
      script.push({ status: 409, body: { code: 'IDEMPOTENT_REQUEST_PROCESSING' } }, { status: 200, body: {} });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'CANCELED' });
      script.push({ status: 200, body: {}, delayMs: 1000 }, { status: 200, body: {} });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'CANCELED' });
      assert.deepEqual(lines.filter((l) => l.msg === 'toss: cancel unanswered').map((l) => l.key), ['cx-1']);
      script.push({ status: 502, body: {} }, { status: 503, body: {} }, { status: 200, body: {} });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'FAILED', message: 'Toss did not confirm the cancel; request it again (the same cancel is never made twice)' });
      assert.equal(seen.length, 8, 'two tries each, never a third');
      assert.ok(seen.every((s) => s.headers['idempotency-key'] === 'cx-1'));
    });
    test('a refusal names its code and message, or the status and a plain reason; a refused key is logged', async () => {
      script.push({ status: 400, body: { code: 'NOT_CANCELABLE_PAYMENT', message: '취소 할 수 없는 결제 입니다.' } }, { status: 403, body: {} }, { status: 401, body: { code: 'UNAUTHORIZED_KEY', message: 'm' } });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'FAILED', message: 'NOT_CANCELABLE_PAYMENT: 취소 할 수 없는 결제 입니다.' });
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'FAILED', message: '403: the cancel was refused' });
      assert.equal(lines.length, 0);
      assert.deepEqual(await toss().cancel(cancel() as never), { outcome: 'FAILED', message: 'UNAUTHORIZED_KEY: m' });
      assert.deepEqual(lines.map((l) => [l.level, l.code, l.msg]), [[50, 'UNAUTHORIZED_KEY', 'toss: the secret key was refused (SUNAP_TOSS_SECRET_KEY); run sunap doctor']]);
      assert.equal(seen.length, 3, 'a refusal is not retried');
    });
  });

  test('the doctor\'s key check: 404 on an order that cannot exist means accepted; 401 or a key code refused; anything else unexpected', async () => {
    script.push({ status: 404, body: { code: 'NOT_FOUND_PAYMENT' } }, { status: 401, body: {} }, { status: 403, body: { code: 'FORBIDDEN_REQUEST' } }, { status: 500, body: { code: 'X' } });
    assert.deepEqual(await toss().checkCredentials(), { ok: true, detail: `toss test key at ${base}: the secret key was accepted` });
    assert.match(seen[0]!.path, /^\/v1\/payments\/orders\/sunap-doctor-[0-9a-f-]{36}$/);
    assert.deepEqual(await toss({ secretKey: 'live_sk_x' }).checkCredentials(), { ok: false, detail: `toss live key at ${base}: the secret key was refused (401); check SUNAP_TOSS_SECRET_KEY` });
    assert.deepEqual(await toss().checkCredentials(), { ok: false, detail: `toss test key at ${base}: the secret key was refused (FORBIDDEN_REQUEST); check SUNAP_TOSS_SECRET_KEY` });
    assert.deepEqual(await toss().checkCredentials(), { ok: false, detail: `toss test key at ${base}: unexpected answer 500 X` });
    script.push({ status: 404, body: {}, delayMs: 1000 });
    const slow = await toss().checkCredentials();
    assert.equal(slow.ok, false);
    assert.match(slow.detail, new RegExp(`^test key at ${base}: GET ${base}/v1/payments/orders/sunap-doctor-[0-9a-f-]+: no answer within 300 ms$`));
  });

  test('the code table: every known code maps as listed; unknown codes by status', () => {
    for (const [code, kind] of Object.entries(APPROVE_ERRORS)) assert.deepEqual(approveError(400, code, 'm'), kind, code);
    assert.deepEqual(approveError(500, 'NEW', 'm'), { kind: 'UNKNOWN' });
    assert.deepEqual(approveError(409, 'NEW', 'm'), { kind: 'UNKNOWN' });
    assert.deepEqual(approveError(429, 'NEW', 'm'), { kind: 'UNKNOWN' });
    assert.deepEqual(approveError(499, 'NEW', 'm'), { kind: 'DECLINED', message: 'm' });
    assert.deepEqual(approveError(400, 'NEW', ''), { kind: 'DECLINED', message: '카드 결제가 승인되지 않았습니다' });
    assert.equal(cardCompany(''), '카드사');
    assert.equal(cardCompany('4V'), 'VISA');
    assert.equal(cardCompany('??'), '카드사(??)');
  });

  test('every company in the table has a name, and every decline or error a message in Korean for the page', () => {
    assert.equal(Object.keys(CARD_COMPANIES).length, 31);
    for (const [code, name] of Object.entries(CARD_COMPANIES)) {
      assert.ok(name.length >= 2, code);
      assert.equal(cardCompany(code), name);
    }
    for (const [code, kind] of Object.entries(APPROVE_ERRORS)) {
      if (kind.kind === 'DECLINED' || kind.kind === 'ERROR') assert.match(kind.message, /^[가-힣0-9 ,.]+$/u, code);
    }
    const kinds = Object.values(APPROVE_ERRORS).map((k) => k.kind);
    assert.deepEqual([...new Set(kinds)].sort(), ['DECLINED', 'ERROR', 'EXISTS', 'UNKNOWN']);
  });
});
