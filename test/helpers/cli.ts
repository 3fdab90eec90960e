import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const sunapBin = resolve(import.meta.dirname, '..', '..', 'bin', 'sunap.js');

/** Runs the real `sunap` bin against one database, as an operator would. */
export function cli(databaseUrl: () => string, secretKey: string) {
  const env = () => ({ ...process.env, DATABASE_URL: databaseUrl(), SUNAP_SECRET_KEY: secretKey });
  async function sunap(...args: string[]) {
    const r = await run(process.execPath, [sunapBin, ...args], { env: env() });
    return { stdout: r.stdout, stderr: r.stderr };
  }
  /** `--json`: exactly one line of JSON on stdout. */
  async function json(...args: string[]) {
    const r = await sunap(...args, '--json');
    assert.equal(r.stdout.trim().split('\n').length, 1, 'exactly one line of JSON');
    return JSON.parse(r.stdout);
  }
  async function fails(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      await sunap(...args);
    } catch (e) {
      return e as { code: number; stdout: string; stderr: string };
    }
    assert.fail(`expected sunap ${args.join(' ')} to fail`);
  }
  return { sunap, json, fails };
}
