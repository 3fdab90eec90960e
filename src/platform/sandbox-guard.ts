import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from './errors.js';

/**
 * Who may reach the sandbox's own routes (`/sandbox/...`: the clock, the pay and terminal
 * calls, the outbox; docs/security.md, "The sandbox"). They move money-shaped state and show
 * every store's messages, so:
 * - the Host must be one of the service's configured hosts or a loopback name: a web page on
 *   another site that rebinds its DNS name to 127.0.0.1 still sends its own name as Host,
 *   and is refused;
 * - the caller must be on a loopback address, unless the operator opened the sandbox to the
 *   network (SUNAP_SANDBOX_OPEN=true, a documented choice). The address is `req.ip`, so a
 *   configured proxy (SUNAP_TRUST_PROXY) passes on its client's address, not its own.
 */
// A callback hook, not an async one: it runs on every request of a sandbox server (the gateway's
// too), and an async hook costs a promise and a microtask each time.
export function sandboxGuard(opts: { hosts: string[]; open: boolean }): (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  const hosts = new Set(opts.hosts.map((h) => h.toLowerCase()));
  return (req, _reply, done) => {
    if (!req.routeOptions.url?.startsWith('/sandbox/')) return done();
    const host = (req.hostname ?? '').toLowerCase();
    if (!hosts.has(host) && !isLoopbackName(host)) {
      return done(new AppError('FORBIDDEN', 'Host: the sandbox answers only its configured host (SUNAP_PUBLIC_URL) or localhost'));
    }
    if (!opts.open && !isLoopbackAddress(req.ip)) {
      return done(new AppError('FORBIDDEN', 'sandbox: answers loopback callers only; set SUNAP_SANDBOX_OPEN=true to share it on a network'));
    }
    done();
  };
}

/** localhost, *.localhost, 127.0.0.0/8 and [::1] (hostnames as Fastify gives them, without the port). */
export function isLoopbackName(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  return isIP(h) !== 0 && isLoopbackAddress(h);
}

export function isLoopbackAddress(ip: string): boolean {
  const a = ip.replace(/^::ffff:/i, '');
  if (isIP(a) === 4) return a.startsWith('127.');
  return a === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(a);
}
