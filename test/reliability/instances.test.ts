/**
 * Several instances on one PostgreSQL database (README, "Operations"): the test spreads
 * its requests over two or three `sunap serve` processes. No job runs twice, no message or
 * delivery is repeated beyond the documented retries, requestId holds across instances, and
 * a SIGKILLed instance's leased jobs are finished by the others once the lease runs out.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTestDatabase, engines } from '../helpers/db.js';
import {
  checkInvariants, Client, CONFIRM_PATH, createFixture, describeViolations, drain, FaultReceiver, HOUSEKEEPING, newLedger,
  ServerProcess, sleep, STRESS, WEBHOOK_PATH, workloadWorker, type Fixture,
} from './harness.js';

const skip = !engines.includes('postgres');
if (skip) console.error('!! SUNAP_TEST_SKIP_POSTGRES: the several-instances suite (PostgreSQL only) is SKIPPED');

const LEASE_MS = 2000;

async function cluster(name: string, databaseUrl: string, n: number, env: Record<string, string> = {}): Promise<ServerProcess[]> {
  const servers = Array.from({ length: n }, (_, i) => new ServerProcess({
    name: `${name}-${i}`, databaseUrl, env: { SUNAP_JOB_LEASE_MS: String(LEASE_MS), SUNAP_OUTBOUND_TIMEOUT_MS: '1500', ...env },
  }));
  await Promise.all(servers.map((s) => s.start()));
  return servers;
}

async function closeAll(servers: ServerProcess[], fx: Fixture | null, receiver: FaultReceiver, drop: () => Promise<void>) {
  await Promise.all(servers.map((s) => s.close()));
  await receiver.close();
  await fx?.store.close();
  await drop();
}

describe('several instances on one PostgreSQL database [postgres]', { skip: skip ? 'PostgreSQL is not available (SUNAP_TEST_SKIP_POSTGRES)' : false }, () => {
  test('three instances under one workload: no job run twice beyond its recorded failures, one message per send, no delivery beyond the recorded attempts', { timeout: 150_000 }, async () => {
    const database = await createTestDatabase('postgres');
    const fx = await createFixture(database.url, [5_000_000, 4000]);
    const receiver = await new FaultReceiver().start();
    receiver.policy = () => 200;
    const servers = await cluster('instances', database.url, 3);
    try {
      const client = new Client(fx, () => servers.map((s) => s.url));
      const ledger = newLedger();
      let stop = false;
      const workers = Array.from({ length: STRESS ? 6 : 4 }, () => workloadWorker({ client, ledger, receiverUrl: receiver.url }, () => stop));

      // requestId across instances: the same request to two instances at the same moment.
      const a = fx.accounts[0]!;
      const pairs = STRESS ? 40 : 15;
      const rids: string[] = [];
      for (let i = 0; i < pairs; i++) {
        const rid = `pair-${Date.now().toString(36)}-${i}`;
        rids.push(rid);
        const body = { requestId: rid, reason: '수강료', amount: 20_000, members: [{ studentName: '홍길동', studentPhone: '01012345678' }], sendChannel: 'SMS' };
        const answers = await Promise.all(servers.slice(0, 2).map((s) => client.app(a, 'POST', '/app/v1/sales/bill', body, { url: s.url })));
        for (const r of answers) assert.equal(r.body.result_code, 0, `requestId ${rid} on two instances: ${r.text}`);
        const other = await client.app(a, 'POST', '/app/v1/sales/bill', { ...body, amount: 30_000 }, { url: servers[2]!.url });
        assert.equal(other.body.result_code, -22, 'same requestId, other content, on a third instance');
      }
      await sleep(STRESS ? 20_000 : 5_000);
      stop = true;
      await Promise.all(workers);
      await drain(client);

      for (const rid of rids) {
        const invs = await fx.db.selectFrom('invoices').select('id').where('request_id', '=', rid).execute();
        assert.equal(invs.length, 1, `requestId ${rid}: ${invs.length} invoices`);
        // (The workload may have resent it since: only the first send's reservation counts here.)
        const sends = await fx.db.selectFrom('sends').select('id').where('invoice_id', '=', invs[0]!.id).where('send_type', '=', 'INITIAL').execute();
        const reserves = await fx.db.selectFrom('ledger').select('delta').where('kind', '=', 'RESERVE').where('ref', 'in', sends.map((s) => s.id)).execute();
        assert.deepEqual(reserves.map((r) => Number(r.delta)), [-30], `requestId ${rid}: one deduction`);
      }

      // Every job ran once, or again only after a recorded failure (the documented retries): a
      // send whose number makes the provider fail once (7777, 5555), or a delivery the
      // receiver was too slow to answer within the outbound time limit on a loaded machine.
      const jobs = await fx.db.selectFrom('jobs').selectAll().execute();
      const sends = new Map((await fx.db.selectFrom('sends').select(['id', 'receiver_phone']).execute()).map((s) => [s.id, s.receiver_phone]));
      const outbound = await fx.db.selectFrom('outbound_attempts').select(['job_id', 'target', 'ref_id', 'status_code']).execute();
      const twice: string[] = [];
      let retried = 0;
      for (const j of jobs) {
        if (j.kind === 'invoicing.send') {
          const phone = sends.get(JSON.parse(j.payload).sendId) ?? '';
          if (j.attempts > (/(7777|5555)$/.test(phone) ? 2 : 1)) twice.push(`${j.kind} ${j.id}: ${j.attempts} runs (${phone})`);
          continue;
        }
        // The housekeeping jobs (the daily pruning of old attempts, the hourly purge of sign-in
        // throttles) post nothing: each ran at most once.
        if (HOUSEKEEPING.includes(j.kind)) {
          if (j.attempts > 1) twice.push(`${j.kind} ${j.id}: ${j.attempts} runs`);
          continue;
        }
        const mine = outbound.filter((o) => o.job_id === j.id);
        const ok = mine.filter((o) => o.status_code !== null && o.status_code >= 200 && o.status_code < 300).length;
        if (mine.length !== j.attempts || ok !== 1) twice.push(`${j.kind} ${j.id}: ${j.attempts} runs, ${mine.length} recorded, ${ok} succeeded`);
        if (j.attempts > 1) retried++;
      }
      assert.deepEqual(twice, [], 'jobs run more often than their recorded failures explain');
      // No delivery the receiver saw goes beyond the recorded attempts: nothing was delivered by two workers at once.
      const recordedByRef = new Map<string, number>();
      const paymentOf = new Map((await fx.db.selectFrom('payments').select(['id', 'trans_seqno']).execute()).map((p) => [p.trans_seqno, p.id]));
      for (const o of outbound) recordedByRef.set(`${o.target}:${o.ref_id}`, (recordedByRef.get(`${o.target}:${o.ref_id}`) ?? 0) + 1);
      const seen = new Map<string, number>();
      for (const d of receiver.deliveries) {
        const ref = d.path === WEBHOOK_PATH ? `WEBHOOK:${d.key}` : `CALLBACK:${paymentOf.get(d.key)}`;
        seen.set(ref, (seen.get(ref) ?? 0) + 1);
      }
      // More at the receiver than recorded is a delivery no worker owned. Fewer is allowed: an
      // attempt that failed on the way (a reused connection the receiver had just closed) is
      // recorded, and retried, without the receiver ever seeing it.
      const dup = [...seen].filter(([ref, n]) => n > (recordedByRef.get(ref) ?? 0)).map(([ref, n]) => `${ref}: ${n} at the receiver, ${recordedByRef.get(ref) ?? 0} recorded`);
      assert.deepEqual(dup, [], 'deliveries beyond the recorded attempts');
      const report = await checkInvariants(fx, receiver, ledger);
      console.log(`instances: ${JSON.stringify({ instances: servers.length, requests: client.requests, jobs: jobs.length, retriedDeliveries: retried, pairs, checked: report.checked, ...report.figures })}`);
      assert.deepEqual(report.violations, [], describeViolations(report));
      assert.deepEqual(ledger.serverErrors, []);
    } finally {
      await closeAll(servers, fx, receiver, database.drop);
    }
  });

  test('an instance SIGKILLed while it holds leased jobs: the others run them once the lease expires', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase('postgres');
    const fx = await createFixture(database.url, [100_000]);
    const receiver = await new FaultReceiver().start();
    let holding = true;
    receiver.policy = () => (holding ? 'hang' : 200);
    // A hung delivery fails after 1.5 s; the victim dies well before, the survivors' are answered first.
    // One store's callbacks are spread over the instances here: lift the per-store limit, which
    // would otherwise keep all but 4 of them waiting (test/jobs/fairness.test.ts tests it).
    const servers = await cluster('instances-kill', database.url, 3, { SUNAP_JOB_STORE_CONCURRENCY: '100' });
    try {
      const client = new Client(fx, () => servers.filter((s) => s.alive).map((s) => s.url));
      const perInstance = 4;
      const seqs: string[] = [];
      // Paid on instance i, a payment's callback job is usually claimed by instance i at once (it wakes its own worker).
      await Promise.all(servers.map(async (s, i) => {
        for (let k = 0; k < perInstance; k++) {
          const seq = `KILL${i}${k}${Date.now().toString(36)}`;
          seqs.push(seq);
          const r = await client.gw('requestPayment', {
            TRANS_SEQNO: seq, APPROVAL_AMOUNT: '5000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동', REQUEST_REASON: '수강료',
            CONFIRM_URL: `${receiver.url}${CONFIRM_PATH}`,
          }, { url: s.url });
          assert.equal(r.body.result_data.RESULT_CODE, '0000');
          assert.equal((await client.sandboxPay(seq, fx.storeCode, undefined, s.url)).body.approved, true);
        }
      }));
      await receiver.waitFor(() => receiver.byPath(CONFIRM_PATH).length >= seqs.length, 5_000, 'every callback in flight');
      const leased = await fx.db.selectFrom('jobs').select(['id', 'lease_owner']).where('status', '=', 'PENDING').where('lease_owner', 'is not', null).execute();
      const owners = new Set(leased.map((j) => j.lease_owner));
      assert.ok(owners.size >= 2, `jobs leased by ${owners.size} instance(s)`);
      // The victim is an instance that holds at least one of them (a lease owner starts with host/pid/).
      const victim = servers.find((s) => leased.some((j) => j.lease_owner?.split('/')[1] === String(s.proc!.pid)));
      assert.ok(victim, `no instance's pid among the lease owners ${[...owners].join(', ')}`);
      const killedAt = Date.now();
      await victim.kill();
      holding = false;
      receiver.release(200);
      await receiver.waitFor(() => seqs.every((seq) => receiver.deliveries.some((d) => d.key === seq && d.reaction === 200)), 20_000, 'every callback answered 200');
      // The worker marks a job DONE just after the receiver answered.
      const callbackJobs = () => fx.db.selectFrom('jobs').selectAll().where('kind', '=', 'gateway.callback').execute();
      for (const until = Date.now() + 10_000; (await callbackJobs()).some((j) => j.status !== 'DONE') && Date.now() < until;) await sleep(50);
      const jobs = await callbackJobs();
      const outbound = await fx.db.selectFrom('outbound_attempts').selectAll().execute();
      const takenOver = jobs.filter((j) => j.attempts > outbound.filter((o) => o.job_id === j.id).length);
      assert.ok(takenOver.length >= 1, 'the killed instance held at least one job');
      for (const j of jobs) {
        assert.equal(j.status, 'DONE', `job ${j.id} ${j.status}`);
        assert.ok(j.attempts <= 2, `job ${j.id}: ${j.attempts} runs`);
      }
      for (const j of takenOver) {
        assert.equal(j.attempts, 2, 'run once by the dead instance, once by a survivor');
        const p = await fx.db.selectFrom('payments').select('trans_seqno').where('id', '=', JSON.parse(j.payload).paymentId).executeTakeFirstOrThrow();
        const seen = receiver.deliveries.filter((d) => d.key === p.trans_seqno);
        assert.equal(seen.length, 2, `${p.trans_seqno}: first try (cut by the kill) and the survivor's`);
        const gap = seen[1]!.at - seen[0]!.at;
        assert.ok(gap >= LEASE_MS - 300, `taken over after ${gap} ms, before the ${LEASE_MS} ms lease ran out`);
      }
      // Survivors' own hung deliveries were released with 200: delivered once, each run a recorded
      // attempt. On a loaded machine a hung one may run out of its time limit before the release:
      // then it was retried on its schedule (a failed attempt on record, then the 200), never run twice at once.
      const survivorsJobs = jobs.filter((j) => !takenOver.includes(j));
      for (const j of survivorsJobs) {
        const tries = outbound.filter((o) => o.job_id === j.id).sort((x, y) => x.attempt_no - y.attempt_no);
        assert.equal(j.attempts, tries.length, `job ${j.id}: every run is a recorded attempt`);
        assert.ok(tries.slice(0, -1).every((o) => o.error !== null), `job ${j.id}: only the last attempt succeeded`);
        assert.equal(tries.at(-1)!.status_code, 200);
      }
      const drained = await drain(client);
      const report = await checkInvariants(fx, receiver, null);
      console.log(`instance kill: ${JSON.stringify({ jobs: jobs.length, takenOver: takenOver.length, owners: owners.size, secondsToDone: Math.round((Date.now() - killedAt) / 100) / 10, drained, checked: report.checked })}`);
      assert.deepEqual(report.violations, [], describeViolations(report));
    } finally {
      await closeAll(servers, fx, receiver, database.drop);
    }
  });

  test('a delivery that outlasts the lease stays with its worker: the other instance does not run it again', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase('postgres');
    const fx = await createFixture(database.url, [100_000]);
    const receiver = await new FaultReceiver().start();
    // The merchant takes twice the lease to answer (within the outbound time limit).
    receiver.policy = () => ({ after: LEASE_MS * 2, status: 200 });
    const servers = await cluster('instances-slow', database.url, 2, { SUNAP_OUTBOUND_TIMEOUT_MS: String(LEASE_MS * 4) });
    try {
      const client = new Client(fx, () => servers.map((s) => s.url));
      const seqs: string[] = [];
      for (const [i, s] of servers.entries()) {
        for (let k = 0; k < 3; k++) {
          const seq = `SLOW${i}${k}${Date.now().toString(36)}`;
          seqs.push(seq);
          await client.gw('requestPayment', {
            TRANS_SEQNO: seq, APPROVAL_AMOUNT: '5000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동', REQUEST_REASON: '수강료',
            CONFIRM_URL: `${receiver.url}${CONFIRM_PATH}`,
          }, { url: s.url });
          assert.equal((await client.sandboxPay(seq, fx.storeCode, undefined, s.url)).body.approved, true);
        }
      }
      await receiver.waitFor(() => seqs.every((seq) => receiver.deliveries.some((d) => d.key === seq && d.reaction === 200)), 30_000, 'every slow callback answered');
      // Long enough for a second claim to show, had a lease run out.
      await sleep(LEASE_MS * 2);
      const jobs = await fx.db.selectFrom('jobs').selectAll().where('kind', '=', 'gateway.callback').execute();
      for (const j of jobs) {
        assert.equal(j.status, 'DONE');
        assert.equal(j.attempts, 1, `job ${j.id} was claimed ${j.attempts} times while its first run was still delivering`);
      }
      for (const seq of seqs) assert.equal(receiver.deliveries.filter((d) => d.key === seq).length, 1, `${seq} delivered more than once`);
    } finally {
      await closeAll(servers, fx, receiver, database.drop);
    }
  });
});

