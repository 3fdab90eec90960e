import { after, before, describe } from 'node:test';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createPlatform, createStore } from '../../src/gateway/merchants.js';
import { kstCompact } from '../../src/platform/kst.js';
import { loadConfig } from '../../src/platform/config.js';
import type { CheckoutFactories } from '../../src/gateway/index.js';
import type { CardProcessor } from '../../src/ports/card-processor.js';
import type { MessagingProvider } from '../../src/ports/messaging.js';
import { apiSign } from '../../src/platform/crypto.js';
import { createLogger } from '../../src/platform/logging.js';
import { createTestDatabase, engines, type Engine } from './db.js';
import { freePort } from './process.js';

export const TEST_SECRET_KEY = '11'.repeat(32);

export { freePort };

/**
 * A second instance of the same service on the same database, as a second `sunap serve` is:
 * its own app, port and prepared statements, no job worker, its log discarded.
 */
export async function startSecondInstance(t: { databaseUrl: string }, env: Record<string, string> = {}): Promise<{ app: FastifyInstance; url: string }> {
  const port = await freePort();
  const config = loadConfig({
    DATABASE_URL: t.databaseUrl, PORT: String(port), SUNAP_SECRET_KEY: TEST_SECRET_KEY, SUNAP_PUBLIC_URL: `http://127.0.0.1:${port}`, ...env,
  });
  const app = await buildApp(config, { logger: createLogger('warn', new Writable({ write: (_c, _e, cb) => cb() })), runJobs: false });
  await app.listen({ port, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${port}` };
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

export interface TestApp {
  app: FastifyInstance;
  engine: Engine;
  url: string;
  databaseUrl: string;
  platformCode: string;
  apiKey: string;
  storeCode: string;
  /** Every log line the app wrote, for tests that look for leaked secrets. */
  logs: string[];
  /** Signs and sends a gateway call; fills TRANS_AT (wall-clock now, KST) and API_SIGN unless given. */
  gw(op: 'requestPayment' | 'searchPayment' | 'requestPaymentCancel', body: Record<string, unknown>, key?: string): Promise<{ status: number; body: any }>;
  /** Any HTTP call to the app: a JSON body (a string is sent as it is), JSON parsed from the answer when it is JSON. */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  /** Another platform (with its own key) or another store of this platform. */
  addPlatform(): Promise<{ platformCode: string; apiKey: string; storeCode: string }>;
  addStore(opts?: { cat?: boolean; keyIn?: boolean }): Promise<string>;
  /** Sets a store's way: the sandbox's card form (key-in) or the sandbox's window (checkout, the default). */
  setWay(storeCode: string, way: 'key-in' | 'checkout'): Promise<void>;
  /** The customer pays through the sandbox (same code path as the page). */
  pay(transSeqNo: string, cardNumber?: string, storeCode?: string): Promise<any>;
  close(): Promise<void>;
}

/** Builds the real app on a fresh database, listens on a free port, and creates one platform and store. */
/**
 * `keyIn`: the store takes cards by Sunap's card form (the sandbox card network, or Toss's
 * card-number API under SUNAP_CARD_PROCESSOR=toss-keyin) instead of the processor's window, the
 * default; on by default for a suite that scripts the card network (`processor`).
 */
export async function startApp(engine: Engine, env: Record<string, string> = {}, opts: { runJobs?: boolean; listen?: boolean; processor?: CardProcessor; messaging?: MessagingProvider; checkout?: CheckoutFactories; keyIn?: boolean } = {}): Promise<TestApp> {
  const database = await createTestDatabase(engine);
  const port = await freePort();
  const config = loadConfig({
    DATABASE_URL: database.url, PORT: String(port), SUNAP_SECRET_KEY: TEST_SECRET_KEY, SUNAP_JOB_POLL_MS: '50',
    SUNAP_PUBLIC_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      if (process.env.TEST_LOGS) process.stderr.write(chunk);
      cb();
    },
  });
  const app = await buildApp(config, { logger: createLogger(config.logLevel, sink), runJobs: opts.runJobs, processor: opts.processor, messaging: opts.messaging, checkout: opts.checkout });
  const now = app.sunap.clock.nowMs();
  const { platformCode, apiKey } = await createPlatform(app.sunap.database.db, app.sunap.box, now, { name: '테스트 플랫폼' });
  const { storeCode } = await createStore(app.sunap.database.db, now, { platformCode, name: '행복 피아노 학원', ceoName: '김대표', bizRegNum: '1234567890', tel: '0212345678' });
  const keyIn = opts.keyIn ?? !!opts.processor;
  const setWay = async (code: string, way: 'key-in' | 'checkout') => {
    // Under a key-in operator (toss-keyin) stores are key-in already; the sandbox's way is a store setting.
    if (config.cardProcessor.kind !== 'sandbox') return;
    await app.sunap.database.db.insertInto('store_processors')
      .values({ store_code: code, processor: 'sandbox', way, methods: JSON.stringify(['CARD', 'EASY_PAY', 'VIRTUAL_ACCOUNT']), updated_at: now })
      .onConflict((oc) => oc.column('store_code').doUpdateSet({ way })).execute();
  };
  if (keyIn) await setWay(storeCode, 'key-in');
  if (opts.listen !== false) await app.listen({ port, host: '127.0.0.1' });
  else await app.ready();
  const url = `http://127.0.0.1:${port}`;
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      redirect: 'manual',
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed as any, headers: res.headers, text };
  };
  return {
    app, engine, url, databaseUrl: database.url, platformCode, apiKey, storeCode, logs,
    gw(op, body, key = apiKey) {
      const b: Record<string, unknown> = { PLATFORM_CODE: platformCode, STORE_CODE: storeCode, ...body };
      // Clients sign with their own clock; the sandbox clock moves business time only.
      if (!('TRANS_AT' in body)) b.TRANS_AT = kstCompact(Date.now());
      if (!('API_SIGN' in body)) b.API_SIGN = apiSign(String(b.TRANS_SEQNO), String(b.PLATFORM_CODE), String(b.STORE_CODE), String(b.TRANS_AT), key);
      return send('POST', `/api/${op}`, b);
    },
    request: send,
    post: (path, body, headers) => send('POST', path, body, headers),
    async addPlatform() {
      const n = app.sunap.clock.nowMs();
      const p = await createPlatform(app.sunap.database.db, app.sunap.box, n, { name: '다른 플랫폼' });
      const s = await createStore(app.sunap.database.db, n, { platformCode: p.platformCode, name: '다른 상점' });
      return { ...p, storeCode: s.storeCode };
    },
    async addStore(o = {}) {
      const code = (await createStore(app.sunap.database.db, app.sunap.clock.nowMs(), { platformCode, name: '두번째 상점', cat: o.cat })).storeCode;
      if (o.keyIn ?? keyIn) await setWay(code, 'key-in');
      return code;
    },
    setWay,
    async pay(transSeqNo, cardNumber, sc = storeCode) {
      const r = await send('POST', `/sandbox/payments/${encodeURIComponent(transSeqNo)}/pay`, { PLATFORM_CODE: platformCode, STORE_CODE: sc, ...(cardNumber ? { cardNumber } : {}) });
      return r.body;
    },
    get: (path, headers) => send('GET', path, undefined, headers),
    async close() {
      await app.close();
      await database.drop();
    },
  };
}

/**
 * For a test that counts "today" or "this month" (KST) after making what it counts: run just
 * before midnight KST, the day would turn under it. With less than `withinMs` left of the day,
 * this moves the sandbox clock just past midnight first.
 */
export async function clearOfKstMidnight(t: TestApp, withinMs = 10 * 60_000): Promise<void> {
  const day = 86_400_000;
  const left = day - ((t.app.sunap.clock.nowMs() + 9 * 3_600_000) % day);
  if (left < withinMs) await t.app.sunap.clock.advance(Math.ceil(left / 1000) + 1);
}

let seq = 0;
export function seqNo(prefix = 'T'): string {
  return `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** A valid requestPayment body (without signing fields). */
export function paymentBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    TRANS_SEQNO: seqNo(), APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678', PAY_USER_NAME: '홍길동',
    REQUEST_REASON: '11월 수강료', CONFIRM_URL: 'https://127.0.0.1:9/callback', ...over,
  };
}

/** Runs `body` once per engine this run covers, as the suite `${name} [engine]`. */
export function forEachEngine(name: string, body: (engine: Engine) => void): void {
  for (const engine of engines) describe(`${name} [${engine}]`, () => body(engine));
}

/**
 * The app of the enclosing suite: started before its first test on a fresh database, closed
 * after its last. The handle reads through to the started app, so tests use it directly.
 */
export function withApp(engine: Engine, env: Record<string, string> = {}, opts: Parameters<typeof startApp>[2] = {}): TestApp {
  let started: TestApp | undefined;
  before(async () => {
    started = await startApp(engine, env, opts);
  });
  after(async () => started?.close());
  return new Proxy({} as TestApp, {
    get(_, key) {
      if (!started) throw new Error(`the ${engine} app starts in before(); read it inside a test or hook`);
      const v = (started as unknown as Record<string | symbol, unknown>)[key];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(started) : v;
    },
  });
}
