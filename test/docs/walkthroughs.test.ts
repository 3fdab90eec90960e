import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { createTestDatabase, engines } from '../helpers/db.js';
import { childEnv, freePort } from '../helpers/process.js';
import { eventually } from '../helpers/wait.js';

/**
 * The walkthroughs of README.md, docs/invoicing.md and docs/console.md, run as written, one
 * after another against one server started fresh, as a newcomer following them in order would
 * (docs/testing.md, "Walkthroughs that run"). The markers:
 * - a fenced block whose info string is `sh walkthrough` runs; every other block is prose;
 * - `<!-- walkthrough-file: NAME -->` right before a block saves that block as NAME (the
 *   README's receiver.mjs) in the directory the walkthrough runs in;
 * - `<!-- walkthrough-expect: TEXT -->` after a runnable block: TEXT must be in what that block
 *   printed (whitespace aside, so jq's pretty output matches a one-line example).
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const DOCS = ['README.md', 'docs/invoicing.md', 'docs/console.md'] as const;
/** One document's blocks may take this long in all before the test gives up: generous, for a dozen CLI runs on a loaded machine. */
const DOC_TIMEOUT_MS = 90_000;

type Step =
  | { kind: 'run'; code: string; line: number; expects: string[] }
  | { kind: 'file'; name: string; content: string; line: number };

export function walkthroughSteps(markdown: string): Step[] {
  const lines = markdown.split('\n');
  const steps: Step[] = [];
  let saveAs: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const file = /^<!-- walkthrough-file: (\S+) -->$/.exec(l);
    if (file) {
      saveAs = file[1]!;
      continue;
    }
    const expect = /^<!-- walkthrough-expect: (.+) -->$/.exec(l);
    if (expect) {
      const last = steps.findLast((s) => s.kind === 'run');
      assert.ok(last && last.kind === 'run', `line ${i + 1}: walkthrough-expect before any runnable block`);
      last.expects.push(expect[1]!);
      continue;
    }
    const fence = /^```(.*)$/.exec(l);
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    const info = fence[1]!.trim();
    if (saveAs) {
      steps.push({ kind: 'file', name: saveAs, content: body.join('\n') + '\n', line: start + 1 });
      saveAs = null;
    } else if (info === 'sh walkthrough') {
      steps.push({ kind: 'run', code: body.join('\n'), line: start + 1, expects: [] });
    }
  }
  return steps;
}

const squash = (s: string) => s.replace(/\s+/g, '');

/** Every address a runnable block names is this machine: a walkthrough never reaches the internet. */
function localOnly(doc: string, steps: Step[]): void {
  for (const s of steps) {
    if (s.kind !== 'run') continue;
    for (const m of s.code.matchAll(/\bhttps?:\/\/([^/\s'":]+)/g)) {
      assert.ok(['localhost', '127.0.0.1'].includes(m[1]!), `${doc}:${s.line} names ${m[0]}: a walkthrough stays on this machine`);
    }
  }
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The document's steps as one bash script in `dir`, each block's output preceded by a marker line. */
function runDoc(steps: Step[], dir: string, env: Record<string, string>): Promise<Run> {
  const script = ['set -euo pipefail'];
  steps.forEach((s, n) => {
    if (s.kind === 'file') writeFileSync(join(dir, s.name), s.content);
    else script.push(`printf '\\n@@step ${n}@@\\n'`, s.code);
  });
  return new Promise((done) => {
    const child = spawn('bash', ['-c', script.join('\n')], { cwd: dir, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => killGroup(child), DOC_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      // What the walkthrough left running in the background (the README's receiver) ends with it.
      killGroup(child);
      done({ code, stdout, stderr });
    });
  });
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // already gone
  }
}

/** What each runnable step printed, by step index. */
function outputs(stdout: string): Map<number, string> {
  const out = new Map<number, string>();
  const parts = stdout.split(/\n@@step (\d+)@@\n/);
  for (let k = 1; k < parts.length; k += 2) out.set(Number(parts[k]), parts[k + 1] ?? '');
  return out;
}

test('walkthroughs: the markers are found, and every runnable block stays on this machine', () => {
  for (const doc of DOCS) {
    const steps = walkthroughSteps(readFileSync(join(ROOT, doc), 'utf8'));
    assert.ok(steps.some((s) => s.kind === 'run'), `${doc} has runnable blocks`);
    assert.ok(steps.some((s) => s.kind === 'run' && s.expects.length > 0), `${doc} checks some output`);
    localOnly(doc, steps);
  }
  // The parser itself: prose blocks are skipped, expects attach to the block before them.
  const parsed = walkthroughSteps('```sh\necho prose\n```\n```sh walkthrough\necho a\n```\n<!-- walkthrough-expect: a -->\n<!-- walkthrough-file: f.txt -->\n```js\nx\n```\n');
  assert.deepEqual(parsed, [{ kind: 'run', code: 'echo a', line: 4, expects: ['a'] }, { kind: 'file', name: 'f.txt', content: 'x\n', line: 9 }]);
});

test('walkthroughs: a failing command or a missing expected line fails the check', async () => {
  const dir = resolve(ROOT, '.tmp', `walkthrough-self-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const failing = await runDoc(walkthroughSteps('```sh walkthrough\necho one\nfalse\necho never\n```\n'), dir, {});
    assert.notEqual(failing.code, 0);
    assert.doesNotMatch(failing.stdout, /never/);
    const missing = walkthroughSteps('```sh walkthrough\necho "{ \\"a\\": 1 }"\n```\n<!-- walkthrough-expect: {"a":1} -->\n<!-- walkthrough-expect: {"a":2} -->\n');
    const r = await runDoc(missing, dir, {});
    assert.equal(r.code, 0);
    assert.deepEqual(unmet(missing, r), ['{"a":2}']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function unmet(steps: Step[], r: Run): string[] {
  const out = outputs(r.stdout);
  return steps.flatMap((s, n) => (s.kind === 'run' ? s.expects.filter((e) => !squash(out.get(n) ?? '').includes(squash(e))) : []));
}

function lastStep(steps: Step[], r: Run): Step | undefined {
  const seen = [...r.stdout.matchAll(/@@step (\d+)@@/g)].map((m) => Number(m[1]));
  return seen.length ? steps[seen[seen.length - 1]!] : undefined;
}

test('walkthroughs: the tools the documents use are installed (bash, curl, jq, sha256sum)', () => {
  for (const tool of ['bash', 'curl', 'jq', 'sha256sum']) {
    const r = spawnSync(tool, ['--version'], { stdio: 'ignore' });
    assert.equal(r.status, 0, `${tool} is needed by the walkthroughs (README.md says so): apt-get install -y ${tool === 'sha256sum' ? 'coreutils' : tool}`);
  }
});

for (const engine of engines) {
  test(`walkthroughs [${engine}]: README, then docs/invoicing.md, then docs/console.md, from a fresh start`, async () => {
    const db = await createTestDatabase(engine);
    const dir = resolve(ROOT, '.tmp', `walkthroughs-${process.pid}-${engine}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    // A fresh directory where ./bin/sunap.js is the repository's, as in a checkout.
    symlinkSync(join(ROOT, 'bin'), join(dir, 'bin'));
    const port = await freePort();
    const receiverPort = await freePort();
    // A fresh SQLite data dir (its secret.key is generated beside it, as README says); on
    // PostgreSQL the key is given, since ./data would be the repository's own.
    const databaseUrl = engine === 'sqlite' ? `sqlite:${join(dir, 'data', 'sunap.db')}` : db.url;
    // SUNAP_USE_TSX=0: the bin chooses as it does for a reader, dist/ when it is newer than every
    // file of src/ (so it is the sources being tested, compiled) and src/ through tsx otherwise;
    // each of the dozen CLI runs then starts in about half the time.
    const env: Record<string, string> = {
      PORT: String(port), RECEIVER_PORT: String(receiverPort), DATABASE_URL: databaseUrl, SUNAP_JOB_POLL_MS: '100', SUNAP_USE_TSX: '0',
      ...(engine === 'postgres' ? { SUNAP_SECRET_KEY: '6b'.repeat(16) + '2d'.repeat(16) } : {}),
    };
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const start = /```sh\n([^\n]*npm start[^\n]*)\n/.exec(readme);
    assert.ok(start, 'the README opens with its start command');
    assert.match(start[1]!, /npm install && npm start/);
    // The README's own start command, without the install this checkout already had.
    const server = spawn('npm', ['start'], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let log = '';
    server.stdout!.on('data', (c) => (log += c));
    server.stderr!.on('data', (c) => (log += c));
    try {
      await eventually(() => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false), `npm start to answer /readyz (${log})`, 30_000, 100);
      for (const doc of DOCS) {
        const steps = walkthroughSteps(readFileSync(join(ROOT, doc), 'utf8'));
        const r = await runDoc(steps, dir, env);
        const at = lastStep(steps, r);
        assert.equal(r.code, 0, `${doc}: the block at line ${at?.line} failed (exit ${r.code}):\n${r.stderr}\n--- output ---\n${r.stdout.slice(-3000)}`);
        assert.deepEqual(unmet(steps, r), [], `${doc}: expected output missing:\n${r.stdout.slice(-6000)}`);
      }
    } finally {
      killGroup(server);
      await new Promise((r) => setTimeout(r, 300));
      rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  });
}
