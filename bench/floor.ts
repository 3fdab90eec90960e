// What the framework costs before Sunap does anything: the bare node:http ceiling, a Fastify
// route, the route with helmet run on every request (what @fastify/helmet does, and what Sunap
// did before), and the route with helmet's headers worked out once (what Sunap does now), each
// answering a searchPayment-sized JSON body, measured with the same load method as bench/run.ts.
//   node --import tsx bench/floor.ts            (BENCH_DURATION, BENCH_CONNECTIONS as for run.ts)
// Not part of `npm run bench`: it explains the distance between Sunap and the ceiling.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBenchConfig } from './config.js';
import { runLoad } from './load.js';
import { childEnv, freePort, startCeiling } from './processes.js';

const BODY = JSON.stringify({
  result_code: 0, result_msg: 'SUCCESS',
  result_data: {
    RESULT_CODE: '0000', RESULT_MSG: '정상 처리되었습니다', TRANS_SEQNO: 'BXXXXXSEARCH', APPROVE_STATUS: 'APPROVE_COMPLETE',
    MOBILE_NO: '01012345678', APPROVAL_DATETIME: '20261122105415', APPROVAL_AMOUNT: 128000, SUPPLY_AMOUNT: 116364, TAX_CHARGE: 11636,
    APPROVAL_NUMBER: '33846107', INSTALLMENT_MONTH: '00', ISSUER_NAME: '신한카드', ACCEPTER_NAME: '신한카드', METHOD_NAME: '신용카드',
    STORE_NAME: '행복 피아노 학원', CEO_NAME: '김대표', BIZ_REG_NUM: '1234567890', STORE_TEL_NUM: '0212345678',
    APPROVAL_CANCEL_DATETIME: null, CANCEL_REASON: '', CANCEL_AMOUNT: 0, PAY_PATH: 'WEB', VBANK_NAME: '', VBANK_ACCOUNT: '', VBANK_HOLDER: '', VBANK_DUE: null,
  },
});

// The Fastify variants, run as a child with `node -e` so they have their own event loop.
const FASTIFY_CHILD = `
import Fastify from 'fastify';
import helmet from 'helmet';
const body = JSON.parse(process.env.FLOOR_BODY);
const options = { contentSecurityPolicy: false, frameguard: { action: 'deny' }, referrerPolicy: { policy: 'no-referrer' }, hsts: false };
const app = Fastify({ logger: false });
if (process.env.FLOOR_HEADERS === 'per-request') {
  // As @fastify/helmet's onRequest hook: helmet(options) built and run on every request.
  app.addHook('onRequest', (req, reply, done) => helmet(options)(req.raw, reply.raw, done));
} else if (process.env.FLOOR_HEADERS === 'once') {
  // As src/platform/security-headers.ts: the same headers, worked out once.
  const headers = {};
  helmet(options)({}, { setHeader: (k, v) => { headers[k.toLowerCase()] = String(v); }, removeHeader: () => {} }, () => {});
  app.addHook('onRequest', (req, reply, done) => { reply.headers(headers); done(); });
}
app.post('/api/searchPayment', async () => body);
await app.listen({ port: Number(process.env.FLOOR_PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
`;

async function fastifyChild(root: string, headers: '' | 'per-request' | 'once'): Promise<{ pid: number; url: string; stop: () => void }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--input-type=module', '-e', FASTIFY_CHILD], {
    cwd: root, stdio: ['ignore', 'inherit', 'inherit'],
    env: childEnv({ FLOOR_BODY: BODY, FLOOR_PORT: String(port), FLOOR_HEADERS: headers }),
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url + '/api/searchPayment', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { pid: proc.pid!, url, stop: () => proc.kill('SIGTERM') };
}

const cfg = loadBenchConfig();
mkdirSync(cfg.outDir, { recursive: true });
const bodyFile = join(cfg.outDir, 'floor-body.json');
writeFileSync(bodyFile, BODY);
const load = (url: string, pid: number) => runLoad({
  url, method: 'POST', path: '/api/searchPayment', body: '{"TRANS_SEQNO":"x"}', verify: (b) => b.includes('"RESULT_CODE":"0000"'),
  connections: cfg.connections, duration: cfg.duration, warmup: cfg.warmup, serverPid: pid,
});
const rows: string[] = ['| server | req/s | p50 ms | p99 ms | server CPU µs/req |', '|---|---:|---:|---:|---:|'];
const row = (name: string, r: Awaited<ReturnType<typeof load>>) =>
  rows.push(`| ${name} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${Math.round(r.cpuUsPerRequest ?? NaN)} |`);

const ceiling = await startCeiling({ root: cfg.root, bodyFile, logFile: join(cfg.outDir, 'floor-ceiling.log') });
row('bare node:http (the ceiling)', await load(ceiling.url, ceiling.pid));
await ceiling.stop();
const variants = [['', 'Fastify 5'], ['per-request', 'Fastify 5 + helmet on every request (@fastify/helmet)'], ['once', 'Fastify 5 + helmet headers worked out once (Sunap)']] as const;
for (const [headers, name] of variants) {
  const f = await fastifyChild(cfg.root, headers);
  row(name, await load(f.url, f.pid));
  f.stop();
}
process.stdout.write(`${Buffer.byteLength(BODY)}-byte body, ${cfg.connections} connections, ${cfg.duration} s\n${rows.join('\n')}\n`);
