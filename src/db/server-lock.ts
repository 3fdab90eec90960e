import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';

/**
 * One server per SQLite file. SQLite serves one instance (README, "Operations"): a second
 * server on the same file would run a second job worker and reconcile sweep beside the first
 * without any lease ever telling them apart by process, and nothing would say so. `sunap serve`
 * therefore takes an exclusive lock file beside the database (`PATH.lock`, created with
 * O_EXCL) and removes it on shutdown. A lock left by a process that no longer runs (a crash, a
 * SIGKILL) is stale and taken over. The operator commands (`sunap platform create`, ...) take
 * no lock: they are meant to run beside the server.
 */
export class ServerLockError extends Error {
  override name = 'ServerLockError';
}

export interface ServerLock {
  path: string;
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
  startedAt: string;
}

/** The file an SQLite DATABASE_URL names, or null (PostgreSQL, or an in-memory database). */
export function sqliteFileOf(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith('sqlite:')) return null;
  const path = databaseUrl.slice('sqlite:'.length);
  if (path === '' || path === ':memory:' || path.startsWith('file::memory:')) return null;
  return resolve(path);
}

function readHolder(path: string): Holder | null {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? { pid: h.pid, host: h.host, startedAt: String(h.startedAt ?? '') } : null;
  } catch {
    return null;
  }
}

/** True when a process with this id runs on this machine (EPERM: it runs, under another user). */
function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of `databaseFile`, or throws ServerLockError naming the server that holds it.
 * A lock whose process is gone (same machine) is stale and taken over; a lock written on
 * another machine (a shared disk) is never guessed about.
 */
export function acquireServerLock(databaseFile: string): ServerLock {
  const path = `${databaseFile}.lock`;
  // The lock is the first file `sunap serve` writes: its folder is the data folder, private (0700) as docs/security.md says.
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  for (let tries = 0; tries < 2; tries++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readHolder(path);
      const here = hostname();
      if (holder && holder.host !== here) {
        throw new ServerLockError(`another Sunap server (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}) holds ${path}; SQLite serves one server at a time. Stop that one, or delete the lock file if it no longer runs. Several instances need PostgreSQL (DATABASE_URL=postgres://...)`);
      }
      if (holder && alive(holder.pid)) {
        throw new ServerLockError(`another Sunap server (pid ${holder.pid}, since ${holder.startedAt}) already serves this SQLite database; lock file ${path}. Stop it first (SIGTERM), or use PostgreSQL (DATABASE_URL=postgres://...) to run several instances`);
      }
      // Stale (its process is gone) or unreadable (a crash while writing it): take it over.
      try {
        unlinkSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      continue;
    }
    try {
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() } satisfies Holder) + '\n');
    } finally {
      closeSync(fd);
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.removeListener('exit', release);
      // Only our own lock: never remove one another server took over meanwhile.
      if (readHolder(path)?.pid === process.pid) {
        try {
          unlinkSync(path);
        } catch {
          // Already gone: nothing to release.
        }
      }
    };
    process.on('exit', release);
    return { path, release };
  }
  throw new ServerLockError(`could not take the lock file ${path}: another server keeps creating it`);
}
