import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, freePort } from '../test/helpers/process.js';

export { childEnv, freePort };

/** Child processes of a run (servers under test, the ceiling, the CLI) and their memory. */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** VmRSS of a live process in bytes, or null once it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

const TICKS_PER_SECOND = 100;

/** CPU time (user + system) a live process has used so far, in seconds; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesized command name; utime and stime are the 14th and 15th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every 50 ms between start() and stop(); keeps the peak. */
export class RssSampler {
  private timer: NodeJS.Timeout | null = null;
  peak = 0;
  constructor(private readonly pid: number) {}
  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), 50);
    return this;
  }
  private sample(): void {
    const b = rssBytes(this.pid);
    if (b !== null && b > this.peak) this.peak = b;
  }
  stop(): number {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    return this.peak;
  }
}

export interface Child {
  proc: ChildProcess;
  pid: number;
  url: string;
  port: number;
  /** Set when the process exited; a server that exits during a scenario crashed. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** The last lines it wrote on stderr (its warnings and errors). */
  tail(): string;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The child's stdout (a server's JSON log lines, thousands a second at the info level) goes
 * straight into its log file: piping it through this process would spend the load
 * generator's CPU on reading and writing the server's logs. stderr (start-up failures, crashes)
 * comes through a pipe, kept for tail().
 */
function logFd(logFile: string): number {
  return openSync(logFile, 'a');
}

function track(proc: ChildProcess, logFile: string, port: number, fd: number): Child {
  closeSync(fd); // the child holds its own copy
  const log = createWriteStream(logFile, { flags: 'a' });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(l);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  proc.stderr?.on('data', keep);
  /** The last lines of the log file (stdout and stderr as written), read when asked. */
  const fileTail = () => {
    try {
      const size = statSync(logFile).size;
      const fdr = openSync(logFile, 'r');
      const buf = Buffer.alloc(Math.min(size, 8192));
      readSync(fdr, buf, 0, buf.length, size - buf.length);
      closeSync(fdr);
      return buf.toString().split('\n').filter((l) => l.trim()).slice(-15);
    } catch {
      return lines.slice(-15);
    }
  };
  let resolveExit!: (v: { code: number | null; signal: NodeJS.Signals | null }) => void;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => (resolveExit = r));
  const child: Child = {
    proc, pid: proc.pid!, port, url: `http://127.0.0.1:${port}`, exit: null,
    tail: () => fileTail().join('\n'),
    async stop() {
      if (child.exit) return child.exit;
      proc.kill('SIGTERM');
      const forced = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      const r = await exited;
      clearTimeout(forced);
      return r;
    },
  };
  proc.on('exit', (code, signal) => {
    child.exit = { code, signal };
    log.end();
    resolveExit(child.exit);
  });
  return child;
}

async function waitReady(child: Child, path: string, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exit) throw new Error(`process exited (code ${child.exit.code}, signal ${child.exit.signal}) before answering:\n${child.tail()}`);
    try {
      const r = await fetch(child.url + path);
      await r.arrayBuffer();
      if (r.ok) return;
    } catch {}
    if (Date.now() > until) throw new Error(`not ready after ${timeoutMs} ms:\n${child.tail()}`);
    await sleep(50);
  }
}

/**
 * `node bin/sunap.js serve` as a child: its own event loop (not the load generator's) and its
 * own RSS. With a profile directory it runs under --cpu-prof; the profile is written when it
 * exits after SIGTERM.
 */
export async function startSunap(opts: {
  root: string; databaseUrl: string; secretKey: string; caFile: string; logFile: string; profile?: { dir: string };
  /** A file for bench/mem-probe.mjs's lines (memory composition every 200 ms). */
  memProbe?: string;
}): Promise<Child> {
  const port = await freePort();
  const args = [
    // One file per thread (tsx's module loader runs on its own): a directory per process.
    ...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${opts.profile.dir}`] : []),
    ...(opts.memProbe ? ['--import', join(opts.root, 'bench', 'mem-probe.mjs')] : []),
    join(opts.root, 'bin', 'sunap.js'), 'serve',
  ];
  const fd = logFd(opts.logFile);
  const proc = spawn(process.execPath, args, {
    cwd: opts.root,
    stdio: ['ignore', fd, 'pipe'],
    env: childEnv({
      DATABASE_URL: opts.databaseUrl, PORT: String(port), HOST: '127.0.0.1', SUNAP_SECRET_KEY: opts.secretKey, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      SUNAP_PUBLIC_URL: `http://127.0.0.1:${port}`,
      // The webhook receiver's certificate comes from a CA made for the run.
      NODE_EXTRA_CA_CERTS: opts.caFile,
      // As `npm start` sets it: glibc's malloc keeps at most two arenas (README, Operations).
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      ...(opts.memProbe ? { BENCH_MEM_PROBE: opts.memProbe } : {}),
      // childEnv drops the caller's SUNAP_ variables; this one is passed on so that SQLite's
      // group commit can be compared with one fsync per commit on the same machine and disk.
      ...(process.env.SUNAP_SQLITE_GROUP_COMMIT ? { SUNAP_SQLITE_GROUP_COMMIT: process.env.SUNAP_SQLITE_GROUP_COMMIT } : {}),
    }),
  });
  const child = track(proc, opts.logFile, port, fd);
  try {
    await waitReady(child, '/readyz');
  } catch (err) {
    await child.stop();
    throw err;
  }
  return child;
}

/** The ceiling: a bare node:http server answering a pre-serialized body (bench/ceiling-server.ts). */
export async function startCeiling(opts: { root: string; bodyFile: string; logFile: string }): Promise<Child> {
  const port = await freePort();
  return startScript(opts.root, 'ceiling-server.ts', opts.logFile, port, '/ready', { BENCH_CEILING_PORT: String(port), BENCH_CEILING_BODY: opts.bodyFile });
}

/** The stack's floor (bench/floor-server.ts): Fastify and the security headers, the ceiling's body. */
export async function startFloor(opts: { root: string; bodyFile: string; logFile: string }): Promise<Child> {
  const port = await freePort();
  return startScript(opts.root, 'floor-server.ts', opts.logFile, port, '/ready', { BENCH_FLOOR_PORT: String(port), BENCH_CEILING_BODY: opts.bodyFile, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' });
}

/**
 * The same-stack reference (bench/reference-server.ts) on the target's database: read-only on
 * SQLite, a read-only pool on PostgreSQL. Same malloc setting as the Sunap server.
 */
export async function startReference(opts: { root: string; databaseUrl: string; secretKey: string; logFile: string; profile?: { dir: string }; pageUrl?: string }): Promise<Child> {
  const port = await freePort();
  return startScript(opts.root, 'reference-server.ts', opts.logFile, port, '/ready', {
    BENCH_REFERENCE_PORT: String(port), BENCH_REFERENCE_DB: opts.databaseUrl, SUNAP_SECRET_KEY: opts.secretKey,
    ...(opts.pageUrl ? { BENCH_REFERENCE_PAGE_URL: opts.pageUrl } : {}),
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
  }, opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${opts.profile.dir}`] : []);
}

async function startScript(root: string, script: string, logFile: string, port: number, readyPath: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Child> {
  const fd = logFd(logFile);
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(root, 'bench', script)], {
    cwd: root,
    stdio: ['ignore', fd, 'pipe'],
    env: childEnv(env),
  });
  const child = track(proc, logFile, port, fd);
  try {
    await waitReady(child, readyPath);
  } catch (err) {
    await child.stop();
    throw err;
  }
  return child;
}

/** `node bin/sunap.js <args> --json` against a database; its one JSON object. */
export async function cli(root: string, databaseUrl: string, secretKey: string, args: string[]): Promise<Record<string, string>> {
  const proc = spawn(process.execPath, [join(root, 'bin', 'sunap.js'), ...args, '--json'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv({ DATABASE_URL: databaseUrl, SUNAP_SECRET_KEY: secretKey, LOG_LEVEL: 'warn' }),
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c));
  proc.stderr!.on('data', (c: Buffer) => (err += c));
  const code = await new Promise<number | null>((r) => proc.on('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`sunap ${args.join(' ')} exited ${code}: ${err.trim()}`);
  try {
    return JSON.parse(out.trim().split('\n').pop()!) as Record<string, string>;
  } catch {
    throw new Error(`sunap ${args.join(' ')} printed no JSON: ${out}`);
  }
}
