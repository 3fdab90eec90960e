import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { seqNo, startApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/db.js';

/**
 * SUNAP_PG_POOL_SIZE bounds the connections one instance opens (README, "Configuration"):
 * several instances share the server's max_connections, so the operator sizes it. Measured from
 * the server's side (pg_stat_activity), under more concurrent calls than connections.
 */
const onPostgres = engines.includes('postgres');

/** Runs 40 searchPayment calls at once and samples the app's connections meanwhile: the answers and the most seen. */
async function peakConnectionsUnderLoad(a: TestApp): Promise<{ peak: number; answers: { body: any }[] }> {
  const admin = new pg.Client({ connectionString: a.databaseUrl });
  admin.on('error', () => {}); // the app's close drops the database, ending this connection too
  await admin.connect();
  const db = new URL(a.databaseUrl).pathname.slice(1);
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const r = await admin.query<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [db]);
      peak = Math.max(peak, Number(r.rows[0]!.n));
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const answers = await Promise.all(Array.from({ length: 40 }, () => a.gw('searchPayment', { TRANS_SEQNO: seqNo() })));
  sampling = false;
  await sampler;
  await admin.end();
  return { peak, answers };
}

for (const size of onPostgres ? [1, 3] : []) {
  test(`SUNAP_PG_POOL_SIZE=${size}: the instance opens at most ${size} connection(s), and every call is still answered`, async (t) => {
    const a = await startApp('postgres', { SUNAP_PG_POOL_SIZE: String(size) });
    t.after(() => a.close());
    const { peak, answers } = await peakConnectionsUnderLoad(a);
    for (const r of answers) assert.equal(r.body.result_data.RESULT_CODE, '4003', JSON.stringify(r.body));
    assert.ok(peak >= 1, 'the sampler saw the instance\'s connections');
    assert.ok(peak <= size, `at most ${size}, saw ${peak}`);
  });
}

test('without SUNAP_PG_POOL_SIZE an instance may open more than one connection (the default is 10)', { skip: !onPostgres }, async (t) => {
  const a = await startApp('postgres');
  t.after(() => a.close());
  const { peak } = await peakConnectionsUnderLoad(a);
  assert.ok(peak > 1 && peak <= 10, `between 2 and 10, saw ${peak}`);
});
