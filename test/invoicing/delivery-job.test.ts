import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DELIVERY_JOB, applyReport } from '../../src/invoicing/delivery.js';
import type { Send } from '../../src/invoicing/repository.js';
import type { DeliveryReport, MessagingProvider } from '../../src/ports/messaging.js';
import { newId } from '../../src/platform/crypto.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { captureLog } from '../helpers/log.js';
import { createOne, newAccount, points } from './support.js';

/**
 * The delivery-report job, one run at a time (the worker stays off): which sends it asks the
 * provider about, what it settles from each report, and when it asks again. Prices are the
 * defaults: ALIMTALK 10, SMS 30 points.
 */
forEachEngine('the delivery-report job', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const db = () => t.app.sunap.database.db;

  /** A provider that answers `status` with the next scripted report and records what it was asked. */
  const asked: string[] = [];
  const reports: DeliveryReport[] = [];
  const messaging: MessagingProvider = {
    send: () => Promise.reject(new Error('the job never sends')),
    status: (id) => {
      asked.push(id);
      return Promise.resolve(reports.shift() ?? { delivery: 'ACCEPTED' });
    },
  };
  const logged = captureLog('warn');
  const deps = () => ({ db: db(), messaging, clock: t.app.sunap.clock, costs: t.app.sunap.config.costs, log: logged.log });
  const run = (sendId: string, final = false) => DELIVERY_JOB.run({ sendId }, deps(), { jobId: newId(), attempt: 1, final });

  /**
   * An invoice's send as the send job leaves it when the provider accepted it without naming the
   * channel (its own ALIMTALK → SMS fallback): SUCCESS, a message id, its points not settled.
   */
  async function acceptedSend(over: Partial<Send> = {}): Promise<{ send: Send; balance: () => Promise<number> }> {
    const a = await newAccount(t, { points: 1000 });
    await createOne(t, a, { sendChannel: 'ALIMTALK_THEN_SMS' });
    const { id } = await db().selectFrom('sends').select('id').where('account_id', '=', a.accountId).executeTakeFirstOrThrow();
    await db().updateTable('sends').set({
      status: 'SUCCESS', provider_message_id: `msg-${id}`, delivery_status: 'ACCEPTED', cost_settled: null, sent_at: t.app.sunap.clock.nowMs(), ...over,
    }).where('id', '=', id).execute();
    return { send: (await db().selectFrom('sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow()), balance: () => points(t, a) };
  }
  const sendRow = (id: string) => db().selectFrom('sends').select(['delivery_status', 'cost_settled', 'channel_used']).where('id', '=', id).executeTakeFirstOrThrow();
  const refunds = (id: string) => db().selectFrom('ledger').select(['delta', 'memo']).where('kind', '=', 'REFUND').where('ref', '=', id).execute();

  test('it asks only about an accepted send whose points are not settled: not a missing, open, id-less or settled one', async () => {
    const n = asked.length;
    await run(newId());
    for (const over of [{ status: 'WAITING' }, { status: 'FAILED' }, { provider_message_id: null }, { cost_settled: 30 }] as const) {
      const { send } = await acceptedSend(over);
      await run(send.id);
    }
    assert.equal(asked.length, n, 'none of them asked about');
    const { send } = await acceptedSend();
    await assert.rejects(run(send.id), /has not reported a delivery yet/);
    assert.deepEqual(asked.slice(n), [send.provider_message_id]);
  });

  test('still ACCEPTED: the job asks again (it throws) until its last check, which keeps the reserved points and says so', async () => {
    const { send, balance } = await acceptedSend();
    const before = await balance();
    await assert.rejects(run(send.id), (e) => e instanceof Error && e.message === `send ${send.id}: the provider has not reported a delivery yet`);
    const warned = logged.msgs('no delivery report after the last check; the send keeps its reserved points').length;
    await run(send.id, true);
    assert.deepEqual(logged.msgs('no delivery report after the last check; the send keeps its reserved points').slice(warned).map((l) => l.send), [send.id]);
    assert.deepEqual(await sendRow(send.id), { delivery_status: 'ACCEPTED', cost_settled: null, channel_used: send.channel_used });
    assert.equal(await balance(), before, 'nothing refunded while it may still be delivered');
    assert.deepEqual(await refunds(send.id), []);
  });

  test('delivered by ALIMTALK: charged 10 of the 30 reserved, 20 refunded once; the job ends, a second run asks nothing', async () => {
    const { send, balance } = await acceptedSend();
    const before = await balance();
    reports.push({ delivery: 'DELIVERED', channel: 'ALIMTALK' });
    await run(send.id);
    assert.deepEqual(await sendRow(send.id), { delivery_status: 'DELIVERED', cost_settled: 10, channel_used: 'ALIMTALK' });
    assert.deepEqual((await refunds(send.id)).map((r) => [Number(r.delta), r.memo]), [[20, 'ALIMTALK carried it']]);
    assert.equal(await balance(), before + 20);
    const n = asked.length;
    await run(send.id);
    assert.equal(asked.length, n, 'settled: not asked again');
  });

  test('delivered without the channel named: charged as SMS, the dearer one, so nothing comes back; failed on every channel: all 30 back', async () => {
    const sms = await acceptedSend();
    reports.push({ delivery: 'DELIVERED' });
    await run(sms.send.id);
    assert.deepEqual(await sendRow(sms.send.id), { delivery_status: 'DELIVERED', cost_settled: 30, channel_used: 'ALIMTALK' });
    assert.deepEqual(await refunds(sms.send.id), [], 'a refund of 0 writes no ledger row');

    const failed = await acceptedSend();
    const before = await failed.balance();
    reports.push({ delivery: 'FAILED', channel: 'SMS' });
    await run(failed.send.id);
    assert.deepEqual(await sendRow(failed.send.id), { delivery_status: 'FAILED', cost_settled: 0, channel_used: 'SMS' });
    assert.deepEqual((await refunds(failed.send.id)).map((r) => [Number(r.delta), r.memo]), [[30, 'not delivered on any channel']]);
    assert.equal(await failed.balance(), before + 30);
  });

  test('a send that asked for SMS only, reported delivered without a channel: recorded as carried by SMS', async () => {
    const { send } = await acceptedSend({ channel_requested: 'SMS' });
    reports.push({ delivery: 'DELIVERED' });
    await run(send.id);
    assert.deepEqual(await sendRow(send.id), { delivery_status: 'DELIVERED', cost_settled: 30, channel_used: 'SMS' });
  });

  test('a report read twice (the job and refresh-status from one old read) settles and refunds once', async () => {
    const { send, balance } = await acceptedSend();
    const before = await balance();
    await applyReport(deps(), send, { delivery: 'FAILED', channel: 'ALIMTALK' });
    await applyReport(deps(), send, { delivery: 'FAILED', channel: 'ALIMTALK' });
    assert.equal(await balance(), before + 30);
    assert.equal((await refunds(send.id)).length, 1);
  });

  test('two reports read at once that disagree: the first settlement stands, the other refunds nothing', async () => {
    const { send, balance } = await acceptedSend();
    const before = await balance();
    // Settled as delivered by SMS: all 30 used, nothing refunded, so no REFUND row holds the place.
    await applyReport(deps(), send, { delivery: 'DELIVERED', channel: 'SMS' });
    // The other reader still holds the row as it was before, and its report says FAILED.
    await applyReport(deps(), send, { delivery: 'FAILED', channel: 'ALIMTALK' });
    assert.deepEqual(await sendRow(send.id), { delivery_status: 'DELIVERED', cost_settled: 30, channel_used: 'SMS' });
    assert.equal(await balance(), before);
    assert.deepEqual(await refunds(send.id), []);
  });

  test('on a settled send a report only moves its delivery status on from ACCEPTED, and settles nothing again', async () => {
    const { send, balance } = await acceptedSend({ cost_settled: 10, channel_used: 'ALIMTALK' });
    const before = await balance();
    await applyReport(deps(), send, { delivery: 'DELIVERED', channel: 'SMS' });
    assert.deepEqual(await sendRow(send.id), { delivery_status: 'DELIVERED', cost_settled: 10, channel_used: 'ALIMTALK' });
    const again = await db().selectFrom('sends').selectAll().where('id', '=', send.id).executeTakeFirstOrThrow();
    await applyReport(deps(), again, { delivery: 'FAILED' });
    assert.equal((await sendRow(send.id)).delivery_status, 'DELIVERED', 'a final delivery status stays');
    assert.equal(await balance(), before);
    assert.deepEqual(await refunds(send.id), []);
  });

  test('an ACCEPTED report on an unsettled send changes nothing', async () => {
    const { send, balance } = await acceptedSend();
    const before = await balance();
    await applyReport(deps(), send, { delivery: 'ACCEPTED', channel: 'SMS' });
    assert.deepEqual(await sendRow(send.id), { delivery_status: 'ACCEPTED', cost_settled: null, channel_used: send.channel_used });
    assert.equal(await balance(), before);
  });
});
