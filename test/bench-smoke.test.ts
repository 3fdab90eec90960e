import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

/**
 * CI guard for `npm run bench`: the whole benchmark in smoke mode (1 s runs, small seeds: a
 * 50-recipient batch, 100 listed invoices, 100 webhooks). It fails only when a scenario errs —
 * a non-2xx or failure-coded answer, a crashed server, a batch or webhook run that never
 * completes — never on timings. PostgreSQL is skipped when test/run.mjs found it down. The
 * same-stack reference (bench/reference-server.ts) must run on every engine and answer
 * searchPayment with the keys and values of Sunap's own answer.
 */
/** Every key of a JSON answer as a dotted path, sorted ("result_data.TRANS_SEQNO"). */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [prefix + k, ...keyPaths(v, `${prefix}${k}.`)]).sort();
}

// A safety net, not a speed check: every scenario of both engines, the ceiling and the reference
// each start a server; beside the rest of the suite on two busy cores that took over 300 s once.
test('bench smoke: every scenario runs without errors', { timeout: 900_000 }, async (t) => {
  const root = resolve(import.meta.dirname, '..');
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const out = mkdtempSync(join(root, '.tmp', 'bench-smoke-'));
  try {
    const env: Record<string, string | undefined> = {
      ...process.env, BENCH_SMOKE: '1', BENCH_DURATION: '1', BENCH_WARMUP: '0.5', BENCH_CONNECTIONS: '10', BENCH_OUT_DIR: out,
    };
    delete env.BENCH_SCENARIOS;
    delete env.BENCH_PROFILE;
    delete env.BENCH_PROFILE_DIR;
    if (process.env.SUNAP_TEST_SKIP_POSTGRES) env.BENCH_SKIP_POSTGRES = '1';
    // On a time-out the bench gets SIGTERM, which stops its servers and drops its databases.
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', 'run.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], signal: t.signal });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.on('error', () => {}); // the abort on a time-out; 'exit' follows
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));

    let results: {
      rows: { target: string; key: string; label: string; status: string; error?: string; requests?: number; statusCodes?: Record<string, number>; vsReference?: number }[];
      errors: string[];
      answers: Record<string, { searchPayment?: unknown; reference?: unknown; requestPayment?: unknown; requestReference?: unknown }>;
    };
    try {
      results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    } catch {
      assert.fail(`the benchmark wrote no results (exit ${code}):\n${output.slice(-4000)}`);
    }
    const failed = results.rows.filter((r) => r.status === 'error').map((r) => `${r.target} / ${r.label}: ${r.error}`);
    assert.deepEqual([...results.errors, ...failed], [], output.slice(-4000));
    assert.equal(code, 0, output.slice(-4000));
    const targets = new Set(results.rows.map((r) => r.target));
    assert.ok(targets.has('node:http') && targets.has('fastify') && targets.has('sqlite'), `rows for the ceiling, the floor and SQLite: ${[...targets].join(', ')}`);
    const floor = results.rows.find((r) => r.key === 'floor')!;
    assert.ok(floor.status === 'ok' && Object.keys(floor.statusCodes ?? {}).join() === '200', `the floor answered 200 only: ${JSON.stringify(floor.statusCodes)}`);
    if (!process.env.SUNAP_TEST_SKIP_POSTGRES) assert.ok(targets.has('postgres'), 'rows for PostgreSQL');

    // The same-stack reference: on every engine, answered only 200s, and with Sunap's answer's keys.
    for (const engine of [...targets].filter((t) => t !== 'node:http' && t !== 'fastify')) {
      const ref = results.rows.find((r) => r.target === engine && r.key === 'reference');
      assert.ok(ref, `a reference row for ${engine}`);
      assert.equal(ref.status, 'ok', `${engine} reference: ${ref.error}`);
      assert.ok((ref.requests ?? 0) > 0, `${engine} reference: requests counted`);
      assert.deepEqual(Object.keys(ref.statusCodes ?? {}), ['200'], `${engine} reference: status codes ${JSON.stringify(ref.statusCodes)}`);
      const search = results.rows.find((r) => r.target === engine && r.key === 'searchPayment');
      assert.ok(search?.vsReference !== undefined && search.vsReference > 0, `${engine} searchPayment has a ratio to the reference`);
      const { searchPayment: sunap, reference } = results.answers[engine] ?? {};
      const sunapKeys = keyPaths(sunap);
      assert.ok(sunapKeys.includes('result_data.TRANS_SEQNO') && sunapKeys.includes('result_data.PAY_PATH'), `${engine}: Sunap's searchPayment answer was kept: ${JSON.stringify(sunap)}`);
      assert.deepEqual(keyPaths(reference), sunapKeys, `${engine}: the reference answers with the keys of Sunap's searchPayment`);
      assert.deepEqual(reference, sunap, `${engine}: and with the same values, for the same payment`);

      // The requestPayment reference: it ran (its row, its keys and its page token were checked
      // before measuring), answered only 200s, and Sunap's requestPayment has a ratio to it.
      const reqRef = results.rows.find((r) => r.target === engine && r.key === 'requestReference');
      assert.ok(reqRef, `a requestPayment reference row for ${engine}`);
      assert.equal(reqRef.status, 'ok', `${engine} requestPayment reference: ${reqRef.error}`);
      assert.deepEqual(Object.keys(reqRef.statusCodes ?? {}), ['200'], `${engine} requestPayment reference: status codes ${JSON.stringify(reqRef.statusCodes)}`);
      const request = results.rows.find((r) => r.target === engine && r.key === 'requestPayment');
      assert.ok(request?.vsReference !== undefined && request.vsReference > 0, `${engine} requestPayment has a ratio to its reference`);
      const answers = results.answers[engine]!;
      assert.ok(keyPaths(answers.requestPayment).includes('result_data.REDIRECT_URL'), `${engine}: Sunap's requestPayment answer was kept`);
      assert.deepEqual(keyPaths(answers.requestReference), keyPaths(answers.requestPayment), `${engine}: the requestPayment reference answers with Sunap's keys`);
    }
    // PostgreSQL alone: the same INSERT straight against PostgreSQL, only on PostgreSQL.
    const alone = results.rows.filter((r) => r.key === 'pgInsert');
    assert.deepEqual(alone.map((r) => r.target), process.env.SUNAP_TEST_SKIP_POSTGRES ? [] : ['postgres'], 'one PostgreSQL-alone row, on PostgreSQL');
    for (const r of alone) assert.ok(r.status === 'ok' && (r.requests ?? 0) > 0, `PostgreSQL alone: ${r.error}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
