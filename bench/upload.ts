/**
 * `npm run bench:upload`: how long /healthz takes to answer while the console reads CSV uploads
 * (docs/security.md, "Probes of issue 28": one manager's upload must not stall every tenant).
 * The real app on SQLite, signed in as an owner; /healthz is asked one request after another
 * while the largest upload allowed (2 MiB, 1,000 rows) and a too-large one (4 MiB, refused
 * while it streams in) run together, ROUNDS times. Reported: the latency of /healthz when the
 * app is idle and during the uploads (median, p99, max). The target (docs/security.md): the
 * largest upload leaves /healthz answering within 100 ms.
 */
import { CSV_LIMITS } from '../src/console/csv-upload.js';
import { startApp } from '../test/helpers/app.js';
import { ownerClient, type ConsoleClient } from '../test/console/support.js';

const ROUNDS = Number(process.env.BENCH_UPLOAD_ROUNDS ?? 5);

async function upload(c: ConsoleClient, url: string, bytes: Buffer): Promise<number> {
  const form = new FormData();
  form.set('_csrf', await c.csrf('/console/invoices/bulk'));
  form.set('reason', '12월 수강료');
  form.set('file', new Blob([bytes], { type: 'text/csv' }), 'class.csv');
  const res = await fetch(`${url}/console/invoices/bulk/preview`, { method: 'POST', body: form, headers: { cookie: c.cookieHeader() }, redirect: 'manual' });
  await res.text();
  return res.status;
}

/** Asks /healthz one request after another until `until` resolves; returns each answer's milliseconds. */
async function sample(url: string, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => { done = true; });
  const times: number[] = [];
  while (!done) {
    const start = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.text();
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    times.push(performance.now() - start);
  }
  return times;
}

function summary(times: number[]): string {
  const s = [...times].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `n=${s.length} median ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${s.at(-1)!.toFixed(1)} ms`;
}

const t = await startApp('sqlite');
try {
  const { c } = await ownerClient(t, { points: 20_000 });
  const pad = 'x'.repeat(Math.floor(CSV_LIMITS.bytes / 1000) - 60);
  const largest = Buffer.from(Array.from({ length: 1000 }, (_, i) => `학생${i},010${String(30_000_000 + i)},10000,,,${pad}`).join('\n'), 'utf8');
  const tooLarge = Buffer.alloc(CSV_LIMITS.bytes * 2, 0x61);
  const idle = await sample(t.url, new Promise((r) => setTimeout(r, 2000)));
  const during: number[] = [];
  const statuses: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const uploads = Promise.all([upload(c, t.url, largest), upload(c, t.url, tooLarge)]);
    during.push(...(await sample(t.url, uploads)));
    statuses.push(...(await uploads));
  }
  console.log(`upload of ${largest.length} bytes (1,000 rows) and of ${tooLarge.length} bytes, ${ROUNDS} rounds; answers ${[...new Set(statuses)].join('/')}`);
  console.log(`/healthz idle:           ${summary(idle)}`);
  console.log(`/healthz during uploads: ${summary(during)}`);
} finally {
  await t.close();
}
