import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { forEachEngine, freePort, paymentBody, withApp } from '../helpers/app.js';
import { eventually } from '../helpers/wait.js';
import { billBody, newAccount, waitSent } from '../invoicing/support.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SECRET = 'whsec_0123456789abcdef';

/** The receiver of README "Receive the callback and webhooks", exactly as printed there. */
function readmeReceiver(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Receive the callback and webhooks'));
  const m = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'the README section has a js block');
  return m[1]!;
}

/** A new user follows the README: the receiver runs over plain http on localhost and shows the callback and a verified webhook. */
forEachEngine('compat: the README receiver', (engine) => {
  const t = withApp(engine);
  let child: ChildProcess;
  let out = '';
  let port = 0;
  before(async () => {
    const dir = resolve(ROOT, '.tmp', `readme-receiver-${process.pid}-${engine}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'receiver.mjs');
    writeFileSync(file, readmeReceiver());
    port = await freePort();
    child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: SECRET, RECEIVER_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c) => (out += c));
    child.stderr!.on('data', (c) => (out += c));
    await eventually(async () => out.includes(`listening on http://localhost:${port}`), `the receiver starts: ${out}`);
  });
  after(() => {
    child?.kill();
  });

  test('the callback arrives over http://localhost with txId', async () => {
    const body = paymentBody({ CONFIRM_URL: `http://localhost:${port}/confirm` });
    assert.equal((await t.gw('requestPayment', body)).body.result_data.RESULT_CODE, '0000');
    assert.equal((await t.pay(body.TRANS_SEQNO as string)).approved, true);
    const line = await eventually(async () => out.split('\n').find((l) => l.startsWith('callback ') && l.includes(String(body.TRANS_SEQNO))), `the callback line: ${out}`);
    const cb = JSON.parse(line.slice('callback '.length));
    assert.equal(cb.txId, `${t.platformCode}_${t.storeCode}_${body.TRANS_SEQNO}`);
  });

  test('the webhook arrives and verifies; a wrong secret would not', async () => {
    const a = await newAccount(t, { points: 1000 });
    const created = await t.post('/app/v1/sales/bill', billBody({ webhookUrl: `http://localhost:${port}/hooks`, webhookSecret: SECRET }), a.h);
    assert.equal(created.body.result_code, 0, created.text);
    const id = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
    const d = await waitSent(t, a, id);
    assert.equal((await t.pay(d.bill.transSeqNo)).approved, true);
    const line = await eventually(async () => out.split('\n').find((l) => l.startsWith('webhook ') && l.includes(id)), `the webhook line: ${out}`);
    assert.match(line, /^webhook bill\.paid \d+ verified \{"event":"bill\.paid"/);
    // The other side: an invoice signed with another secret is answered 401 (and retried later).
    const other = await t.post('/app/v1/sales/bill', billBody({ webhookUrl: `http://localhost:${port}/hooks`, webhookSecret: `${SECRET}-other` }), a.h);
    assert.equal(other.body.result_code, 0);
    const id2 = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0].uniqueId;
    const d2 = await waitSent(t, a, id2);
    assert.equal((await t.pay(d2.bill.transSeqNo)).approved, true);
    const bad = await eventually(async () => out.split('\n').find((l) => l.startsWith('webhook ') && l.includes(id2)), `the second webhook line: ${out}`);
    assert.match(bad, /^webhook bill\.paid \d+ NOT verified /);
  });
});
