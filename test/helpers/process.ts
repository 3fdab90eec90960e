import { createServer } from 'node:net';

/** Child processes of the suites and the benchmark: a free port, and a clean environment. */

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * Our environment without anything that would configure Sunap or node:test behind the caller's back,
 * except SUNAP_USE_TSX: test/run.mjs decides whether children run src/ or the compiled dist/.
 */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if ((k.startsWith('SUNAP_') && k !== 'SUNAP_USE_TSX') || k.startsWith('NODE_TEST') || ['DATABASE_URL', 'PORT', 'HOST', 'LOG_LEVEL', 'NODE_OPTIONS'].includes(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}
