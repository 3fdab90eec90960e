import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { after, before } from 'node:test';

export interface Received {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
  json: any;
  at: number;
}

/**
 * A real HTTPS endpoint standing in for a merchant's server. Its certificate is signed by the
 * test CA that test/run.mjs hands to Node through NODE_EXTRA_CA_CERTS.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** Status codes to answer, in order; when empty, `defaultStatus`. */
  readonly script: number[] = [];
  defaultStatus = 200;
  /** Headers added to every answer (e.g. Retry-After). */
  responseHeaders: Record<string, string> = {};
  private server!: Server;
  private waiters: { n: number; resolve: () => void }[] = [];
  url = '';

  async start(): Promise<this> {
    const dir = process.env.SUNAP_TEST_TLS_DIR;
    if (!dir) throw new Error('SUNAP_TEST_TLS_DIR is not set: run the tests with npm test');
    this.server = createServer({ key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.crt')) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let json: unknown = null;
        try {
          json = JSON.parse(raw.toString('utf8'));
        } catch {}
        this.received.push({ method: req.method!, url: req.url!, headers: req.headers, raw, json, at: Date.now() });
        const status = this.script.shift() ?? this.defaultStatus;
        if (status >= 300 && status < 400) res.setHeader('location', 'https://127.0.0.1:1/elsewhere');
        res.writeHead(status, { 'content-type': 'application/json', ...this.responseHeaders }).end('{}');
        this.waiters = this.waiters.filter((w) => {
          if (this.received.length >= w.n) {
            w.resolve();
            return false;
          }
          return true;
        });
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `https://localhost:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  /** Resolves when `n` requests have arrived; rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs = 10_000): Promise<void> {
    if (this.received.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`receiver got ${this.received.length} of ${n} requests in ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ n, resolve: () => { clearTimeout(t); resolve(); } });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * A receiver for the enclosing suite: started before its first test, closed after its last. The
 * handle reads through to the started receiver, so tests use it directly.
 */
export function withReceiver(): Receiver {
  let started: Receiver | undefined;
  before(async () => {
    started = await new Receiver().start();
  });
  after(() => started?.close());
  return new Proxy({} as Receiver, {
    get(_, key) {
      if (!started) throw new Error('the receiver starts in before(); read it inside a test or hook');
      const v = (started as unknown as Record<string | symbol, unknown>)[key];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(started) : v;
    },
  });
}
