import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

/**
 * True for an address a callback or webhook may not reach when private targets are refused:
 * anything but public unicast. request-filtering-agent refuses what ipaddr.js ranges as other
 * than unicast (loopback, private, link-local, unique-local, CGNAT, reserved, multicast,
 * IPv4-mapped, NAT64, 6to4, Teredo, ...), but ipaddr.js calls IPv4-compatible IPv6 (::/96,
 * deprecated by RFC 4291: ::127.0.0.1, ::10.0.0.1) unicast. This check refuses those too and
 * judges an IPv4-mapped address by the IPv4 address inside. Not an IP address: true.
 */
export function isForbiddenAddress(ip: string): boolean {
  if (net.isIP(ip) === 0) return true;
  let addr: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) addr = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((p) => p === 0)) return true;
  }
  return addr.range() !== 'unicast';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | dns.LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

/**
 * A DNS lookup that fails when any address a name resolves to is forbidden, so a public name
 * pointing inward is refused before a socket is opened. `base` is dns.lookup (tests pass a fake).
 */
export function guardedLookup(base: LookupFunction = dns.lookup as unknown as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err);
      const all = Array.isArray(address) ? address : [{ address: address as string, family: family ?? 0 }];
      const bad = all.find((a) => isForbiddenAddress(a.address));
      if (bad) return callback(Object.assign(new Error(`not allowed: ${hostname} resolves to ${bad.address}, a private, loopback or reserved address`), { code: 'SUNAP_FORBIDDEN_TARGET' }));
      callback(null, address, family);
    });
  };
}

/**
 * Outbound HTTP for callbacks and webhooks (Svix's rules): the exact bytes given are sent,
 * redirects are never followed (a 3xx is a failure), private/loopback/link-local targets are
 * refused at connect time (after DNS, so a public name pointing inward is caught too) unless
 * allowed, and every call has a timeout.
 */
export interface HttpOut {
  /** `timeoutMs` defaults to the one the port was created with (SUNAP_OUTBOUND_TIMEOUT_MS). */
  post(url: string, body: Buffer, headers: Record<string, string>, timeoutMs?: number): Promise<OutboundAnswer>;
}

/** Most of a receiver's answer kept: the delivery log shows it, cut to 2 KB. */
export const ANSWER_KEEP_BYTES = 2048;

export interface OutboundAnswer {
  status: number;
  /** The start of the answer's body (ANSWER_KEEP_BYTES at most), as UTF-8. */
  body?: string;
  /** The Retry-After header, as the receiver wrote it. */
  retryAfter?: string;
}

export function createHttpOut(opts: { allowPrivateTargets: boolean; timeoutMs: number }): HttpOut {
  const filter = { allowPrivateIPAddress: opts.allowPrivateTargets, keepAlive: true, maxSockets: 64 };
  const httpAgent = new RequestFilteringHttpAgent(filter);
  const httpsAgent = new RequestFilteringHttpsAgent(filter);
  // A second check beside the agents' (see isForbiddenAddress): literal addresses before any
  // request is made, names through the lookup the agents call.
  const lookup = opts.allowPrivateTargets ? undefined : guardedLookup();
  return {
    post(url, body, headers, timeoutMs = opts.timeoutMs) {
      return new Promise((resolve, reject) => {
        let u: URL;
        try {
          u = new URL(url);
        } catch {
          reject(new Error('invalid URL'));
          return;
        }
        const isHttps = u.protocol === 'https:';
        if (!isHttps && u.protocol !== 'http:') {
          reject(new Error(`unsupported protocol ${u.protocol}`));
          return;
        }
        const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
        if (!opts.allowPrivateTargets && net.isIP(host) !== 0 && isForbiddenAddress(host)) {
          reject(new Error(`not allowed: ${host} is a private, loopback or reserved address`));
          return;
        }
        const req = (isHttps ? https : http).request(
          u,
          {
            method: 'POST',
            agent: isHttps ? httpsAgent : httpAgent,
            headers: { 'content-length': String(body.length), 'user-agent': 'Sunap/1', ...headers },
            timeout: timeoutMs,
            ...(lookup ? { lookup: lookup as unknown as typeof dns.lookup } : {}),
          },
          (res) => {
            // Read the whole answer (so the socket can be reused) but keep only its start.
            const kept: Buffer[] = [];
            let size = 0;
            res.on('data', (c: Buffer) => {
              if (size < ANSWER_KEEP_BYTES) kept.push(c.subarray(0, ANSWER_KEEP_BYTES - size));
              size += c.length;
            });
            res.on('end', () => {
              const ra = res.headers['retry-after'];
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(kept).toString('utf8'), ...(typeof ra === 'string' ? { retryAfter: ra } : {}) });
            });
            res.on('error', reject);
          },
        );
        const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
        req.on('close', () => clearTimeout(timer));
        req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
        req.on('error', (err) => reject(err));
        req.end(body);
      });
    },
  };
}
