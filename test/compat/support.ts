import { createServer, type Server } from 'node:http';
import type { TestApp } from '../helpers/app.js';

/**
 * What the compatibility suite stands on: the wire behaviour the public client SDKs of the real
 * service rely on, written from their documented behaviour (decisions §9), never from their code.
 */

export interface Delivery {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
  json: any;
}

/**
 * A merchant's receiver as a developer writes it on a laptop: plain http on this machine
 * (README, "Receive the callback and webhooks"). It answers 200 to everything.
 */
export class PlainReceiver {
  readonly received: Delivery[] = [];
  private server!: Server;
  private waiters: { n: number; resolve: () => void }[] = [];
  url = '';

  /** `host` is what goes into the URL Sunap is given: localhost, 127.0.0.1 or [::1]. */
  async start(host = 'localhost'): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let json: unknown = null;
        try {
          json = JSON.parse(raw.toString('utf8'));
        } catch {}
        this.received.push({ method: req.method!, url: req.url!, headers: req.headers, raw, json });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        this.waiters = this.waiters.filter((w) => (this.received.length >= w.n ? (w.resolve(), false) : true));
      });
    });
    const bind = host === '[::1]' ? '::1' : '127.0.0.1';
    await new Promise<void>((r) => this.server.listen(0, bind, r));
    this.url = `http://${host}:${(this.server.address() as { port: number }).port}`;
    return this;
  }

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
 * The token handling the public clients document: a call whose answer is a 2xx carrying
 * result_code -1 or -2 renews the token (refresh; a failed refresh logs in again) and is sent
 * once more. That is all the stricter of them does: it never looks at a 401.
 */
export class TokenClient {
  accessToken = '';
  refreshToken = '';
  /** What the client did, in order: 'login', 'refresh', and each call's `status/result_code`. */
  readonly trail: string[] = [];

  constructor(private readonly t: TestApp, private readonly email: string, private readonly password: string) {}

  async login(): Promise<void> {
    const r = await this.t.post('/app/v1/auth/login', { email: this.email, password: this.password, loginType: 'EMAIL' });
    this.trail.push('login');
    if (r.body?.result_code !== 0) throw new Error(`login refused: ${r.text}`);
    this.accessToken = r.body.result_data.accessToken;
    this.refreshToken = r.body.result_data.refreshToken;
  }

  private async renew(): Promise<void> {
    const r = await this.t.post('/app/v1/auth/refresh', { refreshToken: this.refreshToken });
    this.trail.push('refresh');
    if (r.body?.result_code === 0) {
      this.accessToken = r.body.result_data.accessToken;
      this.refreshToken = r.body.result_data.refreshToken;
      return;
    }
    await this.login();
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.t.request(method, path, body, { 'x-access-token': this.accessToken });
      this.trail.push(`${r.status}/${r.body?.result_code}`);
      const renewable = r.status >= 200 && r.status < 300 && (r.body?.result_code === -1 || r.body?.result_code === -2);
      if (!renewable || attempt > 0) return r;
      await this.renew();
    }
  }
}
