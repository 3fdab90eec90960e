import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Insertable } from 'kysely';
import type { InvoiceTable, SendTable } from '../../src/db/schema.js';
import * as repo from '../../src/invoicing/repository.js';
import { forEachEngine } from '../helpers/app.js';
import { insertStores, withDatabase } from '../helpers/db.js';
import { invoiceRow } from './support.js';

/**
 * The invoicing repository read directly, each function's answer on both sides of its rule:
 * the compare-and-sets' booleans (which their callers turn into answers and skips), the batch
 * writes at their chunk boundaries, the guard that keeps another account's rows out, and the
 * live-invoice counter. The HTTP suites reach the same code, but rarely both sides of it.
 */
forEachEngine('invoicing repository', (engine) => {
  const store = withDatabase(engine);
  const T = Date.UTC(2026, 10, 23, 6);
  const A = 'acct-a';
  const B = 'acct-b';
  let seq = 0;

  before(async () => {
    const { db } = store;
    await insertStores(db, 'PREPO', ['SREPO'], T);
    for (const id of [A, B]) {
      await db.transaction().execute((trx) => repo.insertAccount(trx, { id, email: `${id}@example.com`, password_hash: 'x', store_code: 'SREPO', invoicing_enabled: 1, created_at: T }, T));
    }
  });

  const invoice = (accountId: string, over: Partial<Insertable<InvoiceTable>> = {}) => invoiceRow(accountId, 'SREPO', seq++, T, over);
  const insert = (accountId: string, rows: Insertable<InvoiceTable>[]) =>
    store.db.transaction().execute((trx) => repo.insertInvoices(trx, accountId, rows));
  const countOf = async (accountId: string) => {
    const rows = await store.db.selectFrom('invoices').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    return Number(rows.n);
  };

  test('invoicing is switched by email: true when the account exists, false (and nothing changed) when it does not', async () => {
    assert.equal(await repo.setInvoicingEnabled(store.db, `${A}@example.com`, false), true);
    assert.equal((await repo.findAccountById(store.db, A))?.invoicing_enabled, 0);
    assert.equal(await repo.setInvoicingEnabled(store.db, `${A}@example.com`, true), true);
    assert.equal((await repo.findAccountById(store.db, A))?.invoicing_enabled, 1);
    assert.equal(await repo.setInvoicingEnabled(store.db, 'nobody@example.com', false), false);
    assert.equal((await repo.findAccountById(store.db, B))?.invoicing_enabled, 1);
  });

  test('a refresh token rotates once: true the first time, false when it was rotated or revoked already', async () => {
    const token = (id: string) => ({ id, account_id: A, family_id: `fam-${id}`, kind: 'REFRESH' as const, token_hash: `hash-${id}`, expires_at: T + 1000, rotated_at: null, revoked_at: null, created_at: T });
    await repo.insertTokens(store.db, [token('t1'), token('t2')]);
    assert.equal(await repo.rotateToken(store.db, 't1', T + 1), true);
    assert.equal(await repo.rotateToken(store.db, 't1', T + 2), false, 'a second rotation of the same token');
    await repo.revokeFamily(store.db, A, 'fam-t2', T + 1);
    assert.equal(await repo.rotateToken(store.db, 't2', T + 2), false, 'a revoked token');
    assert.equal(await repo.rotateToken(store.db, 'no-such-token', T + 2), false);
  });

  test('sign-in throttle per email: each attempt\'s wait in turn, the last one repeating; no wait is 0, so an earlier-stamped attempt landing later is not locked out', async () => {
    const key = `email:throttle-${seq++}@example.com`;
    const forget = 900_000;
    const lockouts = [0, 0, 1_000, 5_000, 60_000] as const;
    const take = (now: number) => repo.takeEmailAttempt(store.db, key, now, forget, lockouts);
    const next = async () => Number((await repo.getThrottle(store.db, key))!.next_allowed_at);
    assert.equal(await take(T + 10), 1);
    assert.equal(await next(), 0, 'no wait after attempt 1');
    assert.equal(await take(T + 5), 2, 'stamped before the first, landing after it');
    assert.equal(await next(), 0);
    assert.equal(await take(T + 20), 3);
    assert.equal(await next(), T + 20 + 1_000);
    assert.equal(await take(T + 20 + 999), null, 'a millisecond before the wait ends');
    assert.equal(await take(T + 20 + 1_000), 4, 'at its end');
    assert.equal(await next(), T + 1_020 + 5_000);
    let now = T + 1_020 + 5_000;
    assert.equal(await take(now), 5);
    assert.equal(await next(), now + 60_000, 'the last wait');
    now += 60_000;
    assert.equal(await take(now - 1), null);
    assert.equal(await take(now), 6);
    assert.equal(await next(), now + 60_000, 'the last wait repeats');
    now += 60_000 + forget;
    assert.equal(await take(now), 1, 'forgotten after a quiet spell: counting starts again');
    assert.equal(await next(), 0);
    await repo.clearThrottle(store.db, key);
    assert.equal(await repo.getThrottle(store.db, key), undefined);
  });

  test('sign-in throttle per address: a fixed window counted from its first attempt, its end given back; a new window at that end', async () => {
    const key = `addr:192.0.2.${seq++}`;
    assert.deepEqual(await repo.takeWindowAttempt(store.db, key, T, 60_000), { attempts: 1, windowEndsAt: T + 60_000 });
    assert.deepEqual(await repo.takeWindowAttempt(store.db, key, T + 59_999, 60_000), { attempts: 2, windowEndsAt: T + 60_000 });
    assert.deepEqual(await repo.takeWindowAttempt(store.db, key, T + 60_000, 60_000), { attempts: 1, windowEndsAt: T + 120_000 });
    const row = await repo.getThrottle(store.db, key);
    assert.deepEqual({ attempts: Number(row!.attempts), window: Number(row!.window_started_at), last: Number(row!.last_attempt_at) }, { attempts: 1, window: T + 60_000, last: T + 60_000 });
  });

  test('throttle rows untouched since the cut-off are purged, the cut-off included; later ones stay', async () => {
    const keys = [`purge-a-${seq++}`, `purge-b-${seq++}`, `purge-c-${seq++}`];
    const base = T + 10_000_000;
    for (const [i, key] of keys.entries()) await repo.takeWindowAttempt(store.db, key, base + i, 60_000);
    await store.db.deleteFrom('sign_in_throttles').where('last_attempt_at', '<', base).execute();
    assert.equal(await repo.purgeThrottles(store.db, base + 1), 2);
    assert.deepEqual(await Promise.all(keys.map(async (k) => (await repo.getThrottle(store.db, k)) !== undefined)), [false, false, true]);
  });

  test('the ledger: nothing to write writes nothing; a (kind, ref) already written is skipped; rows without a ref always land', async () => {
    assert.equal(await repo.addLedger(store.db, []), 0);
    const row = (kind: 'RESERVE' | 'REFUND', ref: string | null) => ({ account_id: B, delta: kind === 'RESERVE' ? -2 : 2, kind, ref, memo: null, created_at: T });
    assert.equal(await repo.addLedger(store.db, [row('RESERVE', 's1'), row('RESERVE', 's2')]), 2);
    assert.equal(await repo.addLedger(store.db, [row('RESERVE', 's1'), row('REFUND', 's1')]), 1, 'the repeated reservation is skipped, the refund of it is not');
    assert.equal(await repo.addLedger(store.db, [row('REFUND', null), row('REFUND', null)]), 2);
    const n = await store.db.selectFrom('ledger').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', B).executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 5);
  });

  test('insertInvoices: no rows is no write; a row of another account refuses the whole batch and changes nothing', async () => {
    const before = await countOf(A);
    const live = await repo.liveInvoiceCount(store.db, A);
    assert.deepEqual(await insert(A, []), new Map());
    for (const batch of [[invoice(B)], [invoice(A), invoice(B)], [invoice(B), invoice(A)]]) {
      await assert.rejects(insert(A, batch), /^Error: insertInvoices: every row must belong to the given account$/);
    }
    assert.equal(await countOf(A), before);
    assert.equal(await countOf(B), 0);
    assert.equal(await repo.liveInvoiceCount(store.db, A), live);
    assert.equal(await repo.liveInvoiceCount(store.db, B), 0);
  });

  test('insertInvoices: batches of 200 on both sides of the boundary, every id given back, deleted rows not counted live', async () => {
    for (const n of [199, 200, 201, 400]) {
      const liveBefore = await repo.liveInvoiceCount(store.db, A);
      const rows = Array.from({ length: n }, () => invoice(A));
      const ids = await insert(A, rows);
      assert.equal(ids.size, n, `${n} rows`);
      const stored = await store.db.selectFrom('invoices').select(['id', 'unique_id']).where('unique_id', 'in', rows.map((r) => r.unique_id)).execute();
      assert.deepEqual(new Map(stored.map((r) => [r.unique_id, Number(r.id)])), ids);
      assert.equal(await repo.liveInvoiceCount(store.db, A), liveBefore + n);
    }
    const liveBefore = await repo.liveInvoiceCount(store.db, A);
    await insert(A, [invoice(A), invoice(A, { deleted_at: T }), invoice(A)]);
    assert.equal(await repo.liveInvoiceCount(store.db, A), liveBefore + 2, 'the deleted row is stored but not live');
    await insert(A, [invoice(A, { deleted_at: T })]);
    assert.equal(await repo.liveInvoiceCount(store.db, A), liveBefore + 2);
  });

  test('a list given only one end of a month range is the whole list, counted from the counter', async () => {
    const C = 'acct-c';
    await store.db.transaction().execute((trx) => repo.insertAccount(trx, { id: C, email: `${C}@example.com`, password_hash: 'x', store_code: 'SREPO', invoicing_enabled: 1, created_at: T }, T));
    await insert(C, [invoice(C, { created_at: T - 40 * 86_400_000 }), invoice(C, { created_at: T }), invoice(C, { created_at: T + 40 * 86_400_000 })]);
    const all = await repo.listInvoices(store.db, C, { offset: 0, limit: 10 });
    assert.equal(all.total, 3);
    for (const range of [{ from: T }, { to: T + 1 }]) {
      const got = await repo.listInvoices(store.db, C, { ...range, offset: 0, limit: 10 });
      assert.equal(got.total, 3, JSON.stringify(range));
      assert.deepEqual(got.rows.map((r) => r.unique_id), all.rows.map((r) => r.unique_id));
    }
    const month = await repo.listInvoices(store.db, C, { from: T, to: T + 1, offset: 0, limit: 10 });
    assert.equal(month.total, 1);
    assert.equal(month.rows.length, 1);
  });

  test('insertSends: batches of 300 on both sides of the boundary', async () => {
    const [inv] = (await insert(A, [invoice(A)])).values();
    const send = (i: number): Insertable<SendTable> => ({
      id: `send-${seq}-${i}`, invoice_id: inv!, account_id: A, send_type: 'INITIAL', status: 'SUCCESS', channel_requested: 'SMS', channel_used: 'SMS',
      receiver_phone: '01012345678', cost_reserved: 1, cost_settled: 1, provider_message_id: null, delivery_status: null, error_message: null, sent_at: T, created_at: T,
    });
    let total = 0;
    for (const n of [300, 301]) {
      seq++;
      await repo.insertSends(store.db, Array.from({ length: n }, (_, i) => send(i)));
      total += n;
      assert.equal((await repo.sendsOf(store.db, A, inv!)).length, total, `${n} sends`);
    }
    await repo.insertSends(store.db, []);
    assert.equal((await repo.sendsOf(store.db, A, inv!)).length, total);
  });

  test('a delivery status is set once, from ACCEPTED, by the send\'s own account: true then false', async () => {
    const [inv] = (await insert(A, [invoice(A)])).values();
    const id = `send-report-${seq++}`;
    await repo.insertSends(store.db, [{
      id, invoice_id: inv!, account_id: A, send_type: 'INITIAL', status: 'SUCCESS', channel_requested: 'SMS', channel_used: 'SMS',
      receiver_phone: '01012345678', cost_reserved: 1, cost_settled: null, provider_message_id: 'm1', delivery_status: 'ACCEPTED', error_message: null, sent_at: T, created_at: T,
    }]);
    assert.equal(await repo.setDeliveryStatus(store.db, B, id, 'DELIVERED'), false, 'another account');
    assert.equal(await repo.setDeliveryStatus(store.db, A, id, 'DELIVERED'), true);
    assert.equal(await repo.setDeliveryStatus(store.db, A, id, 'FAILED'), false, 'no longer ACCEPTED');
    assert.equal((await repo.findSend(store.db, id))?.delivery_status, 'DELIVERED');
  });

  test('a webhook event settles once: true while PENDING, false once settled', async () => {
    const [inv] = (await insert(A, [invoice(A, { status: 'DONE', done_at: T })])).values();
    const id = await store.db.transaction().execute((trx) =>
      repo.insertWebhookEvent(trx, { invoiceId: inv!, accountId: A, event: 'bill.paid', url: 'https://example.com/hook', body: '{}', now: T }));
    assert.equal(typeof id, 'number');
    assert.equal(await repo.settleWebhookEvent(store.db, id!, 'PENDING', 1, T + 1), true, 'an attempt that failed keeps it pending');
    assert.equal(await repo.settleWebhookEvent(store.db, id!, 'DELIVERED', 2, T + 2), true);
    assert.equal(await repo.settleWebhookEvent(store.db, id!, 'ABANDONED', 3, T + 3), false);
    const row = await store.db.selectFrom('webhook_events').select(['status', 'attempts']).where('id', '=', id!).executeTakeFirstOrThrow();
    assert.deepEqual({ status: row.status, attempts: Number(row.attempts) }, { status: 'DELIVERED', attempts: 2 });
  });
});
