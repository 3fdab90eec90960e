// The private CA and the localhost certificate that the HTTPS receivers and the provider fakes
// use. test/run.mjs creates them for the suites; `npm run fakes` for the rehearsal. Node trusts
// the CA through NODE_EXTRA_CA_CERTS, which it reads only at start-up.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Creates the CA and a certificate for localhost and 127.0.0.1 under `dir` unless they exist; returns `dir`. */
export function ensureTestCa(dir) {
  if (existsSync(join(dir, 'server.crt'))) return dir;
  mkdirSync(dir, { recursive: true });
  const o = (args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  o(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=Sunap Test CA']);
  o(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  execFileSync('sh', ['-c', 'printf "subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n" > ext.cnf'], { cwd: dir });
  o(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '3650', '-extfile', 'ext.cnf']);
  return dir;
}
