#!/usr/bin/env node
// The package bin, and `npm start` (`sunap serve`): starts src/cli.ts. Runs the compiled dist/
// (`npm run build`, also run by `npm install`/`npm ci`) when its stamp is newer than every file under
// src/; otherwise the TypeScript sources through tsx, whose loader thread costs ~64 MB of RSS and
// some CPU per request.
// Stale compiled code is never run. SUNAP_USE_TSX=1 forces tsx (while developing).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// better-sqlite3 13 (the embedded database) is a Node-API module for Node 22 and newer; on Node 20
// it crashes the process with a segmentation fault, so say it plainly before anything loads it.
const nodeMajor = Number(process.versions.node.split('.')[0]);
if (nodeMajor < 22) {
  process.stderr.write(`sunap: Node 22 or newer is needed; this is Node ${process.versions.node}, past its end of life. Install an LTS line (22, 24 or 26): README.md, "Node versions".\n`);
  process.exit(1);
}

const root = fileURLToPath(new URL('..', import.meta.url));

/** The newest mtime under dir, directories included (a removed or renamed source changes its directory's). */
function newestMtime(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function mtimeOrNull(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** 'dist', or 'src' and why (null: say nothing). */
function choose() {
  const force = process.env.SUNAP_USE_TSX;
  if (force && force !== '0') return { dir: 'src' };
  const stamp = mtimeOrNull(join(root, 'dist', '.built'));
  if (stamp === null) {
    if (mtimeOrNull(join(root, 'dist')) === null) return { dir: 'src' };
    return { dir: 'src', why: 'dist/ is incomplete (its build failed or was interrupted)' };
  }
  let sources;
  try {
    sources = newestMtime(join(root, 'src'));
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    return { dir: 'dist' }; // an installation of the compiled code alone
  }
  // Strictly newer: a file saved within the same clock tick as the stamp may not have been compiled.
  if (stamp > sources) return { dir: 'dist' };
  return { dir: 'src', why: 'dist/ is older than src/' };
}

const { dir, why } = choose();
if (why) process.stderr.write(`sunap: ${why}; running src/ through tsx (slower, more memory). \`npm run build\` refreshes dist/.\n`);
if (dir === 'src') {
  const { register } = await import('tsx/esm/api');
  register();
}
const entry = (name) => pathToFileURL(join(root, dir, `${name}.${dir === 'dist' ? 'js' : 'ts'}`)).href;

// Every command, serve included, goes through src/cli.ts: one parser, so `sunap serve --help` prints
// help and `sunap serve --bogus` is a usage error instead of a start. cli.ts runs main() itself
// when argv[1] is this bin.
await import(entry('cli'));
