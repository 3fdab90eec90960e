import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Who this process is, as a holder of payment attempts: `host/pid/random`. The random part
 * tells this process from an earlier one that had the same process id (a container's pid 1
 * after a restart).
 */
export const INSTANCE_ID = `${hostname()}/${process.pid}/${randomBytes(6).toString('hex')}`;

interface Owner {
  host: string;
  pid: number;
  token: string;
}

/** host/pid/random, read from the right (a host name never holds a slash, but be safe). */
function parse(owner: string): Owner | null {
  const parts = owner.split('/');
  if (parts.length < 3) return null;
  const token = parts.pop()!;
  const pid = Number(parts.pop());
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return { host: parts.join('/'), pid, token };
}

/** Whether a process of this host with that id is running (EPERM: it is, under another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True only when the owner is known to be gone: a process of this host that no longer runs, or
 * an earlier process that had this process's id. Anything else (another host, a process still
 * running, no owner on record) may be alive: its attempt is settled once it is stale.
 */
export function ownerGone(owner: string | null, self: string = INSTANCE_ID): boolean {
  if (!owner || owner === self) return false;
  const o = parse(owner);
  const me = parse(self);
  if (!o || !me || o.host !== me.host) return false;
  if (o.pid === me.pid) return o.token !== me.token;
  return !running(o.pid);
}

/** The host part of an owner, to find the attempts this host's processes hold. */
export function ownerHostPrefix(self: string = INSTANCE_ID): string {
  return `${parse(self)?.host ?? ''}/`;
}
