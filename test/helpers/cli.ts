import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { childEnv } from './process.js';

export const sunapBin = resolve(import.meta.dirname, '..', '..', 'bin', 'sunap.js');

export interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * `node bin/sunap.js ...args`, whatever its exit. Killed after timeoutMs (a command that should
 * have ended at once, such as `serve --help`, shows as signal SIGKILL instead of hanging the suite).
 */
export function runSunap(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Outcome> {
  return new Promise((done) => {
    execFile(process.execPath, [sunapBin, ...args], { env: childEnv(env), timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; signal?: NodeJS.Signals | null }) | null;
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, signal: e?.signal ?? null, stdout, stderr });
    });
  });
}

/**
 * Runs the real `sunap` bin against one database, as an operator would. Without secretKey the
 * sandbox generates its own (beside an SQLite database) when a command loads the configuration.
 */
export function cli(databaseUrl: () => string, secretKey?: string, extraEnv: Record<string, string> = {}) {
  const env = () => ({ DATABASE_URL: databaseUrl(), ...(secretKey ? { SUNAP_SECRET_KEY: secretKey } : {}), ...extraEnv });
  const outcome = (...args: string[]) => runSunap(args, env());
  async function sunap(...args: string[]) {
    const r = await outcome(...args);
    assert.equal(r.code, 0, `sunap ${args.join(' ')} exited ${r.code ?? r.signal}: ${r.stderr}`);
    return { stdout: r.stdout, stderr: r.stderr };
  }
  /** `--json`: exactly one line of JSON on stdout. */
  async function json(...args: string[]) {
    const r = await sunap(...args, '--json');
    assert.equal(r.stdout.trim().split('\n').length, 1, 'exactly one line of JSON');
    return JSON.parse(r.stdout);
  }
  async function fails(...args: string[]): Promise<Outcome & { code: number }> {
    const r = await outcome(...args);
    assert.ok(r.code !== null && r.code !== 0, `expected sunap ${args.join(' ')} to fail, got ${r.code ?? r.signal}`);
    return r as Outcome & { code: number };
  }
  return { sunap, json, fails, outcome };
}
