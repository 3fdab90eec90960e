/**
 * Reliability harness: the real server as child processes (`node bin/sunap.js serve`), a real
 * HTTPS receiver with a fault policy, a client for every surface the workload uses, a TCP
 * proxy that can make the database unreachable, and the invariant check that reads the
 * database after a run (docs/reliability.md lists what each check proves).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { ServerResponse } from 'node:http';
import { createConnection, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { Kysely } from 'kysely';
import { migrate, openDatabase, type Database, type DatabaseHandle } from '../../src/db/index.js';
import { createPlatform, createStore } from '../../src/gateway/merchants.js';
import { JOBS } from '../../src/app.js';
import { createAccount, grantPoints } from '../../src/invoicing/accounts.js';
import { kstCompact } from '../../src/platform/kst.js';
import { apiSign, SecretBox } from '../../src/platform/crypto.js';
import { freePort, TEST_SECRET_KEY } from '../helpers/app.js';
import { childEnv } from '../helpers/process.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const STRESS = process.env.SUNAP_STRESS === '1';
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const LOG_DIR = join(ROOT, '.tmp', 'reliability');

export function rand(n: number): number {
  return Math.floor(Math.random() * n);
}
export function pick<T>(xs: readonly T[]): T {
  return xs[rand(xs.length)]!;
}
export function chance(p: number): boolean {
  return Math.random() < p;
}
/** A stable number from a string: fault policies decide per delivery, not per coin toss, so a drain always converges. */
export function hashNum(s: string): number {
  return createHash('sha256').update(s).digest().readUInt32BE(0);
}

// ---- the server as a child process ----------------------------------------------------------

export interface ServerOptions {
  name: string;
  databaseUrl: string;
  port?: number;
  /** Extra environment (SUNAP_JOB_LEASE_MS, SUNAP_OUTBOUND_TIMEOUT_MS, ...). */
  env?: Record<string, string>;
}

/**
 * One `sunap serve` process. `restart()` starts a new process on the same port and database
 * (what a supervisor does after a crash); `kill()` is SIGKILL: no shutdown code runs.
 */
export class ServerProcess {
  proc: ChildProcess | null = null;
  port = 0;
  starts = 0;
  kills = 0;
  private exited: Promise<void> = Promise.resolve();
  private log: WriteStream;
  private tailLines: string[] = [];
  /** Lines on stderr that look like errors (level ≥ 50 or a stack). */
  readonly errors: string[] = [];

  constructor(readonly opts: ServerOptions) {
    mkdirSync(LOG_DIR, { recursive: true });
    // One file per server and test process: runs going on at the same time keep their own logs.
    this.log = createWriteStream(join(LOG_DIR, `${opts.name}-${process.pid}.log`), { flags: 'w' });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get alive(): boolean {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.alive) return;
    if (!this.port) this.port = this.opts.port ?? (await freePort());
    const env = childEnv({
      DATABASE_URL: this.opts.databaseUrl, PORT: String(this.port), HOST: '127.0.0.1', SUNAP_SECRET_KEY: TEST_SECRET_KEY,
      SUNAP_PUBLIC_URL: `http://127.0.0.1:${this.port}`, SUNAP_JOB_POLL_MS: '50', SUNAP_JOB_LEASE_MS: '2000',
      SUNAP_OUTBOUND_TIMEOUT_MS: '1500', LOG_LEVEL: 'warn', ...this.opts.env,
    });
    this.starts++;
    this.log.write(`\n==== start #${this.starts} at ${new Date().toISOString()}\n`);
    const proc = spawn(process.execPath, [join(ROOT, 'bin', 'sunap.js'), 'serve'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    const keep = (chunk: Buffer) => {
      this.log.write(chunk);
      for (const line of chunk.toString().split('\n')) {
        if (!line) continue;
        this.tailLines.push(line);
        if (/"level":(50|60)|Error:|\bat .+:\d+:\d+/.test(line)) this.errors.push(line);
      }
      if (this.tailLines.length > 60) this.tailLines.splice(0, this.tailLines.length - 60);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    this.exited = new Promise((r) => proc.once('exit', () => r()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!this.alive) throw new Error(`${this.opts.name} exited during start:\n${this.tail()}`);
      const ok = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`${this.opts.name} did not become ready:\n${this.tail()}`);
      await sleep(50);
    }
  }

  /** SIGKILL, as a crash or the OOM killer would: nothing of the shutdown path runs. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.kills++;
    this.log.write(`\n==== SIGKILL at ${new Date().toISOString()}\n`);
    this.proc!.kill('SIGKILL');
    await this.exited;
  }

  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }

  /** SIGTERM and wait (the graceful path), SIGKILL after 20 s. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.proc!.kill('SIGTERM');
    const t = setTimeout(() => this.proc?.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(t);
  }

  tail(): string {
    return this.tailLines.join('\n');
  }

  async close(): Promise<void> {
    await this.stop();
    await new Promise((r) => this.log.end(r));
  }
}

// ---- a receiver with faults -----------------------------------------------------------------

/** A status; 'hang' (no answer); 'reset' (connection destroyed); or a status after a delay (a slow merchant). */
export type Reaction = number | 'hang' | 'reset' | { after: number; status: number };

export interface Delivery {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  json: any;
  at: number;
  reaction: Reaction;
  /** Delivery number (webhooks) or TRANS_SEQNO (callbacks): what the policy counts by. */
  key: string;
  /** How many requests with this key arrived, this one included. */
  nth: number;
}

/**
 * The merchant's HTTPS server (certificate from the test CA that test/run.mjs hands to Node
 * through NODE_EXTRA_CA_CERTS). `policy` decides each answer: a status (3xx comes with a
 * Location on this same receiver, which must never be followed), 'hang' (no answer), or
 * 'reset' (the connection is destroyed after the request arrived).
 */
export class FaultReceiver {
  readonly deliveries: Delivery[] = [];
  private readonly counts = new Map<string, number>();
  private readonly hung = new Map<ServerResponse, Delivery>();
  private server!: HttpsServer;
  policy: (d: Omit<Delivery, 'reaction'>) => Reaction = () => 200;
  url = '';

  async start(): Promise<this> {
    const dir = process.env.SUNAP_TEST_TLS_DIR;
    if (!dir) throw new Error('SUNAP_TEST_TLS_DIR is not set: run the tests with npm test');
    this.server = createHttpsServer({ key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.crt')) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let json: any = null;
        try {
          json = JSON.parse(raw);
        } catch {}
        const path = (req.url ?? '').split('?')[0]!;
        const key = String(req.headers['x-service-delivery'] ?? json?.TRANS_SEQNO ?? path);
        const nth = (this.counts.get(key) ?? 0) + 1;
        this.counts.set(key, nth);
        const d = { path, headers: req.headers, raw, json, at: Date.now(), key, nth };
        const reaction = path === '/elsewhere' ? 200 : this.policy(d);
        const delivery = { ...d, reaction };
        this.deliveries.push(delivery);
        if (reaction === 'hang') {
          this.hung.set(res, delivery);
          res.on('close', () => this.hung.delete(res));
          return;
        }
        if (reaction === 'reset') {
          req.socket.destroy();
          return;
        }
        if (typeof reaction === 'object') {
          setTimeout(() => {
            if (res.destroyed) return;
            delivery.reaction = reaction.status;
            res.writeHead(reaction.status, { 'content-type': 'application/json' }).end('{}');
          }, reaction.after);
          return;
        }
        if (reaction >= 300 && reaction < 400) res.setHeader('location', `${this.url}/elsewhere`);
        res.writeHead(reaction, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `https://localhost:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  /** Answers every hung request (200 unless told otherwise); a request whose caller gave up stays 'hang'. */
  release(status = 200): void {
    for (const [res, d] of this.hung) {
      if (res.destroyed || res.socket?.destroyed) continue;
      d.reaction = status;
      res.writeHead(status).end('{}');
    }
    this.hung.clear();
  }

  byPath(path: string): Delivery[] {
    return this.deliveries.filter((d) => d.path === path);
  }

  async waitFor(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await sleep(25);
    }
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

// ---- a TCP proxy in front of PostgreSQL --------------------------------------------------

/**
 * Stands between the service and PostgreSQL so the test can make the database unreachable
 * for this service only (the machine's cluster is shared): `down()` closes the listener and
 * cuts every connection, `up()` listens again on the same port.
 */
export class TcpProxy {
  private server: NetServer | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}

  async up(): Promise<void> {
    if (this.server) return;
    if (!this.port) this.port = await freePort();
    const server = createNetServer((client) => {
      const upstream = createConnection(this.target);
      this.sockets.add(client);
      this.sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((r, j) => server.once('error', j).listen(this.port, '127.0.0.1', () => r()));
    this.server = server;
  }

  async down(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    this.sockets.clear();
    if (s) await new Promise((r) => s.close(r));
  }
}

// ---- the fixture: merchants and accounts written straight into the database ---------------------

export interface AccountFixture {
  accountId: string;
  email: string;
  password: string;
  storeCode: string;
  granted: number;
}

export interface Fixture {
  databaseUrl: string;
  store: DatabaseHandle;
  db: Kysely<Database>;
  platformCode: string;
  apiKey: string;
  storeCode: string;
  accounts: AccountFixture[];
}

/** Migrates the database and creates one platform, two stores and an account per store with points. */
export async function createFixture(databaseUrl: string, points: number[]): Promise<Fixture> {
  const store = openDatabase(databaseUrl, { poolSize: 4 });
  await migrate(store.db);
  const box = new SecretBox(Buffer.from(TEST_SECRET_KEY, 'hex'));
  const now = Date.now();
  const { platformCode, apiKey } = await createPlatform(store.db, box, now, { name: '신뢰성 플랫폼' });
  const accounts: AccountFixture[] = [];
  let storeCode = '';
  for (const [i, p] of points.entries()) {
    const s = await createStore(store.db, now, { platformCode, name: `신뢰성 학원 ${i + 1}`, ceoName: '김대표', bizRegNum: '1234567890', tel: '0212345678' });
    // The scenarios post the card form and count the card network's charges: these stores take cards by key-in.
    await store.db.insertInto('store_processors').values({ store_code: s.storeCode, processor: 'sandbox', way: 'key-in', methods: '["CARD"]', updated_at: now }).execute();
    if (i === 0) storeCode = s.storeCode;
    const email = `rel-${i}-${randomBytes(3).toString('hex')}@example.com`;
    const password = 'correct horse battery';
    const a = await createAccount(store.db, now, { email, password, storeCode: s.storeCode });
    if (p > 0) await grantPoints(store.db, now, { email, amount: p, memo: 'reliability' });
    accounts.push({ accountId: a.accountId, email, password, storeCode: s.storeCode, granted: p });
  }
  return { databaseUrl, store, db: store.db, platformCode, apiKey, storeCode, accounts };
}

// ---- the client ----------------------------------------------------------------------------

export type Net = 'down' | 'unknown';
/** A request that got no HTTP answer: 'down' (refused: never reached a server), 'unknown' (it may have run). */
export class NoAnswer extends Error {
  constructor(readonly kind: Net, message: string) {
    super(message);
  }
}

export interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** Talks to one or more instances; every call picks one unless told which. */
export class Client {
  offsetSeconds = 0;
  private readonly tokens = new Map<string, string>();
  /**
   * Logins in flight, one per account: concurrent workers share it as a client shares its
   * session. Separate simultaneous logins of one email each take a slot of its sign-in throttle
   * before the password is checked (docs/security.md), so a burst of them may be refused with -29.
   */
  private readonly logins = new Map<string, Promise<string>>();
  requests = 0;
  constructor(readonly fx: Fixture, readonly urls: () => string[]) {}

  url(): string {
    const u = this.urls();
    if (u.length === 0) throw new NoAnswer('down', 'no instance is up');
    return pick(u);
  }

  async send(method: string, path: string, body?: unknown, opts: { url?: string; headers?: Record<string, string>; form?: boolean; timeoutMs?: number } = {}): Promise<Answer> {
    const base = opts.url ?? this.url();
    const headers: Record<string, string> = { ...opts.headers };
    let payload: string | undefined;
    if (body !== undefined) {
      headers['content-type'] = opts.form ? 'application/x-www-form-urlencoded' : 'application/json';
      payload = opts.form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body);
    }
    this.requests++;
    let res: Response;
    try {
      res = await fetch(base + path, { method, headers, body: payload, redirect: 'manual', signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      throw new NoAnswer(cause?.code === 'ECONNREFUSED' ? 'down' : 'unknown', `${method} ${path}: ${cause?.code ?? (err as Error).message}`);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new NoAnswer('unknown', `${method} ${path}: body lost (${(err as Error).message})`);
    }
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, text, headers: res.headers };
  }

  nowMs(): number {
    return Date.now() + this.offsetSeconds * 1000;
  }

  /** Signed gateway call (TRANS_AT from this machine's own clock, as a client signs). */
  gw(op: 'requestPayment' | 'searchPayment' | 'requestPaymentCancel', body: Record<string, unknown>, opts: { url?: string; storeCode?: string } = {}): Promise<Answer> {
    const b: Record<string, unknown> = { PLATFORM_CODE: this.fx.platformCode, STORE_CODE: opts.storeCode ?? this.fx.storeCode, ...body };
    b.TRANS_AT = kstCompact(Date.now());
    b.API_SIGN = apiSign(String(b.TRANS_SEQNO), String(b.PLATFORM_CODE), String(b.STORE_CODE), String(b.TRANS_AT), this.fx.apiKey);
    return this.send('POST', `/api/${op}`, b, { url: opts.url });
  }

  async token(a: AccountFixture, url?: string): Promise<string> {
    const t = this.tokens.get(a.accountId);
    if (t) return t;
    const inFlight = this.logins.get(a.accountId);
    if (inFlight) return inFlight;
    const login = this.login(a, url).finally(() => this.logins.delete(a.accountId));
    this.logins.set(a.accountId, login);
    return login;
  }

  private async login(a: AccountFixture, url?: string): Promise<string> {
    const r = await this.send('POST', '/app/v1/auth/login', { email: a.email, password: a.password, loginType: 'EMAIL' }, { url });
    // The database may be down: the workload treats that like any request without an answer.
    if (r.status >= 500) throw new NoAnswer('unknown', `login: ${r.status}`);
    if (r.body?.result_code !== 0) throw new Error(`login failed: ${r.text}`);
    this.tokens.set(a.accountId, r.body.result_data.accessToken);
    return r.body.result_data.accessToken;
  }

  /** Invoicing call with the account's token; logs in again when the token expired (the clock moves): 200 / -2, or -1. */
  async app(a: AccountFixture, method: string, path: string, body?: unknown, opts: { url?: string } = {}): Promise<Answer> {
    for (let i = 0; ; i++) {
      const token = await this.token(a, opts.url);
      const r = await this.send(method, path, body, { url: opts.url, headers: { 'x-access-token': token } });
      const code = (r.body as { result_code?: unknown } | null)?.result_code;
      if ((code === -1 || code === -2) && i === 0) {
        this.tokens.delete(a.accountId);
        continue;
      }
      return r;
    }
  }

  sandboxPay(transSeqNo: string, storeCode: string, cardNumber?: string, url?: string): Promise<Answer> {
    return this.send('POST', `/sandbox/payments/${encodeURIComponent(transSeqNo)}/pay`, {
      PLATFORM_CODE: this.fx.platformCode, STORE_CODE: storeCode, ...(cardNumber ? { cardNumber } : {}),
    }, { url });
  }

  /** The customer submits the payment page's form (urlencoded POST to /checkout/pay). */
  pagePay(redirectUrl: string, cardNumber: string, url?: string): Promise<Answer> {
    const link = new URL(redirectUrl);
    return this.send('POST', '/checkout/pay', {
      tid: link.searchParams.get('tid')!, token: link.searchParams.get('token')!, cardNumber, expiry: '12/39',
      birth: '900101', cardPassword: '00', installment: '00',
    }, { url, form: true });
  }

  async advanceClock(seconds: number, url?: string): Promise<void> {
    const r = await this.send('POST', '/sandbox/clock', { advanceSeconds: Math.max(0, Math.ceil(seconds)) }, { url });
    if (r.status !== 200) throw new Error(`clock advance failed: ${r.text}`);
    this.offsetSeconds = r.body.offsetSeconds;
  }

  async refreshClock(url?: string): Promise<void> {
    const r = await this.send('GET', '/sandbox/clock', undefined, { url });
    if (r.status === 200) this.offsetSeconds = r.body.offsetSeconds;
  }
}

// ---- the mixed workload ----------------------------------------------------------------------

export const CONFIRM_PATH = '/confirm';
export const WEBHOOK_PATH = '/webhook';
export const WEBHOOK_SECRET = 'whsec_reliability_0123456789';

export const GOOD_CARDS = ['4242424242424242', '5555555555554444'];
const CARD_MIX = [...GOOD_CARDS, ...GOOD_CARDS, ...GOOD_CARDS, '4000000000000002', '4000000000000119', '4000000000000259'];

type Outcome = 'ok' | 'refused' | 'failed' | Net;

/** What the clients were told: each answered success must be found in the database afterwards. */
export interface Ledger {
  payments: Map<string, { created: Outcome; approvedAnswer: boolean; canceledAnswer: boolean; storeCode: string; redirect?: string; amount: number }>;
  batches: { tag: string; members: number; outcome: Outcome; account: number; status?: number }[];
  requestIds: Map<string, { account: number; answers: Outcome[] }>;
  invoicePaid: Set<string>;
  invoiceCanceled: Set<string>;
  invoiceDeleted: Set<string>;
  resends: { sendOk: number; answered: number };
  ops: Record<string, number>;
  noAnswer: { down: number; unknown: number };
  serverErrors: string[];
}

export function newLedger(): Ledger {
  return {
    payments: new Map(), batches: [], requestIds: new Map(), invoicePaid: new Set(), invoiceCanceled: new Set(),
    invoiceDeleted: new Set(), resends: { sendOk: 0, answered: 0 }, ops: {}, noAnswer: { down: 0, unknown: 0 }, serverErrors: [],
  };
}

let counter = 0;
const uid = (p: string) => `${p}${Date.now().toString(36)}${(counter++).toString(36)}${randomBytes(3).toString('hex')}`.toUpperCase();

function phone(): string {
  // Mostly ordinary numbers; some that the sandbox refuses (0000), that have no ALIMTALK
  // (9999), whose ALIMTALK delivery fails (8888), and where the provider errors once (7777)
  // or accepts without answering (5555).
  const tail = pick(['', '', '', '', '', '', '', '0000', '9999', '8888', '7777', '5555']);
  const body = `010${String(10_000_000 + rand(89_999_999))}`;
  return tail ? body.slice(0, 7) + tail : body;
}

export interface WorkloadOptions {
  client: Client;
  ledger: Ledger;
  receiverUrl: string;
  /** Chance per operation of moving the service clock (small steps; occasionally past the 60 s attempt staleness). */
  clockMoves?: boolean;
}

/**
 * One worker of the mixed workload: gateway payments paid through the sandbox or the page
 * form, cancels, invoice batches, requestId invoices (sometimes sent twice at once), invoice
 * payments, resends, invoice cancels and deletes. Runs until `stop()` says so.
 */
export async function workloadWorker(o: WorkloadOptions, stop: () => boolean): Promise<void> {
  const { client, ledger } = o;
  const fx = client.fx;
  const count = (op: string) => (ledger.ops[op] = (ledger.ops[op] ?? 0) + 1);
  const note = (r: Answer, what: string) => {
    if (r.status >= 500) ledger.serverErrors.push(`${what}: ${r.status} ${r.text.slice(0, 200)}`);
  };

  async function gatewayPayment(): Promise<void> {
    const seq = uid('RL');
    const amount = 1000 + rand(200) * 1000;
    const entry = { created: 'unknown' as Outcome, approvedAnswer: false, canceledAnswer: false, storeCode: fx.storeCode, amount, redirect: undefined as string | undefined };
    ledger.payments.set(seq, entry);
    count('requestPayment');
    const r = await client.gw('requestPayment', {
      TRANS_SEQNO: seq, APPROVAL_AMOUNT: String(amount), MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동',
      REQUEST_REASON: '수강료', CONFIRM_URL: `${o.receiverUrl}${CONFIRM_PATH}`, TEMP_VALUE: seq,
    });
    note(r, 'requestPayment');
    if (r.body?.result_data?.RESULT_CODE !== '0000') {
      entry.created = r.status >= 500 ? 'failed' : 'refused';
      return;
    }
    entry.created = 'ok';
    entry.redirect = r.body.result_data.REDIRECT_URL;
    for (let tries = 0; tries < 2; tries++) {
      const card = tries === 0 ? pick(CARD_MIX) : pick(GOOD_CARDS);
      let approved = false;
      if (chance(0.3)) {
        count('pagePay');
        const p = await client.pagePay(entry.redirect!, card);
        note(p, 'page pay');
        approved = p.status === 303;
      } else {
        count('sandboxPay');
        const p = await client.sandboxPay(seq, fx.storeCode, card);
        note(p, 'sandbox pay');
        approved = p.body?.approved === true || p.body?.APPROVE_STATUS === 'APPROVE_COMPLETE';
      }
      if (approved) {
        entry.approvedAnswer = true;
        break;
      }
    }
    if (entry.approvedAnswer && chance(0.35)) {
      count('cancel');
      const c = await client.gw('requestPaymentCancel', { TRANS_SEQNO: seq, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: String(amount), MOBILE_NO: '01012345678' });
      note(c, 'cancel');
      if (c.body?.result_data?.RESULT_CODE === '0000') entry.canceledAnswer = true;
    }
  }

  function members(n: number) {
    return Array.from({ length: n }, (_, i) => {
      const m: Record<string, unknown> = { studentName: `학생${i + 1}`, studentPhone: phone() };
      if (chance(0.3)) m.guardianPhone = phone();
      return m;
    });
  }
  const channel = () => pick(['ALIMTALK', 'SMS', 'ALIMTALK_THEN_SMS']);

  async function batch(): Promise<void> {
    const ai = chance(0.8) ? 0 : 1;
    const n = 2 + rand(4);
    const tag = uid('B');
    const entry = { tag, members: n, outcome: 'unknown' as Outcome, account: ai, status: undefined as number | undefined };
    ledger.batches.push(entry);
    count('bill');
    const body: Record<string, unknown> = {
      reason: '수강료', description: tag, amount: 10_000 + rand(100) * 100, members: members(n), sendChannel: channel(),
    };
    if (chance(0.7)) Object.assign(body, { webhookUrl: `${o.receiverUrl}${WEBHOOK_PATH}`, webhookSecret: WEBHOOK_SECRET });
    const r = await client.app(fx.accounts[ai]!, 'POST', '/app/v1/sales/bill', body);
    note(r, 'bill');
    entry.status = r.status;
    entry.outcome = r.body?.result_code === 0 ? 'ok' : r.status >= 500 ? 'failed' : 'refused';
  }

  async function requestIdBill(): Promise<void> {
    const ai = 0;
    const rid = uid('rid-').replace(/[^A-Za-z0-9_-]/g, '');
    const entry = { account: ai, answers: [] as Outcome[] };
    ledger.requestIds.set(rid, entry);
    const body = {
      requestId: rid, reason: '수강료', description: `rid ${rid}`, amount: 50_000, members: members(1), sendChannel: channel(),
      webhookUrl: `${o.receiverUrl}${WEBHOOK_PATH}`,
    };
    const one = async () => {
      count('billRequestId');
      try {
        const r = await client.app(fx.accounts[ai]!, 'POST', '/app/v1/sales/bill', body);
        note(r, 'bill requestId');
        entry.answers.push(r.body?.result_code === 0 ? 'ok' : r.status >= 500 ? 'failed' : 'refused');
      } catch (err) {
        if (!(err instanceof NoAnswer)) throw err;
        entry.answers.push(err.kind);
      }
    };
    await Promise.all(chance(0.4) ? [one(), one()] : [one()]);
  }

  async function someInvoice(ai: number, where: { status: 'PENDING' | 'DONE' | 'CANCELED'; sent?: boolean; paymentIssued?: boolean }) {
    let q = fx.db.selectFrom('invoices').select(['unique_id', 'trans_seqno', 'store_code', 'send_count'])
      .where('account_id', '=', fx.accounts[ai]!.accountId).where('status', '=', where.status).where('deleted_at', 'is', null);
    if (where.sent) q = q.where('send_count', '>', 0);
    if (where.paymentIssued) q = q.where('payment_id', 'is not', null);
    const rows = await q.orderBy('id', 'desc').limit(30).execute();
    return rows.length ? pick(rows) : undefined;
  }

  async function payInvoice(): Promise<void> {
    const inv = await someInvoice(0, { status: 'PENDING', paymentIssued: true });
    if (!inv) return;
    count('payInvoice');
    const r = await client.sandboxPay(inv.trans_seqno, inv.store_code, pick(GOOD_CARDS));
    note(r, 'invoice pay');
    if (r.body?.approved === true) ledger.invoicePaid.add(inv.unique_id);
  }

  async function resend(): Promise<void> {
    const a = fx.accounts[0]!;
    const ids = new Set<string>();
    for (let i = 0; i < 1 + rand(3); i++) {
      const inv = await someInvoice(0, { status: 'PENDING', sent: true });
      if (inv) ids.add(inv.unique_id);
    }
    if (ids.size === 0) return;
    count('resend');
    const r = await client.app(a, 'POST', '/app/v1/sales/bill/resend', { billIds: [...ids] });
    note(r, 'resend');
    if (r.body?.result_code === 0) {
      ledger.resends.answered++;
      ledger.resends.sendOk += (r.body.result_data as { resendResult: string }[]).filter((x) => x.resendResult === 'SUCCESS').length;
    }
  }

  async function cancelInvoice(): Promise<void> {
    const inv = await someInvoice(0, { status: 'DONE' });
    if (!inv) return;
    count('cancelInvoice');
    const r = await client.app(fx.accounts[0]!, 'PUT', `/app/v1/sales/bill/${inv.unique_id}`);
    note(r, 'invoice cancel');
    if (r.body?.result_code === 0 && r.body.result_data?.bill?.status === 'CANCELED') ledger.invoiceCanceled.add(inv.unique_id);
  }

  async function deleteInvoice(): Promise<void> {
    const inv = await someInvoice(0, { status: 'PENDING' });
    if (!inv) return;
    count('deleteInvoice');
    const r = await client.app(fx.accounts[0]!, 'DELETE', `/app/v1/sales/bill/${inv.unique_id}`);
    note(r, 'invoice delete');
    if (r.body?.result_code === 0) ledger.invoiceDeleted.add(inv.unique_id);
  }

  async function moveClock(): Promise<void> {
    count('clock');
    // Mostly small steps that pull callback retries in; sometimes past the 60 s after which an
    // open payment attempt counts as abandoned, while other payments are in flight.
    await client.advanceClock(chance(0.2) ? 61 + rand(60) : 5 + rand(20));
  }

  const ops: [number, () => Promise<void>][] = [
    [34, gatewayPayment], [18, batch], [9, requestIdBill], [16, payInvoice], [7, resend], [8, cancelInvoice], [3, deleteInvoice],
    [o.clockMoves ? 5 : 0, moveClock],
  ];
  const total = ops.reduce((s, [w]) => s + w, 0);
  while (!stop()) {
    let x = rand(total);
    const op = ops.find(([w]) => (x -= w) < 0)![1];
    try {
      await op();
    } catch (err) {
      if (err instanceof NoAnswer) {
        ledger.noAnswer[err.kind]++;
        if (err.kind === 'down') await sleep(100);
        continue;
      }
      throw err;
    }
  }
}

// ---- drain: let every retry, lease and stale attempt run out ---------------------------------

export interface Pending {
  jobs: number;
  leasedJobs: number;
  openAttempts: number;
  unsettledSends: number;
  undeliveredEvents: number;
  nextRunAt: number | null;
}

/** Housekeeping that always has its next run pending (the definitions' `housekeeping` flag): not work left over. */
export const HOUSEKEEPING: string[] = JOBS.filter((j) => j.housekeeping).map((j) => j.kind);

export async function pending(db: Kysely<Database>): Promise<Pending> {
  const jobs = await db.selectFrom('jobs').select(['run_at', 'lease_until']).where('status', '=', 'PENDING').where('kind', 'not in', HOUSEKEEPING).execute();
  const open = await db.selectFrom('payment_attempts').select('id').where('status', '=', 'OPEN').execute();
  const sends = await db.selectFrom('sends').select('id').where('status', 'in', ['WAITING', 'ACCEPTING']).execute();
  const events = await db.selectFrom('webhook_events').select('id').where('status', '!=', 'DELIVERED').execute();
  const wall = Date.now();
  return {
    jobs: jobs.length,
    leasedJobs: jobs.filter((j) => j.lease_until !== null && Number(j.lease_until) > wall).length,
    openAttempts: open.length,
    unsettledSends: sends.length,
    undeliveredEvents: events.length,
    nextRunAt: jobs.length ? Math.min(...jobs.map((j) => Number(j.run_at))) : null,
  };
}

/**
 * Runs the service until nothing is left to do: due retries are pulled in with the sandbox
 * clock, leases of killed workers expire on their own (real time), and payment attempts left
 * open by a kill are settled through the reconcile path (the customer or merchant retrying:
 * a pay, a cancel or a delete on that payment waits for the slot and reconciles it first).
 */
export async function drain(client: Client, timeoutMs = 90_000): Promise<{ rounds: number; clockAdvancedSeconds: number; reconciled: number }> {
  const db = client.fx.db;
  const until = Date.now() + timeoutMs;
  let advanced = 0;
  let reconciled = 0;
  for (let round = 1; ; round++) {
    await client.refreshClock();
    const p = await pending(db);
    if (p.jobs === 0 && p.openAttempts === 0 && p.unsettledSends === 0 && p.undeliveredEvents === 0) {
      return { rounds: round, clockAdvancedSeconds: advanced, reconciled };
    }
    if (Date.now() > until) throw new Error(`drain did not finish: ${JSON.stringify(p)}`);
    if (p.openAttempts > 0) {
      const open = await db.selectFrom('payment_attempts').innerJoin('payments', 'payments.id', 'payment_attempts.payment_id')
        .select(['payment_attempts.kind', 'payment_attempts.created_at', 'payments.trans_seqno', 'payments.store_code', 'payments.amount', 'payments.id as pid'])
        .where('payment_attempts.status', '=', 'OPEN').execute();
      const oldest = Math.min(...open.map((a) => Number(a.created_at)));
      const need = (oldest + 61_000 - client.nowMs()) / 1000;
      if (need > 0) {
        await client.advanceClock(need);
        advanced += Math.ceil(need);
      }
      for (const a of open) {
        reconciled++;
        if (a.kind === 'CANCEL') {
          await client.gw('requestPaymentCancel', { TRANS_SEQNO: a.trans_seqno, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: String(a.amount), MOBILE_NO: '01012345678' }, { storeCode: a.store_code });
        } else if (a.kind === 'DELETE') {
          const inv = await db.selectFrom('invoices').select(['unique_id', 'account_id']).where('payment_id', '=', a.pid).executeTakeFirst();
          const acc = client.fx.accounts.find((x) => x.accountId === inv?.account_id);
          if (inv && acc) await client.app(acc, 'DELETE', `/app/v1/sales/bill/${inv.unique_id}`);
        } else {
          await client.sandboxPay(a.trans_seqno, a.store_code, GOOD_CARDS[0]);
        }
      }
      continue;
    }
    if (p.nextRunAt !== null && p.leasedJobs === 0 && p.nextRunAt > client.nowMs()) {
      const s = (p.nextRunAt - client.nowMs()) / 1000 + 1;
      await client.advanceClock(s);
      advanced += Math.ceil(s);
    }
    await sleep(200);
  }
}

// ---- invariants ------------------------------------------------------------------------------

export interface InvariantReport {
  /** Individual checks evaluated (per account, payment, send, event, ...). */
  checked: number;
  violations: string[];
  figures: Record<string, number>;
}

const APPROVED_STATES = ['APPROVE_COMPLETE', 'CANCEL_COMPLETE', 'CANCEL_FAIL'];

/**
 * Everything the run must have kept, read from the database (and the receiver's log):
 * see docs/reliability.md for the list. Returns violations instead of throwing so a run
 * reports all of them at once.
 */
export async function checkInvariants(fx: Fixture, receiver: FaultReceiver, ledger: Ledger | null): Promise<InvariantReport> {
  const db = fx.db;
  const v: string[] = [];
  let checked = 0;
  const check = (ok: boolean, msg: () => string) => {
    checked++;
    if (!ok) v.push(msg());
  };

  const invoices = await db.selectFrom('invoices').selectAll().execute();
  const sends = await db.selectFrom('sends').selectAll().execute();
  const ledgerRows = await db.selectFrom('ledger').selectAll().execute();
  const wallets = await db.selectFrom('wallets').selectAll().execute();
  const payments = await db.selectFrom('payments').selectAll().execute();
  const attempts = await db.selectFrom('payment_attempts').selectAll().execute();
  const charges = await db.selectFrom('sandbox_card_charges').selectAll().execute();
  // Faults the sandbox provider injected (7777, 5555) are kept beside the messages, never listed.
  const messages = await db.selectFrom('sandbox_messages').selectAll().where('delivery_status', '!=', 'FAULT').execute();
  const events = await db.selectFrom('webhook_events').selectAll().execute();
  const jobs = await db.selectFrom('jobs').selectAll().execute();
  const outbound = await db.selectFrom('outbound_attempts').selectAll().execute();

  // 1. Every accepted invoice ends SENT or FAILED, every send settled, no job left or dead.
  for (const inv of invoices) {
    check(inv.send_status === 'SENT' || inv.send_status === 'FAILED', () => `invoice ${inv.unique_id} ended ${inv.send_status}`);
  }
  for (const s of sends) check(s.status === 'SUCCESS' || s.status === 'FAILED', () => `send ${s.id} ended ${s.status}`);
  for (const j of jobs) {
    // Housekeeping always has its next run waiting; it must just never have died.
    const ok = HOUSEKEEPING.includes(j.kind) ? j.status !== 'DEAD' : j.status === 'DONE';
    check(ok, () => `job ${j.kind} ${j.id} ended ${j.status} after ${j.attempts} attempts: ${j.last_error}`);
  }

  // 2. Points: balance = ledger sum = grants − settled sends; one reservation and at most one refund per send, of the right size.
  const byAccount = new Map<string, typeof ledgerRows>();
  for (const r of ledgerRows) byAccount.set(r.account_id, [...(byAccount.get(r.account_id) ?? []), r]);
  for (const w of wallets) {
    const rows = byAccount.get(w.account_id) ?? [];
    const sum = rows.reduce((s, r) => s + Number(r.delta), 0);
    const grants = rows.filter((r) => r.kind === 'GRANT').reduce((s, r) => s + Number(r.delta), 0);
    const settled = sends.filter((s) => s.account_id === w.account_id).reduce((s, x) => s + Number(x.cost_settled ?? 0), 0);
    check(Number(w.balance) === sum, () => `account ${w.account_id}: balance ${w.balance} ≠ ledger sum ${sum}`);
    check(Number(w.balance) === grants - settled, () => `account ${w.account_id}: balance ${w.balance} ≠ grants ${grants} − settled sends ${settled}`);
    check(Number(w.balance) >= 0, () => `account ${w.account_id}: negative balance ${w.balance}`);
  }
  const reserves = new Map<string, number[]>();
  const refunds = new Map<string, number[]>();
  for (const r of ledgerRows) {
    if (r.kind === 'RESERVE') reserves.set(r.ref!, [...(reserves.get(r.ref!) ?? []), Number(r.delta)]);
    if (r.kind === 'REFUND') refunds.set(r.ref!, [...(refunds.get(r.ref!) ?? []), Number(r.delta)]);
  }
  for (const s of sends) {
    const res = reserves.get(s.id) ?? [];
    check(res.length === 1 && res[0] === -Number(s.cost_reserved), () => `send ${s.id}: reservations ${JSON.stringify(res)} for ${s.cost_reserved}`);
    const ref = refunds.get(s.id) ?? [];
    const due = Number(s.cost_reserved) - Number(s.cost_settled ?? 0);
    check(due === 0 ? ref.length === 0 : ref.length === 1 && ref[0] === due, () => `send ${s.id} (${s.status}): refunds ${JSON.stringify(ref)}, due ${due}`);
  }

  // 3. A message at most once per send, and every accepted message is a send that says so.
  const sendById = new Map(sends.map((s) => [s.id, s]));
  const msgsBySend = new Map<string, typeof messages>();
  for (const m of messages) {
    const sendId = m.idempotency_key.replace(/:SMS$/, '');
    const s = sendById.get(sendId);
    check(!!s, () => `message ${m.id} under key ${m.idempotency_key} belongs to no send`);
    msgsBySend.set(sendId, [...(msgsBySend.get(sendId) ?? []), m]);
  }
  for (const s of sends) {
    const ms = msgsBySend.get(s.id) ?? [];
    check(ms.length <= 1, () => `send ${s.id}: ${ms.length} messages`);
    if (s.status === 'SUCCESS') {
      check(ms.length === 1 && ms[0]!.id === s.provider_message_id, () => `send ${s.id} SUCCESS with message ${s.provider_message_id}, outbox has ${ms.map((m) => m.id)}`);
      check(ms.length === 1 && ms[0]!.channel === s.channel_used, () => `send ${s.id}: used ${s.channel_used}, outbox ${ms.map((m) => m.channel)}`);
    } else {
      check(ms.length === 0, () => `send ${s.id} ${s.status} (${s.error_message}) but the provider accepted ${ms.length} message(s): sent and refunded`);
    }
  }
  for (const inv of invoices) {
    const ok = sends.filter((s) => Number(s.invoice_id) === Number(inv.id) && s.status === 'SUCCESS').length;
    check(Number(inv.send_count) === ok, () => `invoice ${inv.unique_id}: send_count ${inv.send_count}, successful sends ${ok}`);
  }

  // 4. A payment approved at most once, never charged without a record.
  const attemptsByPayment = new Map<string, typeof attempts>();
  for (const a of attempts) attemptsByPayment.set(a.payment_id, [...(attemptsByPayment.get(a.payment_id) ?? []), a]);
  const chargeByKey = new Map(charges.map((c) => [c.idempotency_key, JSON.parse(c.outcome) as { outcome: string; approvalNumber?: string }]));
  const attemptById = new Map(attempts.map((a) => [a.id, a]));
  for (const p of payments) {
    const as = attemptsByPayment.get(p.id) ?? [];
    check(!as.some((a) => a.status === 'OPEN'), () => `payment ${p.trans_seqno}: attempt left OPEN`);
    if (p.pay_path !== 'WEB') continue;
    const approvedAttempts = as.filter((a) => a.kind === 'APPROVE' && a.status === 'APPROVED');
    const isApproved = APPROVED_STATES.includes(p.state);
    check(approvedAttempts.length === (isApproved ? 1 : 0), () => `payment ${p.trans_seqno} ${p.state}: ${approvedAttempts.length} APPROVED attempts`);
    if (isApproved && approvedAttempts.length === 1) {
      const c = chargeByKey.get(approvedAttempts[0]!.id);
      check(c?.outcome === 'APPROVED' && c.approvalNumber === p.approval_number, () => `payment ${p.trans_seqno}: approval ${p.approval_number}, card network says ${JSON.stringify(c)}`);
      check(!chargeByKey.has(`void:${approvedAttempts[0]!.id}`), () => `payment ${p.trans_seqno} ${p.state}: the charge behind it was voided`);
    }
    const canceled = chargeByKey.get(`cancel:${p.id}`);
    check((p.state === 'CANCEL_COMPLETE') === (canceled?.outcome === 'CANCELED'), () => `payment ${p.trans_seqno} ${p.state}: card network cancel ${JSON.stringify(canceled)}`);
  }
  let voids = 0;
  for (const [key, c] of chargeByKey) {
    if (c.outcome !== 'APPROVED') continue;
    const a = attemptById.get(key);
    if (!a) {
      check(false, () => `card network approved ${key}, which is no attempt of ours`);
      continue;
    }
    const voided = chargeByKey.has(`void:${key}`);
    if (voided) voids++;
    check(a.status === 'APPROVED' || voided, () => `attempt ${key} (${a.status}) was charged at the card network and neither recorded nor voided`);
  }

  // 5. Events: every bill.paid/bill.canceled and every callback reached the receiver; one delivery number per event.
  const invById = new Map(invoices.map((i) => [Number(i.id), i]));
  for (const inv of invoices) {
    const p = payments.find((x) => x.id === inv.payment_id);
    const want = inv.status === 'PENDING' ? ['STORE_REQUEST', 'STORE_DELETE'] : inv.status === 'DONE' ? ['APPROVE_COMPLETE', 'CANCEL_FAIL'] : ['CANCEL_COMPLETE'];
    check(inv.status === 'PENDING' && !p ? true : !!p && want.includes(p.state), () => `invoice ${inv.unique_id} ${inv.status} but its payment is ${p?.state}`);
    if (!inv.webhook_url) continue;
    const ev = events.filter((e) => Number(e.invoice_id) === Number(inv.id)).map((e) => e.event).sort();
    const expect = inv.status === 'PENDING' ? [] : inv.status === 'DONE' ? ['bill.paid'] : ['bill.canceled', 'bill.paid'];
    check(JSON.stringify(ev) === JSON.stringify(expect), () => `invoice ${inv.unique_id} ${inv.status}: events ${ev}`);
  }
  const hooks = receiver.byPath(WEBHOOK_PATH);
  const hookByDelivery = new Map<string, Delivery[]>();
  for (const d of hooks) hookByDelivery.set(String(d.headers['x-service-delivery']), [...(hookByDelivery.get(String(d.headers['x-service-delivery'])) ?? []), d]);
  for (const e of events) {
    const got = hookByDelivery.get(String(e.id)) ?? [];
    check(got.some((d) => typeof d.reaction === 'number' && d.reaction >= 200 && d.reaction < 300), () => `webhook event ${e.id} (${e.event}) never answered 2xx at the receiver (${got.length} tries)`);
    check(got.every((d) => d.raw === e.body && d.headers['x-service-event'] === e.event), () => `delivery number ${e.id} carried more than one event or body`);
    check(e.status === 'DELIVERED', () => `webhook event ${e.id} is ${e.status}`);
    const inv = invById.get(Number(e.invoice_id));
    check(!!inv && JSON.parse(e.body).billId === inv.unique_id, () => `webhook event ${e.id} names another invoice`);
  }
  for (const key of hookByDelivery.keys()) check(events.some((e) => String(e.id) === key), () => `receiver got delivery ${key}, which is no event`);
  const callbacks = receiver.byPath(CONFIRM_PATH);
  const cbBySeq = new Map<string, Delivery[]>();
  for (const d of callbacks) cbBySeq.set(d.json?.TRANS_SEQNO, [...(cbBySeq.get(d.json?.TRANS_SEQNO) ?? []), d]);
  for (const p of payments) {
    if (!p.confirm_url || !APPROVED_STATES.includes(p.state) || !p.confirm_url.startsWith(receiver.url)) continue;
    const got = cbBySeq.get(p.trans_seqno) ?? [];
    check(got.some((d) => typeof d.reaction === 'number' && d.reaction >= 200 && d.reaction < 300), () => `callback for ${p.trans_seqno} never answered 2xx (${got.length} tries)`);
    check(got.every((d) => d.json?.APPROVAL_AMOUNT === String(p.amount) && d.json?.approvalNumber === p.approval_number), () => `callback for ${p.trans_seqno} carried other data`);
  }
  for (const seq of cbBySeq.keys()) {
    const p = payments.find((x) => x.trans_seqno === seq);
    check(!!p && APPROVED_STATES.includes(p.state), () => `callback for ${seq}, which is not an approved payment (${p?.state})`);
  }
  check(receiver.byPath('/elsewhere').length === 0, () => 'a redirect was followed');

  // 6. Every outbound attempt recorded: what the receiver saw vs outbound_attempts.
  const recorded = new Map<string, number>();
  for (const a of outbound) recorded.set(`${a.target}:${a.ref_id}`, (recorded.get(`${a.target}:${a.ref_id}`) ?? 0) + 1);
  let unrecorded = 0;
  const payByAny = new Map(payments.map((p) => [p.trans_seqno, p.id]));
  const seen = new Map<string, number>();
  for (const d of [...hooks, ...callbacks]) {
    const key = d.path === WEBHOOK_PATH ? `WEBHOOK:${d.headers['x-service-delivery']}` : `CALLBACK:${payByAny.get(d.json?.TRANS_SEQNO)}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const [key, n] of seen) {
    const r = recorded.get(key) ?? 0;
    if (n > r) unrecorded += n - r;
    check(r >= 1, () => `${key}: ${n} deliveries at the receiver, none recorded`);
  }
  for (const j of jobs) {
    if (j.kind !== 'gateway.callback' && j.kind !== 'invoicing.webhook') continue;
    const n = outbound.filter((a) => a.job_id === j.id).length;
    check(n <= j.attempts, () => `job ${j.id}: ${n} recorded attempts, ${j.attempts} claims`);
  }

  // 7. What the clients were told.
  if (ledger) {
    const bySeq = new Map(payments.map((p) => [p.trans_seqno, p]));
    for (const [seq, e] of ledger.payments) {
      const p = bySeq.get(seq);
      if (e.created === 'ok') check(!!p, () => `payment ${seq} answered 0000 but is not in the database`);
      // A refusal changed nothing; a 5xx is a failure the client cannot read (a lost commit acknowledgement, say).
      if (e.created === 'refused') check(!p, () => `payment ${seq} was refused but exists`);
      if (e.approvedAnswer) check(!!p && APPROVED_STATES.includes(p.state), () => `payment ${seq} answered approved but is ${p?.state}`);
      if (e.canceledAnswer) check(p?.state === 'CANCEL_COMPLETE', () => `payment ${seq} answered cancelled but is ${p?.state}`);
    }
    for (const b of ledger.batches) {
      const n = invoices.filter((i) => i.description === b.tag).length;
      if (b.outcome === 'ok') check(n === b.members, () => `batch ${b.tag} answered 0 with ${b.members} members; ${n} invoices exist`);
      if (b.outcome === 'refused') check(n === 0, () => `batch ${b.tag} answered ${b.status} but ${n} invoices exist`);
    }
    for (const [rid, e] of ledger.requestIds) {
      const n = invoices.filter((i) => i.request_id === rid).length;
      check(n <= 1, () => `requestId ${rid}: ${n} invoices`);
      if (e.answers.includes('ok')) check(n === 1, () => `requestId ${rid} answered 0 but ${n} invoices exist`);
      const own = invoices.find((i) => i.request_id === rid);
      if (own) {
        const initial = sends.filter((s) => Number(s.invoice_id) === Number(own.id) && s.send_type === 'INITIAL').length;
        check(initial === 1, () => `requestId ${rid}: ${initial} initial sends`);
      }
    }
    const byUnique = new Map(invoices.map((i) => [i.unique_id, i]));
    for (const u of ledger.invoicePaid) check(['DONE', 'CANCELED'].includes(byUnique.get(u)?.status ?? ''), () => `invoice ${u} answered paid but is ${byUnique.get(u)?.status}`);
    for (const u of ledger.invoiceCanceled) check(byUnique.get(u)?.status === 'CANCELED', () => `invoice ${u} answered cancelled but is ${byUnique.get(u)?.status}`);
    for (const u of ledger.invoiceDeleted) check(byUnique.get(u)?.deleted_at !== null, () => `invoice ${u} answered deleted but is not`);
  }

  return {
    checked,
    violations: v,
    figures: {
      invoices: invoices.length,
      sends: sends.length,
      messages: messages.length,
      payments: payments.length,
      approvedPayments: payments.filter((p) => APPROVED_STATES.includes(p.state)).length,
      canceledPayments: payments.filter((p) => p.state === 'CANCEL_COMPLETE').length,
      webhookEvents: events.length,
      webhookDeliveries: hooks.length,
      callbacks: callbacks.length,
      jobs: jobs.length,
      voidedCharges: voids,
      unrecordedDeliveries: unrecorded,
    },
  };
}

/** One line per violation (at most 40), for an assertion message. */
export function describeViolations(report: InvariantReport): string {
  const more = report.violations.length > 40 ? `\n… and ${report.violations.length - 40} more` : '';
  return report.violations.slice(0, 40).join('\n') + more;
}
