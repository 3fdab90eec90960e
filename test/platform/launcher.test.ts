import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { childEnv } from '../helpers/process.js';

/**
 * bin/sunap.js chooses dist/ or src/ (through tsx) relative to its own location, so each case is
 * a copy of the bin beside a tiny src/ and dist/ of its own, with mtimes set explicitly: the real
 * tree, which other suites run from, is never touched.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

const T0 = Date.now() / 1000 - 3600;

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** Every file and directory under dir to the one mtime (seconds). */
function setMtimes(dir: string, t: number): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) setMtimes(p, t);
    utimesSync(p, t, t);
  }
  utimesSync(dir, t, t);
}

/** A project root: bin/sunap.js, node_modules (for tsx), src/ whose entries need tsx (type annotations), dist/ optionally. */
function project(opts: { dist: 'fresh' | 'stale' | 'none' | 'unstamped' }): string {
  const root = mkdtempSync(join(tmpdir(), 'sunap-launcher-'));
  made.push(root);
  mkdirSync(join(root, 'bin'));
  copyFileSync(join(ROOT, 'bin', 'sunap.js'), join(root, 'bin', 'sunap.js'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  write(join(root, 'package.json'), '{ "type": "module" }\n');
  write(join(root, 'src', 'cli.ts'), "const from: string = 'src';\nconsole.log(`cli from ${from}: ${process.argv.slice(2).join(' ')}`);\n");
  write(join(root, 'src', 'lib', 'deep.ts'), 'export const deep: number = 1;\n');
  setMtimes(join(root, 'src'), T0);
  if (opts.dist !== 'none') {
    write(join(root, 'dist', 'cli.js'), "console.log(`cli from dist: ${process.argv.slice(2).join(' ')}`);\n");
    if (opts.dist !== 'unstamped') write(join(root, 'dist', '.built'), '');
    setMtimes(join(root, 'dist'), T0 + 60);
  }
  if (opts.dist === 'stale') {
    // Only a nested source changes after the build.
    utimesSync(join(root, 'src', 'lib', 'deep.ts'), T0 + 120, T0 + 120);
  }
  return root;
}

// The runner sets SUNAP_USE_TSX=1 for every child; these tests choose it themselves.
async function sunap(root: string, args: string[], env: Record<string, string> = {}) {
  try {
    const r = await run(process.execPath, [join(root, 'bin', 'sunap.js'), ...args], { env: childEnv({ SUNAP_USE_TSX: '', ...env }), cwd: root });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('bin/sunap.js: compiled dist/ when it is fresh, else src/ through tsx', () => {
  test('dist/ stamped after the newest source: dist/ runs, nothing on stderr', async () => {
    const root = project({ dist: 'fresh' });
    const r = await sunap(root, ['store', 'create', '--json']);
    assert.deepEqual(r, { code: 0, stdout: 'cli from dist: store create --json\n', stderr: '' });
    assert.deepEqual(await sunap(root, ['serve']), { code: 0, stdout: 'cli from dist: serve\n', stderr: '' });
  });

  test('a source newer than the stamp: src/ through tsx, and one line saying so', async () => {
    const root = project({ dist: 'stale' });
    const r = await sunap(root, ['migrate']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'cli from src: migrate\n');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^sunap: dist\/ is older than src\/.*npm run build/);
    assert.equal((await sunap(root, ['serve'])).stdout, 'cli from src: serve\n');
  });

  test('a source removed after the build (only its directory changes) also makes dist/ stale', async () => {
    const root = project({ dist: 'fresh' });
    rmSync(join(root, 'src', 'lib', 'deep.ts'));
    const r = await sunap(root, ['migrate']);
    assert.equal(r.stdout, 'cli from src: migrate\n');
    assert.match(r.stderr, /dist\/ is older than src\//);
  });

  test('no dist/: src/ through tsx, silently', async () => {
    const root = project({ dist: 'none' });
    assert.deepEqual(await sunap(root, ['migrate']), { code: 0, stdout: 'cli from src: migrate\n', stderr: '' });
  });

  test('dist/ without its stamp (a failed build): src/ through tsx, and one line saying so', async () => {
    const root = project({ dist: 'unstamped' });
    const r = await sunap(root, ['migrate']);
    assert.equal(r.stdout, 'cli from src: migrate\n');
    assert.match(r.stderr, /^sunap: dist\/ is incomplete.*npm run build/);
  });

  test('SUNAP_USE_TSX=1 runs src/ even when dist/ is fresh', async () => {
    const root = project({ dist: 'fresh' });
    assert.deepEqual(await sunap(root, ['migrate'], { SUNAP_USE_TSX: '1' }), { code: 0, stdout: 'cli from src: migrate\n', stderr: '' });
    assert.equal((await sunap(root, ['migrate'], { SUNAP_USE_TSX: '0' })).stdout, 'cli from dist: migrate\n');
  });

  test('serve, --help and --version reach the CLI like every command (test/cli.test.ts covers what it does)', async () => {
    const root = project({ dist: 'fresh' });
    for (const args of [['serve', '--help'], ['serve', '-h'], ['--help'], ['--version'], ['-V']]) {
      assert.deepEqual(await sunap(root, args), { code: 0, stdout: `cli from dist: ${args.join(' ')}\n`, stderr: '' });
    }
  });
});

describe('npm run build (scripts/build.mjs)', () => {
  function buildProject(): string {
    const root = mkdtempSync(join(tmpdir(), 'sunap-build-'));
    made.push(root);
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', 'bin/sunap.js']) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      copyFileSync(join(ROOT, f), join(root, f));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
    write(join(root, 'package.json'), '{ "type": "module" }\n');
    write(join(root, 'src', 'cli.ts'), "import { from } from './lib/from.js';\nconsole.log(`cli from ${from()}: ${import.meta.url.split('/').slice(-2).join('/')}`);\n");
    write(join(root, 'src', 'lib', 'from.ts'), "export function from(): string {\n  return 'compiled or not';\n}\n");
    return root;
  }
  const build = (root: string) => run(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, env: childEnv({}) });

  test('compiles src/ only, cleans dist/ first, stamps it; the bin then runs it', async () => {
    const root = buildProject();
    write(join(root, 'dist', 'removed.js'), 'left over from an earlier build\n');
    setMtimes(join(root, 'src'), T0);
    await build(root);
    assert.ok(existsSync(join(root, 'dist', '.built')));
    assert.ok(existsSync(join(root, 'dist', 'lib', 'from.js')));
    assert.ok(existsSync(join(root, 'dist', 'cli.js.map')));
    assert.ok(!existsSync(join(root, 'dist', 'removed.js')), 'dist/ is emptied before emitting');
    assert.ok(!existsSync(join(root, 'dist', 'lib', 'from.d.ts')));
    assert.deepEqual(await sunap(root, []), { code: 0, stdout: 'cli from compiled or not: dist/cli.js\n', stderr: '' });
  });

  test('a compile error: exit non-zero, no stamp, and the bin falls back to src/ with a warning', async () => {
    const root = buildProject();
    write(join(root, 'src', 'lib', 'broken.ts'), "export const n: number = 'not a number';\n");
    await assert.rejects(build(root), (e: { code: number; stderr: string }) => e.code !== 0 && /tsc failed/.test(e.stderr));
    assert.ok(!existsSync(join(root, 'dist', '.built')));
    const r = await sunap(root, []);
    assert.equal(r.stdout, 'cli from compiled or not: src/cli.ts\n');
    assert.match(r.stderr, /dist\/ is incomplete/);
  });
});
