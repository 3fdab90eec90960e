import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { ensureDelivery, type Delivery } from '../../src/jobs/delivery-repository.js';
import { deliver, OutboundFailure, recordAttempt, retryAfterMs } from '../../src/jobs/outbound.js';
import { createHttpOut, type HttpOut } from '../../src/ports/http-out.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { Receiver } from '../helpers/receiver.js';

describe('retryAfterMs', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  test('seconds, with spaces around them', () => {
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs(' 7 ', now), 7000);
    assert.equal(retryAfterMs('0', now), 0);
  });
  test('an HTTP date: the time until it, never below 0', () => {
    assert.equal(retryAfterMs(new Date(now + 90_000).toUTCString(), now), 90_000);
    assert.equal(retryAfterMs(new Date(now - 90_000).toUTCString(), now), 0);
  });
  test('absent, empty or unreadable: none', () => {
    assert.equal(retryAfterMs(undefined, now), null);
    assert.equal(retryAfterMs('', now), null);
    assert.equal(retryAfterMs('soon', now), null);
    // Digits with something before or after them are neither seconds nor a date.
    assert.equal(retryAfterMs('x5', now), null);
    assert.equal(retryAfterMs('1a', now), null);
  });
});

forEachEngine('outbound attempts', (engine) => {
  let drop: () => Promise<void>;
  let store: DatabaseHandle;
  let receiver: Receiver;
  const http = createHttpOut({ allowPrivateTargets: true, timeoutMs: 5000 });
  before(async () => {
    const d = await createTestDatabase(engine);
    drop = d.drop;
    store = openDatabase(d.url);
    await migrate(store.db);
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.close();
    await store?.close();
    await drop?.();
  });

  const now = Date.UTC(2026, 0, 1);
  let n = 0;
  const delivery = (): Promise<Delivery> => {
    n++;
    return ensureDelivery(store.db, { storeCode: 'S1', kind: 'callback', number: `D${n}`, refId: `ref-${n}`, url: receiver.url, headers: {}, body: '{}', now });
  };
  const attemptsOf = (jobId: string) => store.db.selectFrom('outbound_attempts').selectAll().where('job_id', '=', jobId).orderBy('id').execute();
  const statusOf = async (id: string) => (await store.db.selectFrom('deliveries').select(['status', 'attempts', 'last_attempt_at']).where('id', '=', id).executeTakeFirstOrThrow());
  const post = (jobId: string, extra: Partial<Parameters<typeof deliver>[2]> = {}, port: HttpOut = http) =>
    deliver(store.db, port, { jobId, target: 'CALLBACK', refId: `r-${jobId}`, attemptNo: 2, url: `${receiver.url}/confirm`, body: Buffer.from('{"a":1}'), headers: { 'x-sig': 'abc' }, now, ...extra });
  /** The OutboundFailure a call rejects with. */
  const failure = async (p: Promise<void>): Promise<OutboundFailure> => {
    try {
      await p;
    } catch (err) {
      assert.ok(err instanceof OutboundFailure, String(err));
      return err;
    }
    assert.fail('expected an OutboundFailure');
  };

  test('a 2xx: the exact bytes and headers are sent, the attempt is recorded, the delivery delivered', async () => {
    const d = await delivery();
    const seen = receiver.received.length;
    await post('job-ok', { of: { deliveryId: d.id, trigger: 'manual', final: false } });
    const got = receiver.received[seen]!;
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/confirm');
    assert.equal(got.raw.toString(), '{"a":1}');
    assert.equal(got.headers['x-sig'], 'abc');
    const [a, ...more] = await attemptsOf('job-ok');
    assert.equal(more.length, 0);
    assert.deepEqual({ ...a, id: 0, duration_ms: 0 }, {
      // The job's attempt 2, but the delivery's first: numbered in the delivery's one sequence.
      id: 0, job_id: 'job-ok', target: 'CALLBACK', ref_id: 'r-job-ok', attempt_no: 1, url: `${receiver.url}/confirm`, status_code: 200, error: null,
      duration_ms: 0, created_at: now, delivery_id: d.id, trigger: 'manual', response_body: '{}',
    });
    assert.ok(Number(a!.duration_ms) >= 0 && Number(a!.duration_ms) < 5000, `duration ${a!.duration_ms}`);
    assert.deepEqual(await statusOf(d.id), { status: 'delivered', attempts: 1, last_attempt_at: now });
  });

  test('2xx bounds: 200 and 299 succeed; 300 and 399 are redirects not followed; 400 and 500 fail', async () => {
    for (const status of [200, 299]) {
      receiver.script.push(status);
      await post(`job-${status}`);
      assert.equal((await attemptsOf(`job-${status}`))[0]!.error, null);
    }
    for (const [status, message] of [[300, 'redirect 300 not followed'], [399, 'redirect 399 not followed'], [400, 'HTTP 400'], [500, 'HTTP 500']] as const) {
      receiver.script.push(status);
      const f = await failure(post(`job-${status}`));
      assert.equal(f.message, message);
      assert.equal(f.status, status);
      assert.equal(f.retryAfterMs, null);
      const [a] = await attemptsOf(`job-${status}`);
      assert.equal(a!.status_code, status);
      assert.equal(a!.error, message);
      assert.equal(a!.delivery_id, null, 'an attempt without a delivery');
      assert.equal(a!.trigger, 'scheduled');
    }
  });

  test('a port that answers below 200 is a failure too', async () => {
    const odd: HttpOut = { post: async () => ({ status: 199 }) };
    const f = await failure(post('job-199', {}, odd));
    assert.equal(f.message, 'HTTP 199');
    assert.equal(f.status, 199);
    assert.equal((await attemptsOf('job-199'))[0]!.response_body, null);
  });

  test('a failure leaves the delivery pending unless it was the last try, which fails it', async () => {
    const d = await delivery();
    receiver.script.push(500);
    await failure(post('job-f1', { of: { deliveryId: d.id, trigger: 'scheduled', final: false } }));
    assert.deepEqual(await statusOf(d.id), { status: 'pending', attempts: 1, last_attempt_at: now });
    receiver.script.push(500);
    await failure(post('job-f2', { of: { deliveryId: d.id, trigger: 'scheduled', final: true } }));
    assert.deepEqual(await statusOf(d.id), { status: 'failed', attempts: 2, last_attempt_at: now });
  });

  test('Retry-After is read from a 429 or a 503 only', async () => {
    receiver.responseHeaders = { 'retry-after': '3' };
    try {
      for (const [status, pause] of [[429, 3000], [503, 3000], [500, null], [502, null]] as const) {
        receiver.script.push(status);
        const f = await failure(post(`job-ra-${status}`));
        assert.equal(f.retryAfterMs, pause, `status ${status}`);
      }
      receiver.script.push(200);
      await post('job-ra-200');
    } finally {
      receiver.responseHeaders = {};
    }
  });

  test('no answer: the error is the connection\'s (at most 300 characters, never empty), without a status', async () => {
    const refusing = (message: string): HttpOut => ({ post: async () => { throw new Error(message); } });
    const f = await failure(post('job-conn', {}, refusing('connect ECONNREFUSED')));
    assert.equal(f.name, 'OutboundFailure');
    assert.equal(f.status, null);
    assert.equal(f.retryAfterMs, null);
    assert.equal(f.message, 'connect ECONNREFUSED');
    const [a] = await attemptsOf('job-conn');
    assert.equal(a!.status_code, null);
    assert.equal(a!.response_body, null);
    assert.equal(a!.error, 'connect ECONNREFUSED');
    await failure(post('job-long', {}, refusing('y'.repeat(300) + 'TAIL')));
    assert.equal((await attemptsOf('job-long'))[0]!.error, 'y'.repeat(300));
    assert.equal((await failure(post('job-empty', {}, refusing('')))).message, 'connection failed');
    // A real refused connection (the port of a closed receiver) is recorded the same way.
    const gone = await new Receiver().start();
    await gone.close();
    const real = await failure(post('job-gone', { url: gone.url }));
    assert.equal(real.status, null);
    assert.match((await attemptsOf('job-gone'))[0]!.error!, /ECONNREFUSED/);
  });

  test('recordAttempt: an attempt that never reached the network, with its delivery settled in the same transaction', async () => {
    const d = await delivery();
    await recordAttempt(store.db, {
      jobId: 'job-rec', target: 'WEBHOOK', refId: 'r', attemptNo: 1, url: 'https://x.invalid/', now, statusCode: null, error: 'endpoint disabled', durationMs: 0,
      of: { deliveryId: d.id, trigger: 'scheduled', final: true },
    });
    const [a] = await attemptsOf('job-rec');
    assert.equal(a!.target, 'WEBHOOK');
    assert.equal(a!.response_body, null);
    assert.equal(a!.error, 'endpoint disabled');
    assert.deepEqual(await statusOf(d.id), { status: 'failed', attempts: 1, last_attempt_at: now });
    await recordAttempt(store.db, { jobId: 'job-rec2', target: 'WEBHOOK', refId: 'r', attemptNo: 1, url: 'https://x.invalid/', now, statusCode: 204, error: null, durationMs: 3, responseBody: 'ok', of: { deliveryId: d.id, trigger: 'manual', final: false } });
    assert.equal((await attemptsOf('job-rec2'))[0]!.response_body, 'ok');
    assert.deepEqual(await statusOf(d.id), { status: 'delivered', attempts: 2, last_attempt_at: now });
  });
});
