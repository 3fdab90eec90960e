import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, withApp } from '../helpers/app.js';
import { billBody, ledgerMatches, newAccount, waitSent } from '../invoicing/support.js';
import { ConsoleClient, textOf } from './support.js';

/**
 * The points page shows one line per send (docs/console.md, "Points"): a class of 30 billed at
 * once is "청구서 30건 발송 -300P", opening (<details>) to its 30 invoices; a send of one is a
 * line with its invoice; a refund of a failed message stays a line of its own.
 */
forEachEngine('console: points ledger, one line per send', (engine) => {
  const t = withApp(engine);

  test('a send of 30 is one line of -300P with its 30 invoices inside; a send of 1 is one line; the refund of a failed message its own line; the balance equals the lines\' sum', async () => {
    const a = await newAccount(t, { points: 1000 });
    // 0000 fails on every channel in the sandbox: its 10P come back as a REFUND line.
    const members = Array.from({ length: 30 }, (_, i) => ({ studentName: `학생${i}`, studentPhone: i === 0 ? '01055550000' : `0105555${String(1000 + i)}` }));
    assert.equal((await t.post('/app/v1/sales/bill', billBody({ reason: '11월 수강료', amount: 10000, members }), a.h)).body.result_code, 0);
    const list = await t.get('/app/v1/sales/bill?size=100', a.h);
    const failed = list.body.result_data.bills.find((b: { receiver: { phone: string } }) => b.receiver.phone === '01055550000');
    assert.equal((await waitSent(t, a, failed.uniqueId)).bill.sendStatus, 'FAILED');
    assert.equal((await t.post('/app/v1/sales/bill', billBody({ reason: '교재비', amount: 15000 }), a.h)).body.result_code, 0);

    const c = new ConsoleClient(t);
    await c.signIn(a.email, a.password);
    const page = await c.get('/console/points');
    assert.equal(page.status, 200);
    const rows = [...page.text.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => textOf(m[1]!).trim()).filter((r) => /발송 차감|환급|지급/.test(r));
    assert.equal(rows.length, 4, rows.join('\n'));
    assert.match(rows[0]!, /발송 차감 -10P 홍길동 · 교재비/);
    assert.match(rows[1]!, /환급 \+10P 학생0 · 11월 수강료/);
    assert.match(rows[2]!, /발송 차감 -300P 청구서 30건 발송/);
    assert.match(rows[3]!, /지급 \+1,000P/);
    // The service's own memos (INITIAL, "send failed", "SMS carried it") read in Korean.
    assert.match(rows[0]!, /교재비\s+발송$/);
    assert.match(rows[1]!, /포인트 환급/);
    for (const r of rows) assert.doesNotMatch(r, /INITIAL|RESEND|carried|failed|delivered/, r);
    const details = /<details class="ledger-send">([\s\S]*?)<\/details>/.exec(page.text)?.[1] ?? '';
    assert.equal([...details.matchAll(/<li>/g)].length, 30, 'the send opens to its 30 invoices');
    assert.equal([...details.matchAll(/href="\/console\/invoices\/[0-9a-f-]{36}"/g)].length, 30);
    assert.ok(textOf(details).includes('학생29 · 11월 수강료 -10P'));
    assert.deepEqual(await ledgerMatches(t, a.accountId), { balance: 1000 - 300 - 10 + 10, ledger: 700 });
  });
});
