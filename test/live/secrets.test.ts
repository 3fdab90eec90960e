/**
 * No card number, key or secret in any log line or database file of a live run (docs/going-live.md,
 * "PCI DSS"): a run through every path that touches them, then every log line and the whole
 * database (the SQLite files as bytes; every PostgreSQL row as text) searched for them.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, paymentBody } from '../helpers/app.js';
import { findWhole } from '../helpers/text.js';
import { createOne, newAccount, waitSent } from '../invoicing/support.js';
import { FAKE_SOLAPI } from '../fakes/solapi.js';
import { LIVE_SECRET_KEY, payOnPage, withFakes, withLiveApp } from './support.js';

const CARDS = ['4242424242424242', '4000000000009995', '4000000000003220', '5555555555554444'];

forEachEngine('live mode keeps card numbers and secrets out of logs and the database', (engine) => {
  const f = withFakes();
  const t = withLiveApp(engine, f, () => ({ LOG_LEVEL: 'debug' }));

  async function databaseText(): Promise<string> {
    if (engine === 'sqlite') {
      const path = t.databaseUrl.slice('sqlite:'.length);
      return [path, `${path}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString('latin1') + readFileSync(p).toString('utf8')).join('\n');
    }
    const tables = await sql<{ tablename: string }>`select tablename from pg_tables where schemaname = 'public'`.execute(t.app.sunap.database.db);
    const parts: string[] = [];
    for (const { tablename } of tables.rows) {
      const rows = await sql<{ r: string }>`select row_to_json(x)::text as r from ${sql.table(tablename)} x`.execute(t.app.sunap.database.db);
      parts.push(...rows.rows.map((x) => x.r));
    }
    return parts.join('\n');
  }

  test('after payments, a decline, a lost answer, a cancel and invoice messages, nothing secret is written anywhere', async () => {
    for (const card of CARDS) {
      const body = paymentBody();
      const r = await t.gw('requestPayment', body);
      await payOnPage(t, r.body.result_data.REDIRECT_URL, card);
      if (card === '4242424242424242') {
        const c = await t.gw('requestPaymentCancel', { TRANS_SEQNO: body.TRANS_SEQNO, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: body.APPROVAL_AMOUNT, MOBILE_NO: body.MOBILE_NO });
        assert.equal(c.body.result_data.RESULT_CODE, '0000');
      }
    }
    const a = await newAccount(t, { points: 1000 });
    const id = await createOne(t, a, { sendChannel: 'ALIMTALK_THEN_SMS' });
    await waitSent(t, a, id);
    await t.post(`/app/v1/sales/bill/${id}/refresh-status`, {}, a.h);

    const secrets: [string, string][] = [
      ...CARDS.map((c): [string, string] => [`card ${c}`, c]),
      ['the master key (hex)', LIVE_SECRET_KEY],
      ['the master key (base64)', Buffer.from(LIVE_SECRET_KEY, 'hex').toString('base64')],
      ['the Toss secret key', f.toss.secretKey],
      ['the Toss Basic credentials', Buffer.from(`${f.toss.secretKey}:`).toString('base64')],
      ['the Solapi API secret', FAKE_SOLAPI.apiSecret],
      ['the platform API key', t.apiKey],
    ];
    const logs = t.logs.join('');
    assert.ok(logs.length > 1000, 'the run logged');
    const db = await databaseText();
    assert.ok(db.includes('424242'), 'the database holds what it may: the first six digits');
    for (const [what, value] of secrets) {
      assert.ok(!logs.includes(value), `${what} in a log line`);
      assert.ok(!db.includes(value), `${what} in the database`);
    }
    // The card expiry and birth date of the form, and the Solapi signature's secret, likewise. The
    // birth date as a whole value only: its six digits turn up by chance inside timestamps and
    // response times.
    assert.ok(!logs.includes('"12/39"') && !findWhole(logs, '900101'), 'card form fields in a log line');
  });
});
