import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';

/**
 * A private CA and a certificate for 127.0.0.1, made once under .tmp/bench/tls. The Sunap
 * children trust the CA through NODE_EXTRA_CA_CERTS, so webhooks and callbacks go over real TLS.
 */
export function ensureTls(root: string): { dir: string; caFile: string } {
  const dir = join(root, '.tmp', 'bench', 'tls');
  if (!existsSync(join(dir, 'server.crt'))) {
    mkdirSync(dir, { recursive: true });
    const o = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    o(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=Sunap Bench CA']);
    o(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
    o(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '3650', '-extfile', 'ext.cnf']);
  }
  return { dir, caFile: join(dir, 'ca.crt') };
}

/**
 * The merchant's side: an HTTPS endpoint on 127.0.0.1 that answers 200 to every webhook
 * (/hook) and payment callback (/callback), and counts what arrived.
 */
export class BenchReceiver {
  hooks = 0;
  unsigned = 0;
  callbacks = 0;
  readonly deliveries = new Set<string>();
  private server!: Server;
  port = 0;

  async start(tlsDir: string): Promise<this> {
    this.server = createServer({ key: readFileSync(join(tlsDir, 'server.key')), cert: readFileSync(join(tlsDir, 'server.crt')) }, (req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url?.startsWith('/hook')) {
          this.hooks++;
          if (!req.headers['x-service-signature']) this.unsigned++;
          const d = req.headers['x-service-delivery'];
          if (typeof d === 'string') this.deliveries.add(d);
        } else {
          this.callbacks++;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}');
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get base(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  reset(): void {
    this.hooks = 0;
    this.unsigned = 0;
    this.deliveries.clear();
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }
}
