import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { Kind, Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import * as gatewaySchemas from '../../src/gateway/schemas.js';
import * as deliverySchemas from '../../src/invoicing/delivery-schemas.js';
import { PublicInvoiceSchema } from '../../src/invoicing/public.js';
import * as invoicingSchemas from '../../src/invoicing/schemas.js';
import { JOBS } from '../../src/app.js';
import { PAYMENT_STATES } from '../../src/gateway/payment-state.js';
import { forEachEngine, freePort, paymentBody, seqNo, startApp, withApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { docExample } from '../helpers/openapi.js';

test('every example in the interfaces\' schemas is valid for the schema it illustrates (what /docs shows can be sent or is what comes back)', () => {
  const seen = new Set<unknown>();
  let examples = 0;
  const walk = (schema: unknown, path: string): void => {
    if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const s = schema as TSchema & { examples?: unknown[]; properties?: Record<string, unknown>; items?: unknown; anyOf?: unknown[] };
    if (Kind in s && Array.isArray(s.examples)) {
      for (const ex of s.examples) {
        examples++;
        assert.ok(Value.Check(s, ex), `${path}: the example ${JSON.stringify(ex).slice(0, 80)} → ${[...Value.Errors(s, ex)].map((e) => `${e.path} ${e.message}`).join('; ')}`);
      }
    }
    for (const [k, sub] of Object.entries(s.properties ?? {})) walk(sub, `${path}.${k}`);
    walk(s.items, `${path}[]`);
    for (const branch of s.anyOf ?? []) walk(branch, path);
  };
  for (const [name, value] of Object.entries({ ...gatewaySchemas, ...invoicingSchemas, ...deliverySchemas, PublicInvoiceSchema })) walk(value, name);
  walk(gatewaySchemas.gatewayEnvelopeSchema(Type.Object({})), 'gatewayEnvelopeSchema');
  walk(invoicingSchemas.Envelope(Type.Object({})), 'Envelope');
  assert.ok(examples >= 40, `${examples} examples checked`);
});

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
    assert.deepEqual([docExample(pay.cardNumber), docExample(pay.installmentMonth)], ['4242424242424242', '00']);
  });

  test("/docs' gateway examples are a call that works and the answers Sunap gives; the descriptions point at sections that exist", async () => {
    const doc = (await t.get('/docs/json')).body;
    const op = doc.paths['/api/requestPayment'].post;
    const schema = op.requestBody.content['application/json'].schema;
    // Every required field shows an example, so a newcomer can copy a whole body.
    const body: Record<string, unknown> = {};
    for (const k of schema.required as string[]) {
      body[k] = docExample(schema.properties[k]);
      assert.equal(typeof body[k], 'string', `${k} has an example`);
      assert.ok((body[k] as string).length > 0, `${k}'s example is not empty`);
    }
    for (const k of ['RETURN_URL', 'TEMP_VALUE']) {
      body[k] = docExample(schema.properties[k]);
      assert.ok(typeof body[k] === 'string' && body[k].length > 0, `${k} has an example`);
    }
    // TRANS_AT's description names the window's variable and the window this server applies.
    const window = /within (SUNAP_\w+) \((\d+)\)/.exec(schema.properties.TRANS_AT.description);
    assert.deepEqual(window?.slice(1), ['SUNAP_SIGN_MAX_SKEW_SECONDS', String(t.app.sunap.config.signMaxSkewSeconds)]);
    // API_SIGN's example is the signature of the other examples with the key its description names.
    const sign = schema.properties.API_SIGN;
    const key = /with the API key (\S+?)\.?$/.exec(sign.description)?.[1];
    assert.ok(key, sign.description);
    const signed = createHash('sha256').update(`${body.TRANS_SEQNO}${body.PLATFORM_CODE}${body.STORE_CODE}${body.TRANS_AT}${key}`).digest('hex');
    assert.equal(body.API_SIGN, signed);
    // The same body, with this server's store, a fresh number and the time now, is accepted as it is.
    const mine: Record<string, unknown> = { ...body, TRANS_SEQNO: seqNo() };
    delete mine.PLATFORM_CODE; delete mine.STORE_CODE; delete mine.TRANS_AT; delete mine.API_SIGN;
    const made = await t.gw('requestPayment', mine);
    assert.equal(made.body.result_data.RESULT_CODE, '0000', JSON.stringify(made.body));
    // The documented success and refusal are what Sunap answers, field by field.
    const ok = op.responses['200'].content['application/json'].schema.properties;
    assert.deepEqual([docExample(ok.result_code), docExample(ok.result_msg), docExample(ok.result_data.properties.RESULT_CODE), docExample(ok.result_data.properties.RESULT_MSG)],
      [made.body.result_code, made.body.result_msg, made.body.result_data.RESULT_CODE, made.body.result_data.RESULT_MSG]);
    const refused = await t.post('/api/requestPayment', 'null');
    assert.equal(refused.status, 400);
    for (const path of ['/api/requestPayment', '/api/searchPayment', '/api/requestPaymentCancel']) {
      const no = doc.paths[path].post.responses['400'].content['application/json'].schema.properties;
      assert.deepEqual([docExample(no.result_code), docExample(no.result_msg), docExample(no.result_data.properties.RESULT_CODE), docExample(no.result_data.properties.RESULT_MSG)],
        [refused.body.result_code, refused.body.result_msg, refused.body.result_data.RESULT_CODE, refused.body.result_data.RESULT_MSG], path);
    }
    // APPROVE_STATUS names every state a payment can be in; RESULT_CODE and API_SIGN send the reader to sections of docs/reference.md that exist.
    const record = doc.paths['/api/searchPayment'].post.responses['200'].content['application/json'].schema.properties.result_data.properties;
    for (const state of PAYMENT_STATES) assert.ok(record.APPROVE_STATUS.description.includes(state), state);
    const headings = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'reference.md'), 'utf8').split('\n').filter((l) => l.startsWith('#'));
    for (const description of [record.RESULT_CODE.description, sign.description]) {
      const section = /docs\/reference\.md, "([^"]+)"/.exec(description)?.[1];
      assert.ok(section && headings.some((h) => h.includes(section)), `${description} → a heading of docs/reference.md`);
    }
    // CONFIRM_URL's description gives its length limit and the code past it, as the service applies them.
    const confirm = /at most (\d+) characters \(longer: (\d{4})\)/.exec(schema.properties.CONFIRM_URL.description);
    assert.ok(confirm, schema.properties.CONFIRM_URL.description);
    const url = (n: number) => 'https://shop.example.com/' + 'c'.repeat(n - 'https://shop.example.com/'.length);
    assert.equal((await t.gw('requestPayment', paymentBody({ CONFIRM_URL: url(Number(confirm[1])) }))).body.result_data.RESULT_CODE, '0000');
    assert.equal((await t.gw('requestPayment', paymentBody({ CONFIRM_URL: url(Number(confirm[1]) + 1) }))).body.result_data.RESULT_CODE, confirm[2]);
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
