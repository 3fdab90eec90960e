import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GatewayService } from '../../src/gateway/index.js';
import { GatewayCodes, GatewayError } from '../../src/platform/errors.js';
import { SendRunner } from '../../src/invoicing/sends.js';
import type { MessageChannel, MessageRequest, MessagingProvider, SendOutcome } from '../../src/ports/messaging.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { captureLog } from '../helpers/log.js';
import { createOne, newAccount, points, type Login } from './support.js';

/**
 * One send's attempts, driven one by one: the app runs no jobs here, so each send stays WAITING
 * until the test runs it, with a provider whose every answer the test writes.
 */
class ScriptedProvider implements MessagingProvider {
  readonly calls: MessageRequest[] = [];
  constructor(private readonly answer: (req: MessageRequest) => Promise<SendOutcome>, readonly providerFallback?: boolean) {}
  send(req: MessageRequest): Promise<SendOutcome> {
    this.calls.push(req);
    return this.answer(req);
  }
  status(): Promise<never> {
    throw new Error('not asked in these tests');
  }
}

const never = () => new Promise<SendOutcome>(() => {});
const accepted = (messageId: string, channel?: MessageChannel | null) =>
  async (): Promise<SendOutcome> => (channel === undefined ? { accepted: true, messageId } : { accepted: true, messageId, channel });

/** `p`, or a failure of the test after 10 s: a run that never ends must fail the test, not hang it. */
function settles<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the run did not end within 10 s')), 10_000);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

forEachEngine('the send runner, one attempt at a time', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });

  /**
   * The gateway as the runner sees it, with every method it calls written down; `over` replaces
   * some of them (each gets the real gateway's method as its last argument).
   */
  function watchedGateway(over: Record<string, (...args: any[]) => unknown> = {}): { gateway: GatewayService; calls: string[] } {
    const calls: string[] = [];
    const real = t.app.sunap.gateway;
    const gateway = new Proxy(real, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver);
        if (typeof v !== 'function') return v;
        const own = (...args: unknown[]) => (v as (...a: unknown[]) => unknown).apply(target, args);
        return (...args: unknown[]) => {
          calls.push(String(key));
          const replaced = over[String(key)];
          return replaced ? replaced(...args, own) : own(...args);
        };
      },
    });
    return { gateway, calls };
  }

  function runner(messaging: MessagingProvider, opts: { timeoutMs?: number; gateway?: GatewayService } = {}) {
    const logged = captureLog();
    const r = new SendRunner(t.app.sunap.database.db, {
      gateway: opts.gateway ?? t.app.sunap.gateway, messaging, clock: t.app.sunap.clock, costs: t.app.sunap.config.costs,
      log: logged.log, timeoutMs: opts.timeoutMs ?? 5000,
    });
    return { r, logged };
  }

  /** A new invoice (its send WAITING, 10 points reserved) on a new account with 100 points. */
  async function waiting(phone: string, over: Record<string, unknown> = {}): Promise<{ a: Login; id: string; invoiceId: number; sendId: string }> {
    const a = await newAccount(t, { points: 100 });
    const id = await createOne(t, a, { members: [{ studentName: '홍길동', studentPhone: phone }], ...over });
    const db = t.app.sunap.database.db;
    const inv = await db.selectFrom('invoices').select('id').where('unique_id', '=', id).executeTakeFirstOrThrow();
    const send = await db.selectFrom('sends').select(['id', 'status']).where('invoice_id', '=', Number(inv.id)).executeTakeFirstOrThrow();
    assert.equal(send.status, 'WAITING');
    return { a, id, invoiceId: Number(inv.id), sendId: send.id };
  }

  const sendRow = (id: string) => t.app.sunap.database.db.selectFrom('sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const invoiceRow = (id: number) => t.app.sunap.database.db.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('a provider that never answers: the attempt fails at the time limit naming the channel, the send stays ACCEPTING with its points reserved; the last attempt settles it FAILED and returns them', async () => {
    const { a, sendId } = await waiting('01071000001');
    const provider = new ScriptedProvider(never);
    const { r, logged } = runner(provider, { timeoutMs: 150 });
    // Not the last attempt (the default): the error goes to the job, which retries under the same key.
    await assert.rejects(settles(r.run(sendId)), { message: 'the messaging provider did not answer within 150 ms (ALIMTALK)' });
    assert.equal((await sendRow(sendId)).status, 'ACCEPTING');
    assert.equal(await points(t, a), 90);
    await assert.rejects(settles(r.run(sendId, false)), { message: 'the messaging provider did not answer within 150 ms (ALIMTALK)' });
    assert.equal((await sendRow(sendId)).status, 'ACCEPTING');
    assert.deepEqual(logged.lines, []);
    // The last attempt: the send is given up, failed, and its points return.
    await settles(r.run(sendId, true));
    const s = await sendRow(sendId);
    assert.deepEqual([s.status, s.error_message, s.cost_settled === null ? null : Number(s.cost_settled)], ['FAILED', 'internal error; the send was not completed', 0]);
    assert.equal(await points(t, a), 100);
    assert.deepEqual(logged.msgs('send gave up after its last attempt').map((l) => [l.send, l.err]), [[sendId, 'the messaging provider did not answer within 150 ms (ALIMTALK)']]);
    // Every call used the send id as its key; the second and third knew an earlier one may have arrived.
    assert.deepEqual(provider.calls.map((c) => [c.idempotencyKey, c.retry]), [[sendId, false], [sendId, true], [sendId, true]]);
  });

  test('a provider that answers within the time limit is not cut off', async () => {
    const { a, sendId } = await waiting('01071000002');
    const provider = new ScriptedProvider(async () => {
      await new Promise((res) => setTimeout(res, 100));
      return { accepted: true, messageId: 'slow-1' };
    });
    await settles(runner(provider, { timeoutMs: 1000 }).r.run(sendId));
    const s = await sendRow(sendId);
    assert.deepEqual([s.status, s.provider_message_id, s.channel_used], ['SUCCESS', 'slow-1', 'ALIMTALK']);
    assert.equal(await points(t, a), 90);
  });

  test('an unknown send id, or a send already settled, is left alone: no provider call, not even a look-up at the gateway', async () => {
    const provider = new ScriptedProvider(accepted('m-1'));
    const watched = watchedGateway();
    const { r } = runner(provider, { gateway: watched.gateway });
    await settles(r.run('00000000-0000-4000-8000-000000000000', true));
    // Settled as failed before any payment was issued: the invoice was deleted while the send waited.
    const { a, id, invoiceId, sendId } = await waiting('01071000003');
    assert.equal((await t.request('DELETE', `/app/v1/sales/bill/${id}`, undefined, a.h)).body.result_code, 0);
    await settles(r.run(sendId));
    const failed = await sendRow(sendId);
    assert.deepEqual([failed.status, failed.error_message], ['FAILED', 'the invoice is no longer payable (deleted)']);
    watched.calls.length = 0;
    for (const final of [false, true]) await settles(r.run(sendId, final));
    assert.deepEqual(watched.calls, []);
    assert.equal(provider.calls.length, 0);
    assert.equal((await invoiceRow(invoiceId)).payment_id, null);
    assert.deepEqual(await sendRow(sendId), failed);
    assert.equal(await points(t, a), 100);
  });

  test('a waiting send whose invoice was deleted, paid or cancelled meanwhile fails without a message, says why, and returns its points', async () => {
    const provider = new ScriptedProvider(accepted('m-2'));
    const { r } = runner(provider);
    const deleted = await waiting('01071000004');
    await t.request('DELETE', `/app/v1/sales/bill/${deleted.id}`, undefined, deleted.a.h);
    const paid = await waiting('01071000005');
    const cancelled = await waiting('01071000006');
    const db = t.app.sunap.database.db;
    // Paid and cancelled through their payment would need the send to have issued it; the rule reads only the status.
    await db.updateTable('invoices').set({ status: 'DONE' }).where('id', '=', paid.invoiceId).execute();
    await db.updateTable('invoices').set({ status: 'CANCELED' }).where('id', '=', cancelled.invoiceId).execute();
    for (const [w, why] of [[deleted, 'deleted'], [paid, 'DONE'], [cancelled, 'CANCELED']] as const) {
      await settles(r.run(w.sendId));
      const s = await sendRow(w.sendId);
      assert.deepEqual([s.status, s.error_message, s.channel_used, Number(s.cost_settled)], ['FAILED', `the invoice is no longer payable (${why})`, 'ALIMTALK', 0], why);
      assert.equal(await points(t, w.a), 100, why);
      assert.equal((await invoiceRow(w.invoiceId)).payment_id, null, why);
    }
    assert.equal(provider.calls.length, 0);
    // The boundary: a waiting send of a payable invoice goes out.
    const payable = await waiting('01071000007');
    await settles(r.run(payable.sendId));
    assert.equal((await sendRow(payable.sendId)).status, 'SUCCESS');
    assert.deepEqual(provider.calls.map((c) => c.to), ['01071000007']);
  });

  test('an ACCEPTING send (an attempt may have reached the provider) is finished with the provider\'s answer even though the invoice was paid or deleted since', async () => {
    const db = t.app.sunap.database.db;
    const provider = new ScriptedProvider(accepted('m-3'));
    const { r } = runner(provider);
    const paid = await waiting('01071000008');
    const deleted = await waiting('01071000009');
    // The first attempt issued the payment and reached the provider; its answer was lost.
    const first = new ScriptedProvider(never);
    for (const w of [paid, deleted]) await assert.rejects(settles(runner(first, { timeoutMs: 50 }).r.run(w.sendId)));
    await db.updateTable('invoices').set({ status: 'DONE' }).where('id', '=', paid.invoiceId).execute();
    await db.updateTable('invoices').set({ deleted_at: t.app.sunap.clock.nowMs() }).where('id', '=', deleted.invoiceId).execute();
    for (const w of [paid, deleted]) {
      assert.equal((await sendRow(w.sendId)).status, 'ACCEPTING');
      await settles(r.run(w.sendId));
      const s = await sendRow(w.sendId);
      assert.deepEqual([s.status, s.provider_message_id, s.error_message, Number(s.cost_settled)], ['SUCCESS', 'm-3', null, 10]);
      assert.equal(await points(t, w.a), 90, 'an accepted message is charged, not refunded');
    }
    assert.deepEqual(provider.calls.map((c) => [c.to, c.idempotencyKey === paid.sendId || c.idempotencyKey === deleted.sendId, c.retry]),
      [['01071000008', true, true], ['01071000009', true, true]]);
  });

  test('the invoice\'s payment is issued once, in its store, and the message links to it; a second attempt reuses it', async () => {
    const db = t.app.sunap.database.db;
    const { a, invoiceId, sendId } = await waiting('01071000010', { amount: 55000 });
    await assert.rejects(settles(runner(new ScriptedProvider(never), { timeoutMs: 50 }).r.run(sendId)));
    const inv = await invoiceRow(invoiceId);
    assert.ok(inv.payment_id);
    const payment = await db.selectFrom('payments').selectAll().where('id', '=', inv.payment_id).executeTakeFirstOrThrow();
    assert.deepEqual([payment.store_code, payment.trans_seqno, Number(payment.amount), payment.state], [t.storeCode, inv.trans_seqno, 55000, 'STORE_REQUEST']);
    const provider = new ScriptedProvider(accepted('m-4'));
    await settles(runner(provider).r.run(sendId));
    assert.equal((await invoiceRow(invoiceId)).payment_id, inv.payment_id);
    assert.equal(await db.selectFrom('payments').select('id').where('trans_seqno', '=', inv.trans_seqno).execute().then((r) => r.length), 1);
    assert.equal(provider.calls[0]!.link, t.app.sunap.gateway.redirectUrl(payment as never));
    assert.equal(await points(t, a), 90);
  });

  test('another run issued the payment first (the gateway answers DUPLICATE): this one uses that payment and sends once', async () => {
    const db = t.app.sunap.database.db;
    const { invoiceId, sendId } = await waiting('01071000011');
    let other: string | undefined;
    // Between this run's reading of the invoice and its issuing of the payment, another run
    // issues it and writes it on the invoice.
    const watched = watchedGateway({
      async findStore(code: string, own: (c: string) => Promise<unknown>) {
        const store = await own(code);
        const inv = await invoiceRow(invoiceId);
        const p = await t.app.sunap.gateway.createPayment(store as never, { transSeqNo: inv.trans_seqno, amount: Number(inv.amount), mobileNo: inv.receiver_phone, payUserName: inv.receiver_name, requestReason: inv.reason });
        await db.updateTable('invoices').set({ payment_id: p.id }).where('id', '=', invoiceId).execute();
        other = p.id;
        return store;
      },
    });
    const provider = new ScriptedProvider(accepted('m-5'));
    await settles(runner(provider, { gateway: watched.gateway }).r.run(sendId));
    assert.ok(other);
    assert.equal((await invoiceRow(invoiceId)).payment_id, other);
    assert.equal((await sendRow(sendId)).status, 'SUCCESS');
    assert.equal(provider.calls.length, 1);
    const p = await db.selectFrom('payments').selectAll().where('id', '=', other).executeTakeFirstOrThrow();
    assert.equal(provider.calls[0]!.link, t.app.sunap.gateway.redirectUrl(p as never));
  });

  test('the invoice deleted while its payment was being issued: the payment is not kept, the send fails "the invoice was deleted" and returns its points', async () => {
    const db = t.app.sunap.database.db;
    const { a, invoiceId, sendId } = await waiting('01071000012');
    const inv = await invoiceRow(invoiceId);
    const watched = watchedGateway({
      async findStore(code: string, own: (c: string) => Promise<unknown>) {
        const store = await own(code);
        await db.updateTable('invoices').set({ deleted_at: t.app.sunap.clock.nowMs() }).where('id', '=', invoiceId).execute();
        return store;
      },
    });
    const provider = new ScriptedProvider(accepted('m-6'));
    await settles(runner(provider, { gateway: watched.gateway }).r.run(sendId));
    const s = await sendRow(sendId);
    assert.deepEqual([s.status, s.error_message], ['FAILED', 'the invoice was deleted']);
    assert.equal(provider.calls.length, 0);
    assert.equal(await points(t, a), 100);
    assert.equal((await invoiceRow(invoiceId)).payment_id, null);
    assert.deepEqual(await db.selectFrom('payments').select('id').where('trans_seqno', '=', inv.trans_seqno).execute(), [], 'issued in the transaction that found the invoice deleted, and rolled back with it');
  });

  test('a payment the gateway refuses fails the send with the gateway\'s reason; an unexpected error is retried', async () => {
    const { a, sendId } = await waiting('01071000013');
    const refusing = watchedGateway({
      createPayment() {
        throw new GatewayError(GatewayCodes.VALIDATION, 'APPROVAL_AMOUNT: must be greater than 0');
      },
    });
    const provider = new ScriptedProvider(accepted('m-7'));
    const failing = watchedGateway({
      createPayment() {
        throw new Error('connection reset');
      },
    });
    await assert.rejects(settles(runner(provider, { gateway: failing.gateway }).r.run(sendId)), { message: 'connection reset' });
    assert.equal((await sendRow(sendId)).status, 'WAITING');
    await settles(runner(provider, { gateway: refusing.gateway }).r.run(sendId));
    const s = await sendRow(sendId);
    assert.deepEqual([s.status, s.error_message], ['FAILED', 'gateway: APPROVAL_AMOUNT: must be greater than 0']);
    assert.equal(provider.calls.length, 0);
    assert.equal(await points(t, a), 100);
  });

  test('the invoice\'s store gone: the attempt errors naming store and invoice, and the send waits for the next one', async () => {
    const { invoiceId, sendId } = await waiting('01071000014');
    const gone = watchedGateway({ findStore: async () => undefined });
    const provider = new ScriptedProvider(accepted('m-8'));
    await assert.rejects(settles(runner(provider, { gateway: gone.gateway }).r.run(sendId)), { message: `store ${t.storeCode} of invoice ${invoiceId} is missing` });
    assert.equal((await sendRow(sendId)).status, 'WAITING');
    assert.equal(provider.calls.length, 0);
  });

  test('issuing the payment loses every race: after three tries the attempt errors naming the invoice, and nothing is sent', async () => {
    const { invoiceId, sendId } = await waiting('01071000015');
    let tries = 0;
    const racing = watchedGateway({
      createPayment() {
        tries++;
        throw new GatewayError(GatewayCodes.DUPLICATE, 'TRANS_SEQNO: a payment with this TRANS_SEQNO already exists');
      },
    });
    const provider = new ScriptedProvider(accepted('m-9'));
    await assert.rejects(settles(runner(provider, { gateway: racing.gateway }).r.run(sendId)), { message: `could not issue the payment of invoice ${invoiceId}` });
    assert.equal(tries, 3);
    assert.equal((await sendRow(sendId)).status, 'WAITING');
    assert.equal(provider.calls.length, 0);
  });

  test('the invoice\'s payment gone from the gateway: the attempt errors naming both, and nothing is sent', async () => {
    const { invoiceId, sendId } = await waiting('01071000016');
    await assert.rejects(settles(runner(new ScriptedProvider(never), { timeoutMs: 50 }).r.run(sendId)));
    const paymentId = (await invoiceRow(invoiceId)).payment_id;
    assert.ok(paymentId);
    const gone = watchedGateway({ findById: async () => undefined });
    const provider = new ScriptedProvider(accepted('m-10'));
    await assert.rejects(settles(runner(provider, { gateway: gone.gateway }).r.run(sendId)), { message: `payment ${paymentId} of invoice ${invoiceId} is missing` });
    assert.equal((await sendRow(sendId)).status, 'ACCEPTING');
    assert.equal(provider.calls.length, 0);
  });

  test('a failure before any channel was tried records the requested one: SMS for an SMS send', async () => {
    const sms = await waiting('01071000017', { sendChannel: 'SMS' });
    assert.equal(await points(t, sms.a), 70);
    await t.request('DELETE', `/app/v1/sales/bill/${sms.id}`, undefined, sms.a.h);
    await settles(runner(new ScriptedProvider(accepted('m-11'))).r.run(sms.sendId));
    const s = await sendRow(sms.sendId);
    assert.deepEqual([s.status, s.channel_used], ['FAILED', 'SMS']);
    assert.equal(await points(t, sms.a), 100);
  });

  test('a refusal is recorded as the provider said it, cut at 500 characters', async () => {
    const long = `수신 거부: ${'x'.repeat(600)}`;
    const short = 'blocked number';
    for (const [phone, error] of [['01071000018', long], ['01071000019', short]] as const) {
      const { sendId } = await waiting(phone);
      await settles(runner(new ScriptedProvider(async () => ({ accepted: false, error }))).r.run(sendId));
      const s = await sendRow(sendId);
      assert.deepEqual([s.status, s.error_message], ['FAILED', error.slice(0, 500)]);
    }
  });

  test('the points come back with a ledger line saying why: the cheaper channel carried it, or the send failed', async () => {
    const db = t.app.sunap.database.db;
    const memos = async (a: Login) => (await db.selectFrom('ledger').select(['kind', 'delta', 'memo', 'ref']).where('account_id', '=', a.accountId).where('kind', '=', 'REFUND').execute())
      .map((l) => [l.kind, Number(l.delta), l.memo, l.ref]);
    const carried = await waiting('01071000020', { sendChannel: 'ALIMTALK_THEN_SMS' });
    await settles(runner(new ScriptedProvider(accepted('m-12'))).r.run(carried.sendId));
    assert.deepEqual(await memos(carried.a), [['REFUND', 20, 'ALIMTALK carried it', carried.sendId]]);
    const failed = await waiting('01071000021', { sendChannel: 'ALIMTALK_THEN_SMS' });
    const refusing = new ScriptedProvider(async () => ({ accepted: false, error: 'no' }));
    await settles(runner(refusing).r.run(failed.sendId));
    assert.deepEqual(await memos(failed.a), [['REFUND', 30, 'send failed', failed.sendId]]);
    // Both channels were tried, the SMS as a message of its own.
    assert.deepEqual(refusing.calls.map((c) => [c.channel, c.idempotencyKey, c.variables === undefined]),
      [['ALIMTALK', failed.sendId, false], ['SMS', `${failed.sendId}:SMS`, true]]);
    assert.equal(await points(t, failed.a), 100);
  });

  test('two runs of one send at once (a job run twice): the provider answers both under one key, and only one settles: counted once, refunded once', async () => {
    const db = t.app.sunap.database.db;
    const { a, invoiceId, sendId } = await waiting('01071000022', { sendChannel: 'ALIMTALK_THEN_SMS' });
    // The provider answers a repeated key with its first answer, a little later each time.
    const provider = new ScriptedProvider(async () => {
      await new Promise((res) => setTimeout(res, 50));
      return { accepted: true, messageId: 'm-13' };
    });
    await Promise.all([settles(runner(provider).r.run(sendId)), settles(runner(provider).r.run(sendId))]);
    assert.equal(provider.calls.length, 2, 'both runs reached the provider');
    const inv = await invoiceRow(invoiceId);
    assert.deepEqual([inv.send_status, Number(inv.send_count)], ['SENT', 1]);
    assert.equal((await sendRow(sendId)).status, 'SUCCESS');
    const refunds = await db.selectFrom('ledger').select('delta').where('account_id', '=', a.accountId).where('kind', '=', 'REFUND').execute();
    assert.deepEqual(refunds.map((r) => Number(r.delta)), [20]);
    assert.equal(await points(t, a), 90);
  });
});
