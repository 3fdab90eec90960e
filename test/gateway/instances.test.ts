/**
 * Nothing on searchPayment's path is cached where it could go stale (BENCHMARKS.md, "The hot
 * path"): what another instance changes on the shared database is seen by this instance's very
 * next signed call, after this one has already answered for the same payment and key (its
 * statements prepared, its opened keys remembered). The other instance here is a second app
 * on the same database, as a second `sunap serve` on PostgreSQL (or the operator CLI) is.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rotateKey } from '../../src/gateway/index.js';
import { apiSign } from '../../src/platform/crypto.js';
import { kstCompact } from '../../src/platform/kst.js';
import type { App } from '../../src/platform/http.js';
import { forEachEngine, paymentBody, startApp, startSecondInstance, type TestApp } from '../helpers/app.js';

const rd = (r: { body: any }) => r.body.result_data;

forEachEngine('another instance\'s changes are seen by the next signed call', (engine) => {
  let t: TestApp;
  let other: App;
  let otherUrl: string;
  /** The platform's current key: the rotations below replace it. */
  let key: string;
  before(async () => {
    t = await startApp(engine);
    key = t.apiKey;
    ({ app: other, url: otherUrl } = await startSecondInstance(t));
  });
  after(async () => {
    await other?.close();
    await t?.close();
  });

  /** searchPayment at the other instance, signed with `key`. */
  async function searchAtOther(seq: string, key: string) {
    const b = { TRANS_SEQNO: seq, PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_AT: kstCompact(Date.now()) };
    const res = await fetch(`${otherUrl}/api/searchPayment`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...b, API_SIGN: apiSign(b.TRANS_SEQNO, b.PLATFORM_CODE, b.STORE_CODE, b.TRANS_AT, key) }),
    });
    return rd({ body: await res.json() }) as Record<string, string>;
  }

  test('an approval and a cancel made by this instance show at the other one on its next call', async () => {
    const body = paymentBody();
    const seq = body.TRANS_SEQNO as string;
    assert.equal(rd(await t.gw('requestPayment', body, key)).RESULT_CODE, '0000');
    assert.equal((await searchAtOther(seq, key)).APPROVE_STATUS, 'STORE_REQUEST');
    assert.equal((await t.pay(seq)).approved, true);
    assert.equal((await searchAtOther(seq, key)).APPROVE_STATUS, 'APPROVE_COMPLETE');
    const cancel = { TRANS_SEQNO: seq, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: body.APPROVAL_AMOUNT, MOBILE_NO: body.MOBILE_NO };
    assert.equal(rd(await t.gw('requestPaymentCancel', cancel, key)).RESULT_CODE, '0000');
    const after = await searchAtOther(seq, key);
    assert.equal(after.APPROVE_STATUS, 'CANCEL_COMPLETE');
    assert.equal(after.CANCEL_AMOUNT, Number(body.APPROVAL_AMOUNT) as never);
  });

  test('a key rotated with no grace: the other instance refuses the old key on its next call and takes the new one', async () => {
    const body = paymentBody();
    const seq = body.TRANS_SEQNO as string;
    assert.equal(rd(await t.gw('requestPayment', body, key)).RESULT_CODE, '0000');
    const old = key;
    assert.equal((await searchAtOther(seq, old)).RESULT_CODE, '0000', 'the old key signs before the rotation');
    const { apiKey } = await rotateKey(t.app.sunap.database.db, t.app.sunap.box, t.app.sunap.clock.nowMs(), { platformCode: t.platformCode, graceSeconds: 0 });
    assert.equal((await searchAtOther(seq, old)).RESULT_CODE, '3001', 'the old key no longer signs');
    assert.equal((await searchAtOther(seq, apiKey)).RESULT_CODE, '0000', 'the new key signs');
    key = apiKey;
  });

  test('a key rotated with a grace: the old key signs at the other instance until the grace ends', async () => {
    const body = paymentBody();
    const seq = body.TRANS_SEQNO as string;
    assert.equal(rd(await t.gw('requestPayment', body, key)).RESULT_CODE, '0000');
    const old = key;
    const rotatedAt = t.app.sunap.clock.nowMs();
    const { apiKey } = await rotateKey(t.app.sunap.database.db, t.app.sunap.box, rotatedAt, { platformCode: t.platformCode, graceSeconds: 3 });
    assert.equal((await searchAtOther(seq, old)).RESULT_CODE, '0000', 'inside the grace');
    assert.equal((await searchAtOther(seq, apiKey)).RESULT_CODE, '0000');
    // Real time, not the sandbox clock: another instance reads a moved sandbox clock only at its
    // next job poll (src/platform/clock.ts), and this one runs no jobs.
    await new Promise((r) => setTimeout(r, Math.max(0, rotatedAt + 3_100 - Date.now())));
    assert.equal((await searchAtOther(seq, old)).RESULT_CODE, '3001', 'after the grace');
    assert.equal((await searchAtOther(seq, apiKey)).RESULT_CODE, '0000');
    key = apiKey;
  });
});
