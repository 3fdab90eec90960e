import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type { Socket } from 'node:net';

/** One request as a fake received it. */
export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  raw: string;
  json: any;
}

/**
 * What a handler answers: a status and a JSON body, or 'hold' (never answer: the caller's time
 * limit decides). With `type`, the body is a string sent as it is (a fake's script or page);
 * `headers` are added (a redirect's location, CORS).
 */
export type FakeAnswer = { status: number; body: unknown; type?: string; headers?: Record<string, string> } | 'hold';

/**
 * A local HTTPS server for a provider fake, with the test CA's certificate (test/fakes/tls.mjs).
 * Held requests are answered never; their sockets are destroyed when the fake stops.
 */
export class FakeHttpsServer {
  private server!: Server;
  private readonly sockets = new Set<Socket>();
  url = '';
  port = 0;

  constructor(private readonly handle: (req: FakeRequest) => FakeAnswer | Promise<FakeAnswer>) {}

  async start(port = 0, tlsDir = process.env.SUNAP_TEST_TLS_DIR): Promise<this> {
    if (!tlsDir) throw new Error('SUNAP_TEST_TLS_DIR is not set: run the tests with npm test (or the fakes with npm run fakes)');
    this.server = createServer({ key: readFileSync(join(tlsDir, 'server.key')), cert: readFileSync(join(tlsDir, 'server.crt')) }, (req, res) => this.serve(req, res));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    this.url = `https://localhost:${this.port}`;
    return this;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = raw ? JSON.parse(raw) : null;
      } catch {
        json = undefined;
      }
      const u = new URL(req.url ?? '/', 'https://fake');
      Promise.resolve(this.handle({ method: req.method ?? 'GET', path: u.pathname, query: u.searchParams, headers: req.headers, raw, json }))
        .then((a) => {
          if (a === 'hold') return;
          const type = a.type ?? 'application/json; charset=utf-8';
          res.writeHead(a.status, { 'content-type': type, ...a.headers }).end(a.type ? String(a.body) : JSON.stringify(a.body));
        })
        .catch((err: Error) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: err.message })));
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
