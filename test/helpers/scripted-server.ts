import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedRequest {
  method: string;
  /** The path without its query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A local HTTP server that stands in for a provider's API in an adapter's unit tests: it records
 * every request and answers each with the next scripted JSON answer (`delayMs` holds one back,
 * as a provider whose answer is lost would), or `fallback` when the script is empty.
 */
export interface ScriptedAnswer {
  status: number;
  body: unknown;
  delayMs?: number;
}

export class ScriptedServer {
  readonly seen: ScriptedRequest[] = [];
  readonly script: ScriptedAnswer[] = [];
  url = '';
  private server?: Server;

  constructor(private readonly fallback: ScriptedAnswer) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const u = new URL(req.url!, 'http://x');
        this.seen.push({ method: req.method!, path: u.pathname, query: u.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString() });
        const a: ScriptedAnswer = this.script.shift() ?? this.fallback;
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
        }, a.delayMs ?? 0);
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Forgets the requests and the answers not given: between tests. */
  reset(): void {
    this.seen.length = 0;
    this.script.length = 0;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}
