import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { apiSign } from '../src/platform/crypto.js';
import { kstCompact } from '../src/platform/kst.js';
import { cli, sunapBin } from './helpers/cli.js';
import { createTestDatabase, engines } from './helpers/db.js';
import { childEnv, freePort } from './helpers/process.js';
import { eventually } from './helpers/wait.js';

/**
 * The smoke run: what an operator does first, through the real `sunap` bin and a real `sunap
 * serve`, nothing built in-process. CI runs the whole suite on one Node LTS line and this file
 * alone on the others (.ci/run), so it must prove the runtime works end to end: the server
 * starts and stops, the CLI creates what a merchant needs, one payment is paid and looked up,
 * one invoice is sent and its message leaves.
 */
const SECRET = '5a'.repeat(16) + '3c'.repeat(16);

for (const engine of engines) {
  test(`smoke [${engine}]: serve, the CLI, one payment, one invoice, a clean stop (Node ${process.versions.node})`, async () => {
    const db = await createTestDatabase(engine);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { json } = cli(() => db.url, SECRET);
    let child: ChildProcess | undefined;
    let out = '';
    try {
      const platform = await json('platform', 'create', '--name', '스모크 플랫폼');
      const store = await json('store', 'create', '--platform-code', String(platform.platformCode), '--name', '스모크 학원');
      await json('account', 'create', '--email', 'smoke@example.com', '--password', 'smoke-password-1', '--store-code', String(store.storeCode));
      assert.deepEqual(await json('points', 'grant', '--email', 'smoke@example.com', '--amount', '100'), { balance: 100 });

      child = spawn(process.execPath, [sunapBin, 'serve'], {
        env: childEnv({ DATABASE_URL: db.url, PORT: String(port), SUNAP_SECRET_KEY: SECRET, SUNAP_JOB_POLL_MS: '100' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (c) => (out += c));
      child.stderr!.on('data', (c) => (out += c));
      const exited = new Promise<number | null>((r) => child!.on('exit', (code) => r(code)));
      await eventually(() => fetch(`${url}/readyz`).then((r) => r.ok, () => false), `the server to answer /readyz (${out})`, 30_000, 100);

      const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
        const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
        return { status: r.status, body: (await r.json()) as Record<string, any> };
      };
      const signed = (op: string, body: Record<string, unknown>) => {
        const at = kstCompact(Date.now());
        const b: Record<string, unknown> = { PLATFORM_CODE: platform.platformCode, STORE_CODE: store.storeCode, TRANS_AT: at, ...body };
        return post(`/api/${op}`, { ...b, API_SIGN: apiSign(String(b.TRANS_SEQNO), String(b.PLATFORM_CODE), String(b.STORE_CODE), at, String(platform.apiKey)) });
      };

      // One payment: created, paid by the sandbox customer, looked up.
      const created = await signed('requestPayment', {
        TRANS_SEQNO: 'SMOKE-1', APPROVAL_AMOUNT: '15000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동', REQUEST_REASON: '스모크 결제',
        CONFIRM_URL: 'http://localhost:9/confirm',
      });
      assert.equal(created.body.result_data.RESULT_CODE, '0000', JSON.stringify(created.body));
      const page = await fetch(created.body.result_data.REDIRECT_URL.replace(/^https?:\/\/[^/]+/, url));
      assert.equal(page.status, 200);
      assert.match(await page.text(), /스모크 결제/);
      const paid = await post('/sandbox/payments/SMOKE-1/pay', { PLATFORM_CODE: platform.platformCode, STORE_CODE: store.storeCode });
      assert.equal(paid.body.approved, true, JSON.stringify(paid.body));
      const found = await signed('searchPayment', { TRANS_SEQNO: 'SMOKE-1' });
      assert.equal(found.body.result_data.APPROVE_STATUS, 'APPROVE_COMPLETE');
      assert.equal(found.body.result_data.APPROVAL_AMOUNT, 15000);

      // One invoice: logged in, sent, its message in the sandbox outbox, its points spent.
      const login = await post('/app/v1/auth/login', { email: 'smoke@example.com', password: 'smoke-password-1', loginType: 'EMAIL' });
      assert.equal(login.status, 200);
      const auth = { 'x-access-token': String(login.body.result_data.accessToken) };
      const bill = await post('/app/v1/sales/bill', { reason: '12월 수강료', amount: 120000, members: [{ studentName: '김철수', studentPhone: '01055556666' }] }, auth);
      assert.equal(bill.body.result_code, 0, JSON.stringify(bill.body));
      const message = await eventually(async () => {
        const r = await fetch(`${url}/sandbox/messages?phone=01055556666`).then((x) => x.json() as Promise<{ messages: { text: string }[] }>);
        return r.messages[0];
      }, 'the invoice message', 30_000, 100);
      assert.match(message.text, /12월 수강료/);
      const points = await fetch(`${url}/app/v1/points/me`, { headers: auth }).then((r) => r.json() as Promise<{ result_data: { balance: number } }>);
      assert.ok(points.result_data.balance < 100, `points were spent: ${points.result_data.balance}`);

      // The CLI beside the running server, and a clean stop.
      const doctor = await json('doctor');
      assert.equal(doctor.ok, true, JSON.stringify(doctor));
      child.kill('SIGTERM');
      assert.equal(await exited, 0, out);
    } finally {
      child?.kill('SIGKILL');
      await db.drop();
    }
  });
}
