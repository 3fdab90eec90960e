import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Insertable } from 'kysely';
import type { InvoiceTable } from '../../src/db/schema.js';
import { InvoicingConsole } from '../../src/invoicing/console.js';
import * as q from '../../src/invoicing/console-repository.js';
import * as repo from '../../src/invoicing/repository.js';
import { forEachEngine } from '../helpers/app.js';
import { insertStores, withDatabase } from '../helpers/db.js';
import { invoiceRow } from './support.js';
import { AppError } from '../../src/platform/errors.js';

/**
 * What the console reads and writes of the invoicing side, on the database itself: templates,
 * the team, the ledger's pages, the invoice search (each searched column, the merge of its
 * queries, the keyset cursor and the page size), an invoice's webhook deliveries and the
 * failing-webhook counts. The console suites reach the same code through pages; here each rule
 * is one call, on both sides.
 */
forEachEngine('invoicing console repository', (engine) => {
  const h = withDatabase(engine);
  const T = Date.UTC(2026, 10, 23, 3);
  let seq = 0;
  const account = async () => {
    const id = `acct-${seq++}`;
    await h.db.transaction().execute((trx) => repo.insertAccount(trx, { id, email: `${id}@example.com`, password_hash: 'x', store_code: 'SCONS', invoicing_enabled: 1, created_at: T, role: 'owner', tenant_id: id }, T));
    return id;
  };
  /** As sent once: the console lists invoices that went out. */
  const invoice = (accountId: string, over: Partial<Insertable<InvoiceTable>> = {}) =>
    invoiceRow(accountId, 'SCONS', seq++, T, { send_status: 'SENT', send_count: 1, first_sent_at: T, last_sent_at: T, ...over });
  const insert = async (accountId: string, rows: Insertable<InvoiceTable>[]) =>
    [...(await h.db.transaction().execute((trx) => repo.insertInvoices(trx, accountId, rows))).values()];

  before(async () => {
    await insertStores(h.db, 'PCONS', ['SCONS'], T);
  });

  test('templates: counted per account; an update or delete of another account\'s or an unknown template changes nothing and says so', async () => {
    const a = await account();
    const b = await account();
    assert.equal(await q.countTemplates(h.db, a), 0);
    const tpl = (id: string, accountId: string) => ({ id, account_id: accountId, name: id, reason: '수강료', description: null, amount: 1000, items_json: null, send_channel: null, created_at: T, updated_at: T });
    await q.insertTemplate(h.db, tpl(`t-${a}-1`, a));
    await q.insertTemplate(h.db, tpl(`t-${a}-2`, a));
    await q.insertTemplate(h.db, tpl(`t-${b}-1`, b));
    assert.equal(await q.countTemplates(h.db, a), 2);
    assert.equal(await q.countTemplates(h.db, b), 1);
    assert.equal(await q.updateTemplate(h.db, a, `t-${a}-1`, { name: 'renamed' }), true);
    assert.equal(await q.updateTemplate(h.db, b, `t-${a}-1`, { name: 'stolen' }), false);
    assert.equal(await q.updateTemplate(h.db, a, 'no-such', { name: 'x' }), false);
    assert.equal((await q.findTemplate(h.db, a, `t-${a}-1`))?.name, 'renamed');
    assert.equal(await q.deleteTemplate(h.db, b, `t-${a}-2`), false);
    assert.equal(await q.deleteTemplate(h.db, a, `t-${a}-2`), true);
    assert.equal(await q.deleteTemplate(h.db, a, `t-${a}-2`), false);
    assert.equal(await q.countTemplates(h.db, a), 1);
  });

  test('the team: a role set only within the team; owners counted by role; a member removed with its tokens, never the tenant itself', async () => {
    const tenant = await account();
    const other = await account();
    const member = `m-${seq++}`;
    await q.insertMember(h.db, { id: member, email: `${member}@example.com`, password_hash: 'x', store_code: 'SCONS', invoicing_enabled: 1, created_at: T + 1, role: 'viewer', tenant_id: tenant });
    await repo.insertTokens(h.db, [{ id: `tok-${member}`, account_id: member, family_id: 'f', kind: 'ACCESS', token_hash: `h-${member}`, expires_at: T + 1000, rotated_at: null, revoked_at: null, created_at: T }]);
    assert.equal(await q.countOwners(h.db, tenant), 1);
    assert.equal(await q.setRole(h.db, other, member, 'owner'), false, 'another team');
    assert.equal(await q.setRole(h.db, tenant, 'no-such', 'owner'), false);
    assert.equal(await q.setRole(h.db, tenant, member, 'owner'), true);
    assert.equal(await q.countOwners(h.db, tenant), 2);
    assert.equal(await q.setRole(h.db, tenant, member, 'manager'), true);
    assert.equal(await q.countOwners(h.db, tenant), 1);
    assert.deepEqual((await q.teamAccounts(h.db, tenant)).map((r) => r.id), [tenant, member]);

    assert.equal(await q.deleteMember(h.db, tenant, tenant), false, 'the tenant holds the data');
    assert.ok(await repo.findAccountById(h.db, tenant));
    assert.equal(await q.deleteMember(h.db, other, member), false, 'another team');
    assert.ok(await repo.findAccountById(h.db, member));
    assert.equal(await q.deleteMember(h.db, tenant, member), true);
    assert.equal(await repo.findAccountById(h.db, member), undefined);
    assert.equal(await h.db.selectFrom('auth_tokens').select('id').where('account_id', '=', member).executeTakeFirst(), undefined);
    assert.equal(await q.deleteMember(h.db, tenant, member), false, 'gone already');
  });

  test('the ledger in pages, newest first: each page after the last id of the one before', async () => {
    const a = await account();
    await repo.addLedger(h.db, Array.from({ length: 5 }, (_, i) => ({ account_id: a, delta: i + 1, kind: 'GRANT' as const, ref: null, memo: `g${i}`, created_at: T })));
    const c = new InvoicingConsole(h.db);
    const memos = (p: Awaited<ReturnType<InvoicingConsole['ledger']>>) => p.lines.map((l) => l.rows.map((r) => r.memo).join('+'));
    const first = await c.ledger(a, undefined, 2);
    assert.deepEqual(memos(first), ['g4', 'g3']);
    const second = await c.ledger(a, first.next!, 2);
    assert.deepEqual(memos(second), ['g2', 'g1']);
    const last = await c.ledger(a, second.next!, 2);
    assert.deepEqual([memos(last), last.next], [['g0'], null]);
    const whole = await c.ledger(a, undefined, 5);
    assert.deepEqual([whole.lines.length, whole.next], [5, null], 'exactly a page: no next page');
    assert.deepEqual(await c.points(a), { balance: 0, ledgerSum: 15 });
  });

  test('the ledger: one line per send (its batch), whose delta is its rows\' sum; a send of 1 is one line; two sends in the same millisecond stay two; refunds, grants and recharges stay lines of their own; pages never split a send', async () => {
    const a = await account();
    const b = await account();
    const c = new InvoicingConsole(h.db);
    const reserve = (accountId: string, batch: string, n: number, cost: number, memo = 'INITIAL') => repo.addLedger(h.db, Array.from({ length: n }, (_, i) => ({
      account_id: accountId, delta: -cost, kind: 'RESERVE' as const, ref: `${batch}-s${i}`, memo, created_at: T, batch })));
    await repo.addLedger(h.db, [{ account_id: a, delta: 1000, kind: 'GRANT', ref: null, memo: 'start', created_at: T }]);
    await reserve(a, `${a}-class`, 30, 10);
    await repo.addLedger(h.db, [{ account_id: a, delta: 10, kind: 'REFUND', ref: `${a}-class-s3`, memo: 'FAILED', created_at: T }]);
    await reserve(a, `${a}-one`, 1, 30);
    await reserve(a, `${a}-same-ms-1`, 2, 10, 'RESEND');
    await reserve(a, `${a}-same-ms-2`, 2, 10, 'RESEND');
    await repo.addLedger(h.db, [{ account_id: a, delta: 500, kind: 'RECHARGE', ref: `${a}-rc`, memo: '충전', created_at: T }]);
    await reserve(b, `${b}-other`, 3, 10);
    const page = await c.ledger(a, undefined, 50);
    assert.deepEqual(page.lines.map((l) => [l.rows[0]!.kind, l.count, l.delta]), [
      ['RECHARGE', 1, 500], ['RESERVE', 2, -20], ['RESERVE', 2, -20], ['RESERVE', 1, -30], ['REFUND', 1, 10], ['RESERVE', 30, -300], ['GRANT', 1, 1000],
    ]);
    for (const l of page.lines) {
      assert.equal(l.rows.length, l.count, 'every row of a line is there');
      assert.equal(l.delta, l.rows.reduce((s, r) => s + r.delta, 0), 'a line\'s delta is its rows\' sum');
      assert.equal(l.id, Math.max(...l.rows.map((r) => r.id)));
    }
    const linesSum = page.lines.reduce((s, l) => s + l.delta, 0);
    assert.equal(linesSum, 1000 - 300 + 10 - 30 - 40 + 500);
    assert.deepEqual(await c.points(a), { balance: 0, ledgerSum: linesSum }, 'the lines add up to the ledger');
    // Pages of 2 lines: a send of 30 is one line on one page, never cut.
    const seen: number[] = [];
    let next: number | null | undefined;
    do {
      const p = await c.ledger(a, next ?? undefined, 2);
      seen.push(...p.lines.map((l) => l.count));
      next = p.next;
    } while (next !== null);
    assert.deepEqual(seen, [1, 2, 2, 1, 1, 30, 1]);
    assert.deepEqual((await c.ledger(b, undefined, 50)).lines.map((l) => [l.count, l.delta]), [[3, -30]], 'another account sees only its own');
  });

  test('the ledger: rows reserved before batches (migration 0018) are one line per millisecond and memo', async () => {
    const a = await account();
    const c = new InvoicingConsole(h.db);
    const legacy = (memo: string, at: number, n: number) => Array.from({ length: n }, (_, i) => ({
      account_id: a, delta: -10, kind: 'RESERVE' as const, ref: `${a}-${memo}-${at}-${i}`, memo, created_at: at, batch: `legacy:${at}:${memo}` }));
    await repo.addLedger(h.db, [...legacy('INITIAL', T, 3), ...legacy('INITIAL', T + 1, 2), ...legacy('RESEND', T + 1, 1)]);
    assert.deepEqual((await c.ledger(a, undefined, 50)).lines.map((l) => [l.count, l.delta]), [[1, -10], [2, -20], [3, -30]]);
  });

  test('the invoice search: each filter, whole values and parts of 2 characters or more, phones with dashes or spaces, one row per invoice, newest first', async () => {
    const a = await account();
    const b = await account();
    const ids = await insert(a, [
      invoice(a, { receiver_name: '김민수', reason: '김민수', receiver_phone: '01011112222', created_at: T }),
      invoice(a, { receiver_name: '이영희', guardian_phone: '01011112222', send_status: 'FAILED', created_at: T + 1_000 }),
      invoice(a, { receiver_name: '박철수', request_id: 'order-0001', created_at: T + 2_000 }),
      invoice(a, { receiver_name: '최지우', status: 'DONE', created_at: T + 2_000 }),
      invoice(a, { receiver_name: '김민수', deleted_at: T, created_at: T + 3_000 }),
    ]);
    await insert(b, [invoice(b, { receiver_name: '김민수', receiver_phone: '01011112222', created_at: T + 5_000 })]);
    const find = async (f: q.InvoiceFilter, limit = 10) => (await q.searchInvoices(h.db, a, f, { limit })).map((r) => Number(r.id));
    const [kim, lee, park, choi] = ids as [number, number, number, number];
    assert.deepEqual(await find({}), [choi, park, lee, kim], 'newest first, the id breaking a tie; deleted and other accounts\' invoices left out');
    assert.deepEqual(await find({ status: 'DONE' }), [choi]);
    assert.deepEqual(await find({ sendStatus: 'FAILED' }), [lee]);
    assert.deepEqual(await find({ from: T + 1_000 }), [choi, park, lee]);
    assert.deepEqual(await find({ to: T + 1_000 }), [kim]);
    assert.deepEqual(await find({ q: '김민수' }), [kim], 'matched by name and by reason: listed once');
    assert.deepEqual(await find({ q: '010-1111-2222' }), [lee, kim], 'the phone and the guardian phone, merged newest first');
    assert.deepEqual(await find({ q: '010 1111 2222' }, 1), [lee], 'the page size holds after the merge');
    assert.deepEqual(await find({ q: 'order-0001' }), [park]);
    assert.deepEqual(await find({ q: '김민' }), [kim], 'a part of a name (the deleted invoice and the other account\'s left out)');
    assert.deepEqual(await find({ q: '민' }), [], 'one character is not looked for as a part');
    assert.deepEqual(await find({ q: '김민수', status: 'DONE' }), [], 'a term within the filter');
    const [x, y] = await insert(a, [invoice(a, { receiver_name: '정하나', receiver_phone: '01099998888', created_at: T + 500 }), invoice(a, { receiver_name: '정두리', guardian_phone: '01099998888', created_at: T + 500 })]);
    assert.deepEqual(await find({ q: '01099998888' }), [y, x], 'found by two columns at the same time: the higher id first');
    const cursor = { at: T + 2_000, id: choi };
    assert.deepEqual((await q.searchInvoices(h.db, a, {}, { after: cursor, limit: 10 })).map((r) => Number(r.id)), [park, lee, y, x, kim], 'after the cursor: same time and a lower id, or earlier');
  });

  test('the console\'s pages of the search: exactly one page, one row more, and the cursor that continues', async () => {
    const a = await account();
    const ids = await insert(a, Array.from({ length: 5 }, (_, i) => invoice(a, { created_at: T + i })));
    const c = new InvoicingConsole(h.db);
    const p1 = await c.search(a, {}, undefined, 2);
    assert.deepEqual(p1.rows.map((r) => Number(r.id)), [ids[4], ids[3]]);
    assert.deepEqual(p1.next, { at: T + 3, id: ids[3] });
    const p2 = await c.search(a, {}, p1.next!, 2);
    assert.deepEqual(p2.rows.map((r) => Number(r.id)), [ids[2], ids[1]]);
    const p3 = await c.search(a, {}, p2.next!, 2);
    assert.deepEqual([p3.rows.map((r) => Number(r.id)), p3.next], [[ids[0]], null]);
    const whole = await c.search(a, {}, undefined, 5);
    assert.deepEqual([whole.rows.length, whole.next], [5, null], 'exactly a page: no next page');

    const all: number[] = [];
    for await (const r of q.allInvoices(h.db, a, {}, 2)) all.push(Number(r.id));
    assert.deepEqual(all, [...ids].reverse(), 'the export walks every page');
    const three: number[] = [];
    for await (const r of q.allInvoices(h.db, a, { from: T + 2 }, 3)) three.push(Number(r.id));
    assert.deepEqual(three, [ids[4], ids[3], ids[2]]);
  });

  test('an invoice\'s webhook deliveries: each event with its own attempts only', async () => {
    const a = await account();
    const [inv, bare] = await insert(a, [invoice(a, { status: 'CANCELED', canceled_at: T }), invoice(a)]);
    assert.deepEqual(await q.webhookDeliveries(h.db, a, bare!), []);
    const ev = async (event: 'bill.paid' | 'bill.canceled', invoiceId: number) => (await h.db.transaction().execute((trx) =>
      repo.insertWebhookEvent(trx, { invoiceId, accountId: a, event, url: 'https://example.com/hook', body: '{}', now: T })))!;
    const paid = await ev('bill.paid', inv!);
    const canceled = await ev('bill.canceled', inv!);
    const attempt = (target: 'WEBHOOK' | 'CALLBACK', ref: number, no: number) => ({ job_id: `job-${seq++}`, target, ref_id: String(ref), attempt_no: no, url: 'https://example.com/hook', status_code: 500, error: null, duration_ms: 10, created_at: T, delivery_id: null });
    await h.db.insertInto('outbound_attempts').values([attempt('WEBHOOK', paid, 1), attempt('WEBHOOK', canceled, 1), attempt('WEBHOOK', paid, 2), attempt('CALLBACK', paid, 9)]).execute();
    const got = await q.webhookDeliveries(h.db, a, inv!);
    assert.deepEqual(got.map((e) => [e.event, e.attempts.map((x) => x.attempt_no)]), [['bill.paid', [1, 2]], ['bill.canceled', [1]]]);
    assert.deepEqual(await q.webhookDeliveries(h.db, 'another-account', inv!), []);

  });

  test('the console\'s invoice of a payment: this team\'s uniqueId, OTHER for another team of the store, nothing when deleted or unknown; deliveries of an unknown invoice are 404', async () => {
    const a = await account();
    const b = await account();
    const c = new InvoicingConsole(h.db);
    const pay = `pay-${seq++}`;
    const gone = `pay-${seq++}`;
    const mine = `mine-${seq++}`;
    await insert(a, [invoice(a, { payment_id: pay, unique_id: mine }), invoice(a, { payment_id: gone, deleted_at: T })]);
    assert.equal(await c.invoiceOfPayment(a, pay, 'SCONS'), mine);
    assert.equal(await c.invoiceOfPayment(b, pay, 'SCONS'), 'OTHER');
    assert.equal(await c.invoiceOfPayment(a, pay, 'SOTHER'), undefined, 'another store\'s payment of the same id');
    assert.equal(await c.invoiceOfPayment(a, gone, 'SCONS'), undefined, 'deleted');
    assert.equal(await c.invoiceOfPayment(a, 'pay-none', 'SCONS'), undefined);
    await assert.rejects(c.deliveries(a, 'no-such-invoice'), (e: unknown) => e instanceof AppError && e.kind === 'NOT_FOUND' && e.message === 'id: no such invoice');
    await assert.rejects(c.deliveries(b, mine), (e: unknown) => e instanceof AppError && e.kind === 'NOT_FOUND', 'another team\'s invoice');
    assert.deepEqual(await c.deliveries(a, mine), []);
  });
});
