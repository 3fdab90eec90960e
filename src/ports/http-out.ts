import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

/**
 * Outbound HTTP for callbacks and webhooks (Svix's rules): the exact bytes given are sent,
 * redirects are never followed (a 3xx is a failure), private/loopback/link-local targets are
 * refused at connect time (after DNS, so a public name pointing inward is caught too) unless
 * allowed, and every call has a timeout.
 */
export interface HttpOut {
  /** `timeoutMs` defaults to the one the port was created with (SUNAP_OUTBOUND_TIMEOUT_MS). */
  post(url: string, body: Buffer, headers: Record<string, string>, timeoutMs?: number): Promise<{ status: number }>;
}

export function createHttpOut(opts: { allowPrivateTargets: boolean; timeoutMs: number }): HttpOut {
  const filter = { allowPrivateIPAddress: opts.allowPrivateTargets, keepAlive: true, maxSockets: 64 };
  const httpAgent = new RequestFilteringHttpAgent(filter);
  const httpsAgent = new RequestFilteringHttpsAgent(filter);
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
        const req = (isHttps ? https : http).request(
          u,
          {
            method: 'POST',
            agent: isHttps ? httpsAgent : httpAgent,
            headers: { 'content-length': String(body.length), 'user-agent': 'Sunap/1', ...headers },
            timeout: timeoutMs,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
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
