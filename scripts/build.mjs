#!/usr/bin/env node
// `npm run build`: src/ compiled to dist/ by tsc (tsconfig.build.json), then the stamp dist/.built
// that bin/sunap.js compares with src/. `prepare` runs it with --if-available: an install without
// dev dependencies has no TypeScript, and then skips the build (bin/sunap.js runs src/ through tsx).
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

let tsc;
try {
  tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
} catch {
  if (process.argv.includes('--if-available')) {
    console.log('sunap: TypeScript is not installed (no dev dependencies): dist/ not built; bin/sunap.js will run src/ through tsx');
    process.exit(0);
  }
  console.error('sunap: TypeScript is not installed: npm install (with dev dependencies) first');
  process.exit(1);
}

// Start clean, so files whose sources were removed do not linger.
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
// The stamp is created before compiling and renamed into place only on success: its mtime is the
// moment the sources were read, so a source saved while tsc runs still counts as newer than dist/.
const pending = join(dist, '.built.pending');
writeFileSync(pending, 'Written by `npm run build` (scripts/build.mjs) when tsc compiled src/ without errors.\nbin/sunap.js runs dist/ only while this file is newer than everything under src/.\n');
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  rmSync(pending, { force: true });
  console.error(`sunap: tsc failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}): dist/ is incomplete and will not be used`);
  process.exit(1);
}
renameSync(pending, join(dist, '.built'));
