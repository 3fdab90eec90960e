/**
 * `npm run fakes`: the rehearsal of live mode (docs/going-live.md, "Rehearse live mode"). Starts
 * the Toss Payments and Solapi fakes as local HTTPS servers, and an HTTPS front for Sunap (live
 * mode wants an https public URL), then prints the environment that points `sunap serve` at
 * them. Stops on Ctrl-C.
 *
 * Toss's way: its payment window (SDK v2; FAKE_TOSS_WAY=toss, the default), or its card-number
 * API (FAKE_TOSS_WAY=toss-keyin). The window's deposits and dashboard cancels are made at
 * https://localhost:9701/_dashboard and posted to Sunap's /processor-events/toss.
 * PortOne V2 for a store (sunap store set-processor with the printed keys): its virtual accounts'
 * deposits are made at https://localhost:9703/fake/accounts.
 *
 * Ports: FAKE_TOSS_PORT (9701), FAKE_SOLAPI_PORT (9702), FAKE_PORTONE_PORT (9703), FAKE_FRONT_PORT (8443) forwarding to
 * Sunap's PORT (8080). Certificates: .tmp/tls (created when missing), trusted by Sunap through
 * NODE_EXTRA_CA_CERTS.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:https';
import * as nodeTls from 'node:tls';
import { join, resolve } from 'node:path';
import { INVOICE_TEMPLATE } from '../../src/invoicing/index.js';
import { FakePortone, FAKE_PORTONE } from './portone.js';
import { FakeSolapi, FAKE_SOLAPI } from './solapi.js';
import { FakeToss } from './toss.js';
import { ensureTestCa } from './tls.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const tls = ensureTestCa(join(root, '.tmp', 'tls'));
// The fakes post deposit notices and webhooks to Sunap behind the https front, whose certificate
// this CA signed: this process trusts it itself, so the first run works without
// NODE_EXTRA_CA_CERTS (which cannot name a CA the run has not created yet). Node 22.19 / 24.5
// and newer; older lines need NODE_EXTRA_CA_CERTS=.tmp/tls/ca.crt.
if (typeof nodeTls.setDefaultCACertificates === 'function') {
  nodeTls.setDefaultCACertificates([...nodeTls.getCACertificates('default'), readFileSync(join(tls, 'ca.crt'), 'utf8')]);
}
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const sunapPort = port('PORT', 8080);

const toss = await new FakeToss().start(port('FAKE_TOSS_PORT', 9701), tls);
const solapi = await new FakeSolapi({ ...FAKE_SOLAPI, template: INVOICE_TEMPLATE }).start(port('FAKE_SOLAPI_PORT', 9702), tls);
// PortOne V2: its notices go where PortOne's console would send them (FAKE_PORTONE_WEBHOOK_URL: a store with its own keys has its own address).
const portone = await new FakePortone([{ ...FAKE_PORTONE, webhookUrl: process.env.FAKE_PORTONE_WEBHOOK_URL ?? `https://localhost:${port('FAKE_FRONT_PORT', 8443)}/processor-events/portone` }])
  .start(port('FAKE_PORTONE_PORT', 9703), tls);

// The TLS a reverse proxy gives Sunap in production, for the payment links the rehearsal hands out.
const front = createServer({ key: readFileSync(join(tls, 'server.key')), cert: readFileSync(join(tls, 'server.crt')) }, (req, res) => {
  const upstream = request({ host: '127.0.0.1', port: sunapPort, path: req.url, method: req.method, headers: { ...req.headers, 'x-forwarded-proto': 'https' } }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  upstream.on('error', () => res.writeHead(502, { 'content-type': 'text/plain' }).end(`Sunap is not answering on port ${sunapPort}\n`));
  req.pipe(upstream);
});
const frontPort = port('FAKE_FRONT_PORT', 8443);
await new Promise<void>((r) => front.listen(frontPort, '127.0.0.1', r));

const tossWay = process.env.FAKE_TOSS_WAY === 'toss-keyin' ? 'toss-keyin' : 'toss';
// Toss posts deposits and webhooks to the address registered in its developer center: Sunap's, behind the front.
toss.window.webhookUrl = `https://localhost:${frontPort}/processor-events/toss`;
const tossWindow = tossWay === 'toss' ? { SUNAP_TOSS_CLIENT_KEY: toss.window.clientKey, SUNAP_TOSS_SDK_URL: toss.sdkUrl } : {};

const env = {
  SUNAP_MODE: 'live',
  PORT: String(sunapPort),
  SUNAP_PUBLIC_URL: `https://localhost:${frontPort}`,
  SUNAP_SECRET_KEY: '<64 hex characters: openssl rand -hex 32>',
  NODE_EXTRA_CA_CERTS: join(tls, 'ca.crt'),
  SUNAP_CARD_PROCESSOR: tossWay,
  SUNAP_TOSS_SECRET_KEY: toss.secretKey,
  SUNAP_TOSS_API_URL: toss.url,
  ...tossWindow,
  SUNAP_PORTONE_API_URL: portone.url,
  SUNAP_MESSAGING_PROVIDER: 'solapi',
  SUNAP_SOLAPI_API_KEY: FAKE_SOLAPI.apiKey,
  SUNAP_SOLAPI_API_SECRET: FAKE_SOLAPI.apiSecret,
  SUNAP_SOLAPI_API_URL: solapi.url,
  SUNAP_SOLAPI_SENDER: FAKE_SOLAPI.sender,
  SUNAP_SOLAPI_PFID: FAKE_SOLAPI.pfId,
  SUNAP_SOLAPI_TEMPLATE_ID: FAKE_SOLAPI.templateId,
};
process.stdout.write([
  `Toss Payments fake  ${toss.url}`,
  `PortOne V2 fake     ${portone.url} (its bank: ${portone.url}/fake/accounts; notices to ${FAKE_PORTONE_WEBHOOK()})`,
  `Solapi fake         ${solapi.url}`,
  `HTTPS front         https://localhost:${frontPort} -> http://127.0.0.1:${sunapPort}`,
  ...(tossWay === 'toss' ? [`Toss dashboard      ${toss.url}/_dashboard (deposit into a virtual account, cancel as in Toss's dashboard)`] : []),
  '',
  'Browsers: trust .tmp/tls/ca.crt, or open each https address above once and accept its certificate.',
  'In another terminal, with these variables (the test CA is trusted through NODE_EXTRA_CA_CERTS):',
  '',
  ...Object.entries(env).map(([k, v]) => `export ${k}=${k === 'SUNAP_SECRET_KEY' ? '$(openssl rand -hex 32)' : v}`),
  '',
  `PortOne for a store (its own keys; or the operator's: SUNAP_CARD_PROCESSOR=portone with SUNAP_PORTONE_API_SECRET, _STORE_ID, _CHANNEL_KEY, _WEBHOOK_SECRET):`,
  `  npx sunap store set-processor --store-code S... --processor portone --api-secret ${FAKE_PORTONE.apiSecret} --store-id ${FAKE_PORTONE.storeId} --channel-key ${FAKE_PORTONE.channels[0]!.key} --webhook-secret ${FAKE_PORTONE.webhookSecret}`,
  '  (channel keys: ' + FAKE_PORTONE.channels.map((c) => `${c.key} ${c.name}`).join(', ') + ')',
  '',
  'then (with one SUNAP_SECRET_KEY kept for the whole rehearsal): npx sunap migrate && npx sunap doctor && npx sunap serve',
  'Every request the fakes answer is printed below. Ctrl-C stops them.',
  '',
].join('\n'));

function FAKE_PORTONE_WEBHOOK(): string {
  return portone.store.webhookUrl ?? '';
}

let shown = { toss: 0, solapi: 0, portone: 0 };
const tick = setInterval(() => {
  for (const r of toss.requests.slice(shown.toss)) process.stdout.write(`toss    ${r.method} ${r.path}\n`);
  for (const r of solapi.requests.slice(shown.solapi)) process.stdout.write(`solapi  ${r.method} ${r.path}${r.query.size ? `?${r.query}` : ''}\n`);
  for (const r of portone.calls.slice(shown.portone)) process.stdout.write(`portone ${r.method} ${r.path}\n`);
  shown = { toss: toss.requests.length, solapi: solapi.requests.length, portone: portone.calls.length };
}, 500);

const stop = async () => {
  clearInterval(tick);
  front.close();
  await Promise.all([toss.close(), solapi.close(), portone.close()]);
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
