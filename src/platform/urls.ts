import net from 'node:net';

/**
 * The one set of URL rules: where a merchant's callback, return page or webhook may point
 * (docs/reference.md, "Limits"), which links a page may show, and which base URLs the
 * configuration accepts.
 */
export type HttpPolicy =
  /** https:// only (CONFIRM_URL, RETURN_URL, webhookUrl in live mode). */
  | 'https'
  /** https://, or http:// to this machine (the same three in the sandbox: local development). */
  | 'https-or-loopback-http'
  /** http:// or https:// (links, configured base URLs). */
  | 'http-or-https';

/**
 * Where CONFIRM_URL, RETURN_URL and webhookUrl may point: https only in live mode; in the
 * sandbox also http:// to this machine, so a receiver of a few lines on localhost works while
 * developing (README, "Receive the callback and webhooks"). Private targets are a separate
 * guard (SUNAP_ALLOW_PRIVATE_TARGETS) on the outbound calls themselves.
 */
export function merchantUrlPolicy(mode: 'sandbox' | 'live'): HttpPolicy {
  return mode === 'sandbox' ? 'https-or-loopback-http' : 'https';
}

/** localhost, 127.0.0.0/8 and ::1: the machine itself. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}

/** `value` as a URL when it is absolute, http(s) and has a host; null otherwise. */
export function parseHttpUrl(value: string): URL | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return null;
  }
  return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '' ? u : null;
}

/** Why `value` breaks the policy, as the end of a `field: reason` message; null when it is fine. */
export function urlProblem(value: string, policy: HttpPolicy): string | null {
  const u = parseHttpUrl(value);
  if (policy === 'http-or-https') return u ? null : 'must be an absolute http(s) URL';
  if (!u) return policy === 'https' ? 'must be an absolute https URL' : 'must be an absolute https URL (or http://localhost while testing)';
  if (u.protocol === 'https:') return null;
  if (policy === 'https-or-loopback-http' && isLoopbackHost(u.hostname)) return null;
  return policy === 'https' ? 'must start with https://' : 'must start with https:// (http:// only to localhost)';
}

/** The link as it can safely go into an href (http(s) only), or null. */
export function safeHref(link: string | null): string | null {
  if (!link) return null;
  return parseHttpUrl(link)?.toString() ?? null;
}

/** The origin of an http(s) URL (for a CSP form-action), or null. */
export function httpOrigin(value: string | null): string | null {
  if (!value) return null;
  return parseHttpUrl(value)?.origin ?? null;
}
