import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { JOBS } from '../../src/app.js';
import { forEachEngine, freePort, paymentBody, startApp, withApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

forEachEngine('operations', (engine) => {
  const t = withApp(engine);

  test('JOBS (src/app.ts) lists exactly the jobs the app registers: the reliability harness and the bench read the housekeeping ones from it', () => {
    const registered = t.app.sunap.worker.registeredKinds().sort();
    assert.deepEqual(JOBS.map((j) => j.kind).sort(), registered);
    assert.ok(registered.length >= 7, registered.join());
    assert.deepEqual(JOBS.filter((j) => j.housekeeping).map((j) => j.kind).sort(), ['invoicing.throttle-purge', 'jobs.prune-attempts']);
  });

  test('healthz and readyz', async () => {
    assert.deepEqual((await t.get('/healthz')).body, { status: 'ok' });
    const r = await t.get('/readyz');
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ready');
  });

  test('metrics: requests by route and result code, payments by state, job queue', async () => {
    const body = paymentBody({ CONFIRM_URL: 'https://127.0.0.1:9/unreachable' });
    await t.gw('requestPayment', body);
    await t.gw('searchPayment', { TRANS_SEQNO: body.TRANS_SEQNO });
    await t.gw('searchPayment', { TRANS_SEQNO: 'NOPE' });
    await t.pay(body.TRANS_SEQNO as string);
    // The callback to an unreachable address fails once; wait for the worker to record it.
    let m = await t.get('/metrics');
    for (let i = 0; i < 200 && !/sunap_job_failures_total\{kind="gateway.callback"/.test(m.text); i++) {
      await new Promise((r) => setTimeout(r, 25));
      m = await t.get('/metrics');
    }
    assert.equal(m.status, 200);
    assert.match(m.headers.get('content-type')!, /text\/plain/);
    assert.match(m.text, /sunap_http_requests_total\{method="POST",route="\/api\/searchPayment",status="200",result_code="0000"\} 1/);
    assert.match(m.text, /sunap_http_requests_total\{method="POST",route="\/api\/searchPayment",status="200",result_code="4003"\} 1/);
    assert.match(m.text, /sunap_http_request_duration_seconds_bucket\{le="[^"]+",method="POST",route="\/api\/requestPayment",result_code="0000"\}/);
    assert.match(m.text, /sunap_payments\{state="APPROVE_COMPLETE"\} 1/);
    assert.match(m.text, /sunap_jobs_pending\{kind="gateway.callback"\} 1/);
    assert.match(m.text, /sunap_job_failures_total\{kind="gateway.callback",final="false"\} 1/);
  });

  test('/docs serves OpenAPI 3 generated from the route schemas', async () => {
    const ui = await t.get('/docs');
    assert.ok([200, 302].includes(ui.status));
    const doc = (await t.get('/docs/json')).body;
    assert.match(doc.openapi, /^3\./);
    const create = doc.paths['/api/requestPayment'].post;
    const schema = create.requestBody.content['application/json'].schema;
    assert.ok(schema.required.includes('TRANS_SEQNO'));
    assert.equal(schema.properties.TRANS_AT.pattern, '^\\d{14}$');
    assert.ok(doc.paths['/api/searchPayment'] && doc.paths['/api/requestPaymentCancel']);
    assert.ok(doc.paths['/sandbox/clock']);
    // Each gateway call: grouped under Gateway, its result codes named, and its error answers documented beside the success.
    for (const path of ['/api/requestPayment', '/api/searchPayment', '/api/requestPaymentCancel']) {
      const op = doc.paths[path].post;
      assert.deepEqual(op.tags, ['Gateway'], path);
      assert.ok(op.summary.length > 10, path);
      assert.match(op.description, /RESULT_CODE: 0000, or \d{4}/, path);
      assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '413', '500'], path);
      for (const code of ['400', '413', '500']) {
        const refusal = op.responses[code].content['application/json'].schema;
        assert.deepEqual(Object.keys(refusal.properties.result_data.properties).sort(), ['RESULT_CODE', 'RESULT_MSG'], `${path} ${code}`);
      }
    }
    for (const path of ['/sandbox/payments/{TRANS_SEQNO}/pay', '/sandbox/terminal-payments']) {
      assert.deepEqual(doc.paths[path].post.tags, ['Sandbox'], path);
      assert.ok(doc.paths[path].post.summary.length > 10, path);
    }
    // The sandbox pay call shows the default card and a lump sum as its examples.
    const pay = doc.paths['/sandbox/payments/{TRANS_SEQNO}/pay'].post.requestBody.content['application/json'].schema.properties;
    const example = (p: { examples?: unknown[]; example?: unknown }) => p.examples?.[0] ?? p.example;
    assert.deepEqual([example(pay.cardNumber), example(pay.installmentMonth)], ['4242424242424242', '00']);
  });

  test('logs never hold the API key, the signature, a card number or the page token', async () => {
    const body = paymentBody();
    const r = await t.gw('requestPayment', body);
    const link = new URL(r.body.result_data.REDIRECT_URL);
    await t.get(link.pathname + link.search);
    await t.pay(body.TRANS_SEQNO as string, '5555555555554444');
    await t.gw('requestPayment', { ...paymentBody(), API_SIGN: 'f'.repeat(64) });
    const logs = t.logs.join('');
    assert.ok(logs.length > 0, 'the app did log requests');
    for (const secret of [t.apiKey, '5555555555554444', link.searchParams.get('token')!, 'f'.repeat(64)]) {
      assert.ok(!logs.includes(secret), `log contains ${secret.slice(0, 6)}…`);
    }
  });

  test('readyz answers 503 when the database is gone', async () => {
    const t2 = await startApp(engine);
    try {
      await t2.app.sunap.database.db.destroy();
      const r = await t2.get('/readyz');
      assert.equal(r.status, 503);
      assert.equal(r.body.status, 'unavailable');
    } finally {
      await t2.close().catch(() => {});
    }
  });
});

describe('graceful shutdown', () => {
  test('SIGTERM: stops accepting, finishes, exits 0', async () => {
    const db = await createTestDatabase('sqlite');
    const port = await freePort();
    const child = spawn(process.execPath, [join(resolve(import.meta.dirname, '..', '..'), 'bin', 'sunap.js'), 'serve'], {
      env: { ...process.env, DATABASE_URL: db.url, PORT: String(port), SUNAP_SECRET_KEY: '33'.repeat(32) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
        if (ok) break;
        if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.match(out, /shutting down/);
      await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
    } finally {
      child.kill('SIGKILL');
      await db.drop();
    }
  });
});
