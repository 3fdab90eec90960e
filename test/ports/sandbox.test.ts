import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { luhnValid } from '../../src/ports/card-processor.js';
import { SANDBOX_CARDS, SandboxCardProcessor } from '../../src/ports/sandbox-card-processor.js';
import { SandboxMessaging } from '../../src/ports/sandbox-messaging.js';
import { listSandboxMessages, normalizePhone, OUTBOX_MAX_LIMIT } from '../../src/ports/sandbox-repository.js';
import { engines, withDatabase } from '../helpers/db.js';

/**
 * The sandbox adapters behind the card and messaging ports (docs/reference.md, "Sandbox"), each
 * rule on both sides of its boundary, against a real database per engine: what a developer's
 * test card or test number does is the contract of the sandbox.
 */

const card = (number: string) => ({ number, expiryMonth: '12', expiryYear: '30', holderId: '900101', passwordDigits: '12' });
const approveReq = (key: string, number: string) => ({ idempotencyKey: key, amount: 1000, installmentMonth: '00', card: card(number) });

describe('luhnValid', () => {
  test('13 to 19 digits with a right check digit pass; 12 or 20 digits do not', () => {
    assert.equal(luhnValid('4242424242424242'), true);
    assert.equal(luhnValid('4242424242424241'), false, 'one digit off');
    assert.equal(luhnValid('4222222222222'), true, '13 digits');
    assert.equal(luhnValid('4000000000000000006'), true, '19 digits');
    // These two have a right check digit: only their length refuses them.
    assert.equal(luhnValid('422222222222'), false, '12 digits');
    assert.equal(luhnValid('40000000000000000002'), false, '20 digits');
    assert.equal(luhnValid('x4242424242424242'), false, 'a letter before');
    assert.equal(luhnValid('4242424242424242x'), false, 'a letter after');
    assert.equal(luhnValid('4242 4242 4242 4242'), false, 'spaces are not digits');
  });

  test('doubling above 9 subtracts 9 (5 doubled is 1, not 10)', () => {
    // 5 in a doubled place (second from the right) counts 1: "…59" sums 1 + 9 = 10, valid only
    // when 9 is subtracted (19 otherwise); "…58" sums 9. 4 doubled stays 8: "…42" sums 10.
    assert.equal(luhnValid('0000000000059'), true);
    assert.equal(luhnValid('0000000000058'), false);
    assert.equal(luhnValid('0000000000042'), true);
  });

  test('every sandbox card passes the check', () => {
    for (const n of Object.keys(SANDBOX_CARDS)) assert.equal(luhnValid(n), true, n);
  });
});

describe('sandbox card processor without a database (memory)', () => {
  test('remembers approvals and declines by key in memory; cancels without recording', async () => {
    const p = new SandboxCardProcessor();
    const first = await p.approve(approveReq('m-1', '4242424242424242'));
    assert.ok(first.outcome === 'APPROVED');
    assert.deepEqual(await p.approve(approveReq('m-1', '4242424242424242')), first, 'the same key: the first approval, not a second charge');
    assert.deepEqual(await p.lookup('m-1'), first);
    assert.equal(await p.lookup('m-2'), null);
    assert.deepEqual(await p.approve(approveReq('m-2', '4000000000000002')), { outcome: 'DECLINED', message: '카드사에서 승인을 거절했습니다' });
    assert.deepEqual(await p.lookup('m-2'), { outcome: 'DECLINED', message: '카드사에서 승인을 거절했습니다' });
    assert.deepEqual(await p.cancel({ idempotencyKey: 'm-c', approvalNumber: first.approvalNumber, amount: 1000, cardBin: '424242', cardLast4: '4242' }), { outcome: 'CANCELED' });
    assert.equal(await p.lookup('m-c'), null, 'without a database a cancel leaves no record');
  });
});

for (const engine of engines) {
  describe(`sandbox card processor [${engine}]`, () => {
    const handle = withDatabase(engine);

    test('the approving cards approve with their issuer and an 8-digit approval number', async () => {
      const p = new SandboxCardProcessor(handle.db);
      const a = await p.approve(approveReq('k-visa', '4242424242424242'));
      assert.equal(a.outcome, 'APPROVED');
      assert.ok(a.outcome === 'APPROVED');
      assert.equal(a.issuerName, '신한카드');
      assert.equal(a.accepterName, '신한카드');
      assert.match(a.approvalNumber, /^\d{8}$/);
      const b = await p.approve(approveReq('k-mc', '5555555555554444'));
      assert.ok(b.outcome === 'APPROVED');
      assert.equal(b.issuerName, 'KB국민카드');
    });

    test('the same idempotency key answers the first outcome, also to a second processor on the same database', async () => {
      const first = await new SandboxCardProcessor(handle.db).approve(approveReq('k-same', '4242424242424242'));
      const again = await new SandboxCardProcessor(handle.db).approve(approveReq('k-same', '4242424242424242'));
      assert.deepEqual(again, first);
      assert.deepEqual(await new SandboxCardProcessor(handle.db).lookup('k-same'), first);
      const other = await new SandboxCardProcessor(handle.db).approve(approveReq('k-other', '4242424242424242'));
      assert.ok(other.outcome === 'APPROVED' && first.outcome === 'APPROVED');
      assert.equal(await new SandboxCardProcessor(handle.db).lookup('k-never'), null);
    });

    test('declining cards decline with their message and are remembered; a non-sandbox card is declined', async () => {
      const p = new SandboxCardProcessor(handle.db);
      assert.deepEqual(await p.approve(approveReq('k-d1', '4000000000000002')), { outcome: 'DECLINED', message: '카드사에서 승인을 거절했습니다' });
      assert.deepEqual(await p.approve(approveReq('k-d2', '4000000000009995')), { outcome: 'DECLINED', message: '잔액이 부족합니다' });
      assert.deepEqual(await p.lookup('k-d2'), { outcome: 'DECLINED', message: '잔액이 부족합니다' });
      const unknown = await p.approve(approveReq('k-real', '4111111111111111'));
      assert.deepEqual(unknown, { outcome: 'DECLINED', message: '샌드박스에서는 테스트 카드만 사용할 수 있습니다' });
      assert.deepEqual(await p.lookup('k-real'), unknown);
    });

    test('the error card answers ERROR and is not remembered (nothing was approved, the customer may retry)', async () => {
      const p = new SandboxCardProcessor(handle.db);
      assert.deepEqual(await p.approve(approveReq('k-err', '4000000000000119')), { outcome: 'ERROR', message: '카드사 처리 중 오류가 발생했습니다' });
      assert.equal(await p.lookup('k-err'), null);
    });

    test('cancel succeeds and is recorded under its key; the cancel-fails card fails and records nothing', async () => {
      const p = new SandboxCardProcessor(handle.db);
      assert.deepEqual(await p.cancel({ idempotencyKey: 'c-ok', approvalNumber: '12345678', amount: 1000, cardBin: '424242', cardLast4: '4242' }), { outcome: 'CANCELED' });
      assert.deepEqual(await p.lookup('c-ok'), { outcome: 'CANCELED', approvalNumber: '12345678', amount: 1000 } as never);
      const approved = await p.approve(approveReq('k-0259', '4000000000000259'));
      assert.ok(approved.outcome === 'APPROVED', 'the cancel-fails card approves');
      assert.equal(approved.issuerName, '신한카드');
      assert.deepEqual(await p.cancel({ idempotencyKey: 'c-fail', approvalNumber: '1', amount: 1000, cardBin: '400000', cardLast4: '0259' }), { outcome: 'FAILED', message: '카드사 취소 처리에 실패했습니다' });
      assert.equal(await p.lookup('c-fail'), null);
      // Same last four, another BIN: not the failing card.
      assert.deepEqual(await p.cancel({ idempotencyKey: 'c-bin', approvalNumber: '1', amount: 1000, cardBin: '555555', cardLast4: '0259' }), { outcome: 'CANCELED' });
    });
  });

  describe(`sandbox messaging [${engine}]`, () => {
    const handle = withDatabase(engine);
    const nowMs = Date.UTC(2026, 10, 22, 3, 0, 0);
    const clock = { nowMs: () => nowMs, now: () => new Date(nowMs) } as never;
    let m: SandboxMessaging;
    before(() => {
      m = new SandboxMessaging(handle.db, clock);
    });
    const msg = (key: string, to: string, channel: 'ALIMTALK' | 'SMS' = 'ALIMTALK') => ({ idempotencyKey: key, channel, to, text: '청구서가 도착했습니다', link: 'https://pay.example.kr/pay/INV1' });

    test('an ordinary number is accepted and turns DELIVERED on status; the same key never makes a second message', async () => {
      const a = await m.send(msg('s-1', '01012341234'));
      assert.ok(a.accepted);
      const again = await m.send(msg('s-1', '01012341234'));
      assert.deepEqual(again, { accepted: true, messageId: a.messageId });
      assert.deepEqual(await m.status(a.messageId), { delivery: 'DELIVERED', channel: 'ALIMTALK' });
      assert.deepEqual(await m.status(a.messageId), { delivery: 'DELIVERED', channel: 'ALIMTALK' }, 'settled once, read again');
      const listed = await listSandboxMessages(handle.db, { phone: '010-1234-1234' });
      assert.equal(listed.length, 1);
      assert.equal(listed[0]!.deliveryStatus, 'DELIVERED', 'the outbox shows the settled delivery');
    });

    test('…0000 fails on every channel; …9999 refuses ALIMTALK but takes SMS', async () => {
      for (const channel of ['ALIMTALK', 'SMS'] as const) {
        const r = await m.send(msg(`z-${channel}`, '01000000000', channel));
        assert.deepEqual(r, { accepted: false, error: `수신할 수 없는 번호입니다 (${channel})` });
      }
      assert.deepEqual(await m.send(msg('n-a', '01099999999')), { accepted: false, error: '알림톡을 받을 수 없는 번호입니다' });
      const sms = await m.send(msg('n-s', '01099999999', 'SMS'));
      assert.ok(sms.accepted);
      assert.deepEqual(await m.status(sms.messageId), { delivery: 'DELIVERED', channel: 'SMS' });
      // One digit off the rule: an ordinary number.
      assert.ok((await m.send(msg('n-9', '01099999998'))).accepted);
    });

    test('…8888 is accepted but its ALIMTALK turns FAILED; its SMS is delivered', async () => {
      const a = await m.send(msg('e-a', '01088888888'));
      assert.ok(a.accepted);
      assert.deepEqual(await m.status(a.messageId), { delivery: 'FAILED', channel: 'ALIMTALK' });
      assert.equal((await listSandboxMessages(handle.db, { phone: '01088888888' }))[0]!.deliveryStatus, 'FAILED');
      const s = await m.send(msg('e-s', '01088888888', 'SMS'));
      assert.ok(s.accepted);
      assert.deepEqual(await m.status(s.messageId), { delivery: 'DELIVERED', channel: 'SMS' });
    });

    test('…7777 fails the first request for a message only; the retry under the same key is accepted', async () => {
      await assert.rejects(m.send(msg('f-1', '01077777777')), /provider error/);
      const retry = await m.send(msg('f-1', '01077777777'));
      assert.ok(retry.accepted);
      // Another message to the same number has its own first failure.
      await assert.rejects(m.send(msg('f-2', '01077777777')), /provider error/);
    });

    test('…5555 accepts the first request but never answers; the retry gets that first acceptance', async () => {
      const first = m.send(msg('q-1', '01055555555'));
      const raced = await Promise.race([first.then(() => 'answered'), new Promise((r) => setImmediate(() => setImmediate(() => r('pending'))))]);
      assert.equal(raced, 'pending');
      const retry = await m.send(msg('q-1', '01055555555'));
      assert.ok(retry.accepted);
      assert.equal((await listSandboxMessages(handle.db, { phone: '01055555555' })).length, 1, 'one message, not two');
    });

    test('an unknown message id reads as FAILED', async () => {
      assert.deepEqual(await m.status('no-such-message'), { delivery: 'FAILED' });
    });

    test('the outbox: newest first on the service clock, limit clamped to 1..max, a filter without digits matches nothing, faults never listed', async () => {
      const all = await listSandboxMessages(handle.db);
      assert.ok(all.length >= 5);
      assert.ok(all.every((x) => x.sentAtMs === nowMs));
      assert.equal((await listSandboxMessages(handle.db, { limit: 0 })).length, 1);
      assert.equal((await listSandboxMessages(handle.db, { limit: 2 })).length, 2);
      assert.equal((await listSandboxMessages(handle.db, { limit: OUTBOX_MAX_LIMIT + 1 })).length, all.length);
      assert.deepEqual(await listSandboxMessages(handle.db, { phone: 'abc' }), []);
      assert.equal((await listSandboxMessages(handle.db, { phone: ' ' })).length, all.length, 'a blank filter is no filter');
      // 7777's remembered faults (two) are not in the outbox; its one accepted message is.
      assert.equal((await listSandboxMessages(handle.db, { phone: '01077777777' })).length, 1);
    });
  });
}

test('normalizePhone keeps digits only', () => {
  assert.equal(normalizePhone('010-1234 5678'), '01012345678');
  assert.equal(normalizePhone('+82 10'), '8210');
});
