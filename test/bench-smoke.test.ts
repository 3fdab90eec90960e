import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

/**
 * CI guard for `npm run bench`: the whole benchmark in smoke mode (1 s runs, small seeds: a
 * 50-recipient batch, 100 listed invoices, 100 webhooks). It fails only when a scenario errs —
 * a non-2xx or failure-coded answer, a crashed server, a batch or webhook run that never
 * completes — never on timings. PostgreSQL is skipped when test/run.mjs found it down.
 */
test('bench smoke: every scenario runs without errors', { timeout: 300_000 }, async () => {
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
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', 'run.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));

    let results: { rows: { target: string; label: string; status: string; error?: string }[]; errors: string[] };
    try {
      results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    } catch {
      assert.fail(`the benchmark wrote no results (exit ${code}):\n${output.slice(-4000)}`);
    }
    const failed = results.rows.filter((r) => r.status === 'error').map((r) => `${r.target} / ${r.label}: ${r.error}`);
    assert.deepEqual([...results.errors, ...failed], [], output.slice(-4000));
    assert.equal(code, 0, output.slice(-4000));
    const targets = new Set(results.rows.map((r) => r.target));
    assert.ok(targets.has('node:http') && targets.has('sqlite'), `rows for the ceiling and SQLite: ${[...targets].join(', ')}`);
    if (!process.env.SUNAP_TEST_SKIP_POSTGRES) assert.ok(targets.has('postgres'), 'rows for PostgreSQL');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
