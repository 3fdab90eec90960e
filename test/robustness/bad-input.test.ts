/**
 * Bad input, property-based: every route gets bodies made from a valid one by mutation (wrong
 * types, missing and extra fields, nulls, huge and odd unicode strings, deep nesting, numbers
 * out of range, arrays for objects, other content types, broken JSON) and odd path and query
 * values. Every answer must be a documented envelope and code (never a 5xx), a refusal must
 * name the field, and a refused request must leave the database as it was.
 *
 * SUNAP_STRESS=1 runs each property many more times; FC_SEED=<n> replays a run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { kstCompact } from '../../src/platform/kst.js';
import { apiSign } from '../../src/platform/crypto.js';
import { forEachEngine, paymentBody, seqNo, startApp, type TestApp } from '../helpers/app.js';
import { billBody, newAccount, type Login } from '../invoicing/support.js';
import { dbSnapshot, raw, runs, type Res } from './support.js';

const BODY_RUNS = runs(100, 2000);
const URL_RUNS = runs(100, 2000);
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const MiB = 1024 * 1024;

// ---- generators -------------------------------------------------------------------------------

const NASTY_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\uD800', 'x\uDFFFy', '\uDC00\uD800', '\u202Eevil\u202C', '\u200F\u05E9\u05DC\u05D5\u05DD', '\u0645\u0631\u062D\u0628\u0627',
  '😀', '👨‍👩‍👧‍👦', 'e\u0301', '\uFEFF', '\r\n', '\t', '\u0007', '\u2028', '<script>alert(1)</script>', "' OR 1=1 --", '"; drop table payments; --',
  '../../etc/passwd', '%00', '${jndi:x}', '{{7*7}}', 'NaN', 'Infinity', '-Infinity', 'null', 'true', '-1', '0', '-0', '00', '1e308', '1e-7', '0x1F',
  '1.5', ' 12 ', '１２３', '٣', '9'.repeat(13), '9'.repeat(400), '2147483648', '-2147483649', '99999999999999999999', '01012345678\u0000', 'https://', 'javascript:alert(1)',
  'https://127.0.0.1:9/x', 'http://example.com', '__proto__', 'constructor',
];
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 4 }), loneSurrogate, fc.string({ maxLength: 4 })).map(([a, b, c]) => a + b + c) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 21, max: 20_000 }), fc.constantFrom('x', '가', '😀', '\u202E', '9', '\u0000')).map(([n, ch]) => ch.repeat(n)) },
);
const nastyNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, 0, -0, -1, 0.5, 1.5, 99.99, 100.5, 2 ** 31, 2 ** 31 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 5e-324, 1e21, 315360001),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const leaf = fc.oneof({ weight: 5, arbitrary: nastyString }, { weight: 4, arbitrary: nastyNumber }, { weight: 1, arbitrary: fc.boolean() }, { weight: 2, arbitrary: fc.constant(null) });
const nastyValue = fc.oneof(
  { weight: 8, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), leaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom([], {}, [[]], [{}], [null]) },
);
/** One bad character inside an otherwise valid value: the mutation most likely to slip past a schema. */
const POISON = fc.constantFrom('\u0000', '\uD800', '\uDFFF', '\u202E', '😀', '\u0007', '\u200B', '\n', '\uFFFF', '%00', '\\');
const extraKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'result_code', 'TRANS_SEQNO', 'id', 'account_id', ''));

type Key = string | number;
type Op =
  | { op: 'set'; path: Key[]; value: unknown }
  | { op: 'delete'; path: Key[] }
  | { op: 'extra'; at: Key[]; key: string; value: unknown }
  | { op: 'deep'; path: Key[]; depth: number; shape: 'array' | 'object' }
  | { op: 'poison'; path: Key[]; ch: string; at: number };
type Plan =
  | { kind: 'ops'; ops: Op[] }
  | { kind: 'whole'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'ctype'; contentType: string };

function pathsOf(v: unknown, prefix: Key[] = [], out: Key[][] = []): Key[][] {
  if (Array.isArray(v)) v.forEach((x, i) => { out.push([...prefix, i]); pathsOf(x, [...prefix, i], out); });
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) { out.push([...prefix, k]); pathsOf(x, [...prefix, k], out); }
  }
  return out;
}
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const BROKEN_JSON = [
  '', ' ', '{', '}', '{"a":', '{"a":1,}', "{'a':1}", 'nul', 'undefined', 'NaN', '{"a":NaN}', '{"a":Infinity}', '\u0000', '{"a":"\u0000"}',
  '{"a":1}{"b":2}', '[1,2', '"\\ud800"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '\uFEFF{}', '{"a":"\\u00"}',
  '{"a":01}', '{"a":1e99999}', '{"a":-}', 'true', '12', '"text"', '[]', '[{}]', 'null',
];

function planArb(template: Record<string, unknown>): fc.Arbitrary<Plan> {
  const paths = pathsOf(template);
  const containers: Key[][] = [[], ...paths.filter((p) => isObj(p.reduce<any>((o, k) => o[k], template)))];
  const path = fc.constantFrom(...paths);
  // Deep nesting also goes under a field the schema does not know, where no validator looks.
  const deepPath = fc.oneof(path, fc.constant(['unknownField'] as Key[]), fc.constant(['members', 0, 'extra'] as Key[]));
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant('set' as const), path, value: nastyValue }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), path }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('extra' as const), at: fc.constantFrom(...containers), key: extraKey, value: nastyValue }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('deep' as const), path: deepPath, depth: fc.integer({ min: 20, max: 20_000 }), shape: fc.constantFrom('array' as const, 'object' as const) }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('poison' as const), path, ch: POISON, at: fc.nat({ max: 80 }) }) },
  );
  return fc.oneof(
    { weight: 12, arbitrary: fc.array(op, { minLength: 1, maxLength: 3 }).map((ops) => ({ kind: 'ops' as const, ops })) },
    { weight: 1, arbitrary: fc.oneof(leaf, fc.array(nastyValue, { maxLength: 3 })).map((value) => ({ kind: 'whole' as const, value })) },
    { weight: 1, arbitrary: fc.constantFrom(...BROKEN_JSON).map((text) => ({ kind: 'text' as const, text })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/jsonx', 'APPLICATION/JSON')
        .map((contentType) => ({ kind: 'ctype' as const, contentType })),
    },
  );
}

const parentOf = (root: any, path: Key[]): any => {
  let o = root;
  for (const k of path.slice(0, -1)) {
    if (o === null || typeof o !== 'object') return undefined;
    o = o[k];
  }
  return o !== null && typeof o === 'object' ? o : undefined;
};
const setOwn = (o: any, k: Key, v: unknown) => Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

/** Applies the plan to a fresh valid body; `sign` recomputes API_SIGN unless the plan touched it. */
function render(valid: Record<string, unknown>, plan: Plan, opts: { form?: boolean; sign?: (b: Record<string, unknown>) => void } = {}): { text: string; contentType: string } {
  const encode = (v: unknown) => (opts.form ? formEncode(v) : JSON.stringify(v));
  const ct = opts.form ? 'application/x-www-form-urlencoded' : 'application/json';
  if (plan.kind === 'whole') return { text: JSON.stringify(plan.value) ?? 'null', contentType: 'application/json' };
  if (plan.kind === 'text') return { text: plan.text, contentType: opts.form && plan.text.startsWith('{') === false ? ct : 'application/json' };
  if (plan.kind === 'ctype') return { text: encode(valid), contentType: plan.contentType };
  const body = structuredClone(valid);
  const deep: string[] = [];
  let touchedSign = false;
  for (const o of plan.ops) {
    if (o.op === 'extra') {
      const target = o.at.length === 0 ? body : (parentOf(body, [...o.at, '_']) as any);
      // Generated values can be shared constants ({}, [[]]): insert copies, so a later op that
      // writes into this one cannot change the constant (or make it contain itself).
      if (isObj(target)) setOwn(target, o.key, structuredClone(o.value));
      continue;
    }
    const parent = parentOf(body, o.path);
    const last = o.path[o.path.length - 1]!;
    if (!parent) continue;
    if (o.path[0] === 'API_SIGN') touchedSign = true;
    if (o.op === 'set') setOwn(parent, last, structuredClone(o.value));
    else if (o.op === 'poison') {
      const v = parent[last];
      const str = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
      const at = str.length === 0 ? 0 : o.at % (str.length + 1);
      setOwn(parent, last, str.slice(0, at) + o.ch + str.slice(at));
    }
    else if (o.op === 'delete') {
      if (Array.isArray(parent) && typeof last === 'number') parent.splice(last, 1);
      else delete parent[last];
    } else {
      deep.push(o.shape === 'array' ? '['.repeat(o.depth) + '1' + ']'.repeat(o.depth) : '{"a":'.repeat(o.depth) + '1' + '}'.repeat(o.depth));
      setOwn(parent, last, `\u0001DEEP${deep.length - 1}\u0001`);
    }
  }
  if (opts.sign && !touchedSign) opts.sign(body);
  let text = encode(body);
  deep.forEach((d, i) => {
    text = text.replace(opts.form ? encodeURIComponent(`\u0001DEEP${i}\u0001`) : JSON.stringify(`\u0001DEEP${i}\u0001`), opts.form ? encodeURIComponent(d) : d);
  });
  return { text, contentType: ct };
}

/** A form body as a browser would send it; nested values are flattened to strings, arrays repeat the field. */
function formEncode(v: unknown): string {
  if (!isObj(v)) return String(v);
  const parts: string[] = [];
  const enc = (s: string) => {
    try {
      return encodeURIComponent(s);
    } catch {
      return '%ED%A0%80'; // a lone surrogate, as broken UTF-8
    }
  };
  for (const [k, x] of Object.entries(v)) {
    for (const item of Array.isArray(x) ? x : [x]) parts.push(`${enc(k)}=${enc(item === null ? '' : typeof item === 'object' ? JSON.stringify(item) : String(item))}`);
  }
  return parts.join('&');
}

/** A path or query value: URL-encoded odd strings, broken percent-encoding, very long values. */
const oddSegment = fc.oneof(
  // Encoded values stay under 4000 characters: Node refuses a request line over 16 KiB (431) before any route.
  { weight: 4, arbitrary: nastyString.map((s) => { try { return encodeURIComponent(s); } catch { return 'x%ED%A0%80y'; } }).filter((s) => s.length <= 4000) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '%', '%zz', '%E0%A4%A', '%C0%AF', '%00', 'a%00b', '%FF', '%ED%A0%80', '..', '.', '%2e%2e', '%2F', 'a%2Fb', '%20', '+', '1e308', '-1', '0', '00', '1.5',
      '99999999999999999999', '9007199254740993', 'NaN', '2026-13', '2026-1', '0000-00', '0000-01', '9999-12', '2026-02', '1', '100', '101', '%EF%BC%91', '1%20', 'a;b', 'a,b',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 1300 }).map((n) => 'A'.repeat(n)) },
);

/** fc.assert with a short report: counterexamples here can be megabytes of nesting. */
async function property<T>(arb: fc.Arbitrary<T>, predicate: (v: T) => Promise<void>, numRuns: number): Promise<void> {
  const out = await fc.check(fc.asyncProperty(arb, predicate), { numRuns, seed });
  if (!out.failed) return;
  const seen = new WeakSet<object>();
  const short = JSON.stringify(out.counterexample, (_k, v) => {
    if (v !== null && typeof v === 'object') {
      if (seen.has(v)) return '[seen]';
      seen.add(v);
    }
    return typeof v === 'string' && v.length > 120 ? `${v.slice(0, 120)}…(${v.length} chars)` : v;
  });
  const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
  throw new Error(`failed after ${out.numRuns} runs (replay: FC_SEED=${out.seed}, path ${out.counterexamplePath})\n  counterexample: ${short.slice(0, 1200)}\n  ${cause}`);
}

// ---- what an answer may be ------------------------------------------------------------------

/** `FIELD: reason`, `a.b[0].c: reason`, `PLATFORM_CODE, STORE_CODE: reason`, `body: reason`. */
const NAMES_FIELD = /^[A-Za-z_][\w-]*(\[\d+\])*(\.[A-Za-z_][\w-]*(\[\d+\])*)*(, [A-Za-z_][\w-]*)*: \S/;
const GATEWAY_CODES = new Set(['0000', '3001', '4001', '4002', '4003', '4004', '4005', '4006', '4007', '4008', '4009', '5001']);
/** The invoicing error table: result_code → HTTP statuses (413 for a body over the limit). */
const APP_CODES = new Map<number, number[]>([
  [0, [200]], [-1, [401]], [-2, [401]], [-3, [401]], [-4, [403]], [-10, [404]], [-20, [400, 413]], [-21, [409]], [-22, [400]], [-23, [400]], [-24, [409]], [-29, [429]],
]);

type Outcome = 'ok' | 'refused';
type Surface = 'gateway' | 'app' | 'page' | { sandbox: (body: any) => Outcome };

function json(r: Res): void {
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/, 'answers JSON');
  assert.ok(r.body !== undefined && r.body !== null && typeof r.body === 'object', 'a JSON object');
}

function gatewayOutcome(r: Res): Outcome {
  json(r);
  const d = r.body.result_data;
  if (r.status === 200) {
    assert.equal(r.body.result_code, 0);
    assert.ok(GATEWAY_CODES.has(d?.RESULT_CODE), `documented RESULT_CODE, got ${d?.RESULT_CODE}`);
    if (d.RESULT_CODE === '0000') return 'ok';
    assert.match(d.RESULT_MSG, NAMES_FIELD);
    return 'refused';
  }
  assert.ok(r.status === 400 || r.status === 413, `HTTP 200, 400 or 413, got ${r.status}`);
  assert.equal(r.body.result_code, -1);
  assert.equal(d?.RESULT_CODE, '4002');
  assert.match(d.RESULT_MSG, /^(body|path): \S/);
  return 'refused';
}

function appOutcome(r: Res): Outcome {
  json(r);
  const code = r.body.result_code;
  assert.ok(APP_CODES.has(code), `documented result_code, got ${code}`);
  assert.ok(APP_CODES.get(code)!.includes(r.status), `result_code ${code} with HTTP ${r.status}`);
  assert.equal(typeof r.body.result_msg, 'string');
  if (code === 0) return 'ok';
  assert.equal(r.body.result_data, null);
  // A rate limit is about the caller, not a field.
  if (code !== -29) assert.match(r.body.result_msg, NAMES_FIELD);
  return 'refused';
}

function pageOutcome(r: Res): Outcome {
  assert.ok([200, 303, 400, 404, 409, 413, 415, 429].includes(r.status), `a documented page status, got ${r.status}`);
  if (r.status === 303) return 'ok';
  assert.match(r.headers.get('content-type') ?? '', /^text\/html/, 'answers HTML');
  assert.match(r.text, /^<!doctype html>/i);
  return 'refused';
}

function outcome(surface: Surface, r: Res): Outcome {
  assert.ok(r.status < 500, `never a 5xx, got ${r.status}`);
  if (surface === 'gateway') return gatewayOutcome(r);
  if (surface === 'app') return appOutcome(r);
  if (surface === 'page') return pageOutcome(r);
  if (r.status === 200 && r.body && typeof r.body === 'object' && !('result_code' in r.body)) return surface.sandbox(r.body);
  return appOutcome(r);
}

// ---- the suites ---------------------------------------------------------------------------------

forEachEngine('bad input, property-based', (engine) => {
  let t: TestApp;
  let a: Login;
  let loginTarget: Login;
  let existing: { seq: string; tid: string; token: string };
  let bill: { uniqueId: string; id: number; transSeqNo: string };
  let ip = 0;
  // Every call comes from its own address (X-Forwarded-For, trusted here), so the per-address
  // rate limits answer 429 only where a test asks for it. Those addresses are not loopback, so
  // the sandbox routes are opened to them (SUNAP_SANDBOX_OPEN).
  const from = () => ({ 'x-forwarded-for': `198.18.${(++ip >> 8) & 255}.${ip & 255}` });

  before(async () => {
    t = await startApp(engine, { SUNAP_TRUST_PROXY: '1', SUNAP_SANDBOX_OPEN: 'true' }, { runJobs: false });
    a = await newAccount(t, { points: 50_000_000 });
    loginTarget = await newAccount(t);
    const seq = seqNo('BAD');
    const r = await t.gw('requestPayment', paymentBody({ TRANS_SEQNO: seq }));
    const u = new URL(r.body.result_data.REDIRECT_URL);
    existing = { seq, tid: u.searchParams.get('tid')!, token: u.searchParams.get('token')! };
    assert.equal((await t.post('/app/v1/sales/bill', billBody(), a.h)).body.result_code, 0);
    const b = (await t.get('/app/v1/sales/bill?size=1', a.h)).body.result_data.bills[0];
    bill = { uniqueId: b.uniqueId, id: b.id, transSeqNo: b.transSeqNo };
  });
  after(async () => t?.close());

  /** One call: its answer must be documented, and a refusal must change nothing. */
  async function probe(name: string, surface: Surface, describeInput: () => string, send: () => Promise<Res>): Promise<void> {
    const before = await dbSnapshot(t);
    const r = await send();
    let o: Outcome;
    try {
      o = outcome(surface, r);
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}\n  sent: ${describeInput()}\n  answer: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    }
    if (o === 'refused') {
      assert.deepEqual(await dbSnapshot(t), before, `${name}: a refused call changed the database\n  sent: ${describeInput()}\n  answer: ${r.text.slice(0, 300)}`);
    }
  }

  const gwSign = (b: Record<string, unknown>) => {
    if ([b.TRANS_SEQNO, b.PLATFORM_CODE, b.STORE_CODE, b.TRANS_AT].every((x) => typeof x === 'string')) {
      b.API_SIGN = apiSign(b.TRANS_SEQNO as string, b.PLATFORM_CODE as string, b.STORE_CODE as string, b.TRANS_AT as string, t.apiKey);
    }
  };
  const signed = (b: Record<string, unknown>) => {
    const out = { PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_AT: kstCompact(Date.now()), ...b };
    gwSign(out);
    return out;
  };

  interface BodyRoute {
    name: string;
    surface: Surface;
    method?: string;
    path: () => string;
    valid: () => Record<string, unknown>;
    sign?: boolean;
    form?: boolean;
    auth?: boolean;
    /** Keeps a mutation from doing something the suite cannot undo (moving the clock). */
    tame?: (text: string) => string;
  }

  const sandboxPay = (body: any): Outcome => {
    assert.equal(typeof body.approved, 'boolean');
    return body.approved ? 'ok' : 'refused';
  };
  const sandboxOk = (): Outcome => 'ok';

  const bodyRoutes: BodyRoute[] = [
    {
      name: 'POST /api/requestPayment', surface: 'gateway', path: () => '/api/requestPayment', sign: true,
      valid: () => signed(paymentBody({
        TRANS_SEQNO: seqNo('BADP'), orderType: 'SHOP', RETURN_DISPLAY_YN: 'Y', RETURN_URL: 'https://shop.example.com/done?x=1',
        TEMP_VALUE: 'order-1', INFO_MESSAGE: '안내', USER_ID: 'user-1',
        ITEMS: [{ name: '레슨', unitPrice: 100000 }, { name: '교재', unitPrice: 14000, qty: 2, discountAmount: 0, discountUnit: 'AMOUNT', taxType: 'TAX_FREE', vatRateBps: 1000, publisher: '출판사', imageUrl: 'https://img.example.com/a.png' }],
      })),
    },
    { name: 'POST /api/searchPayment', surface: 'gateway', path: () => '/api/searchPayment', sign: true, valid: () => signed({ TRANS_SEQNO: existing.seq }) },
    {
      name: 'POST /api/requestPaymentCancel', surface: 'gateway', path: () => '/api/requestPaymentCancel', sign: true,
      valid: () => signed({ TRANS_SEQNO: existing.seq, REQUEST_TYPE: 'CANCEL', APPROVAL_AMOUNT: '128000', MOBILE_NO: '01012345678', CANCEL_REASON: '고객 요청' }),
    },
    { name: 'POST /app/v1/auth/login', surface: 'app', path: () => '/app/v1/auth/login', valid: () => ({ email: loginTarget.email, password: 'not the password', loginType: 'EMAIL' }) },
    { name: 'POST /app/v1/auth/refresh', surface: 'app', path: () => '/app/v1/auth/refresh', valid: () => ({ refreshToken: `srt_${'x'.repeat(43)}` }) },
    {
      name: 'POST /app/v1/sales/bill (SAME)', surface: 'app', path: () => '/app/v1/sales/bill', auth: true,
      valid: () => billBody({
        sendChannel: 'ALIMTALK_THEN_SMS', billTemplateId: null, relatedSubject: '피아노', etc: '메모',
        items: [{ name: '레슨', price: 100000 }, { name: '교재', price: 14000, qty: 2, discountAmount: 0, discountUnit: 'AMOUNT', type: 'book' }],
        members: [
          { studentName: '홍길동', studentPhone: '01012345678', guardianPhone: '01098765432', studentBirthDate: '2015-01-01', classroomId: 3 },
          { studentName: '김철수', studentPhone: '01011112222', guardianPhone: null, studentBirthDate: null, classroomId: 'A-1' },
        ],
      }),
    },
    {
      name: 'POST /app/v1/sales/bill (INDIVIDUAL, requestId, webhook)', surface: 'app', path: () => '/app/v1/sales/bill', auth: true,
      valid: () => ({
        templateType: 'INDIVIDUAL', requestId: seqNo('req-').replace(/[^A-Za-z0-9_-]/g, ''), reason: '11월 수강료', description: '안내',
        sendChannel: 'SMS', webhookUrl: 'https://127.0.0.1:9/webhook', webhookSecret: 'whsec_0123456789abcdef',
        members: [{ studentName: '홍길동', studentPhone: '01012345678' }],
        recipientItems: [{ studentName: '홍길동', studentPhone: '01012345678', amount: 50000, items: [{ name: '레슨', price: 50000 }], reason: '개별 사유', description: '개별 안내' }],
      }),
    },
    { name: 'POST /app/v1/sales/bill/resend', surface: 'app', path: () => '/app/v1/sales/bill/resend', auth: true, valid: () => ({ billIds: [bill.uniqueId, bill.id] }) },
    {
      name: 'POST /sandbox/payments/:TRANS_SEQNO/pay', surface: { sandbox: sandboxPay }, path: () => `/sandbox/payments/${existing.seq}/pay`,
      valid: () => ({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, cardNumber: '4000000000000002', installmentMonth: '00' }),
    },
    {
      name: 'POST /sandbox/terminal-payments', surface: { sandbox: sandboxOk }, path: () => '/sandbox/terminal-payments',
      valid: () => ({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, TRANS_SEQNO: seqNo('TERM'), APPROVAL_AMOUNT: '5000', MOBILE_NO: '01012345678', PAY_PATH: 'KIOSK' }),
    },
    {
      name: 'POST /sandbox/clock', surface: { sandbox: sandboxOk }, path: () => '/sandbox/clock', valid: () => ({ advanceSeconds: 0 }),
      // A valid advance would move the clock under the rest of the suite: keep it at 0.
      tame: (text) => text.replace(/"advanceSeconds":([1-9]\d*)([,}])/g, '"advanceSeconds":0$2'),
    },
    {
      name: 'POST /checkout/pay (card form)', surface: 'page', path: () => '/checkout/pay', form: true,
      valid: () => ({ tid: existing.tid, token: existing.token, cardNumber: '4000 0000 0000 0002', expiry: '12/39', birth: '900101', cardPassword: '00', installment: '00' }),
    },
  ];

  for (const route of bodyRoutes) {
    test(`${route.name}: mutated bodies get a documented answer and change nothing when refused`, async () => {
      const template = route.valid();
      await property(planArb(template), async (plan) => {
        const valid = route.valid();
        const rendered = render(valid, plan, { form: route.form, sign: route.sign ? gwSign : undefined });
        const { contentType } = rendered;
        const text = route.tame ? route.tame(rendered.text) : rendered.text;
        const headers = { ...from(), ...(route.auth ? a.h : {}) };
        await probe(route.name, route.surface, () => `${contentType} ${text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text}`,
          () => raw(t, route.method ?? 'POST', route.path(), { text, contentType, headers }));
      }, BODY_RUNS);
    });
  }

  interface UrlRoute {
    name: string;
    surface: Surface;
    method: string;
    url: (v: (string | null)[]) => string;
    arity: number;
    auth?: boolean;
    body?: () => string;
  }
  const q = (pairs: [string, string | null][]) => {
    const s = pairs.filter(([, v]) => v !== null).map(([k, v]) => `${k}=${v}`).join('&');
    return s ? `?${s}` : '';
  };
  const id = (v: (string | null)[]) => v[0] ?? '';
  const urlRoutes: UrlRoute[] = [
    { name: 'GET /app/v1/sales/bill?page&size&month', surface: 'app', method: 'GET', arity: 3, auth: true, url: (v) => `/app/v1/sales/bill${q([['page', v[0]!], ['size', v[1]!], ['month', v[2]!]])}` },
    { name: 'GET /app/v1/sales/bill?page=…&page=… (repeated)', surface: 'app', method: 'GET', arity: 2, auth: true, url: (v) => `/app/v1/sales/bill?page=${v[0] ?? '1'}&page=${v[1] ?? '2'}&size=${v[0] ?? '1'}` },
    { name: 'GET /app/v1/sales/summary?month', surface: 'app', method: 'GET', arity: 1, auth: true, url: (v) => `/app/v1/sales/summary${q([['month', v[0]!]])}` },
    { name: 'GET /app/v1/sales/bill/:id', surface: 'app', method: 'GET', arity: 1, auth: true, url: (v) => `/app/v1/sales/bill/${id(v)}` },
    { name: 'DELETE /app/v1/sales/bill/:id', surface: 'app', method: 'DELETE', arity: 1, auth: true, url: (v) => `/app/v1/sales/bill/${id(v)}` },
    { name: 'PUT /app/v1/sales/bill/:id', surface: 'app', method: 'PUT', arity: 1, auth: true, url: (v) => `/app/v1/sales/bill/${id(v)}` },
    { name: 'POST /app/v1/sales/bill/:id/refresh-status', surface: 'app', method: 'POST', arity: 1, auth: true, url: (v) => `/app/v1/sales/bill/${id(v)}/refresh-status` },
    { name: 'GET /app/v1/sales/public/bill/:transSeqNo', surface: 'app', method: 'GET', arity: 1, url: (v) => `/app/v1/sales/public/bill/${id(v)}` },
    { name: 'GET /pay/:transSeqNo (public invoice page)', surface: 'page', method: 'GET', arity: 1, url: (v) => `/pay/${id(v)}` },
    { name: 'GET /checkout?tid&token (payment page)', surface: 'page', method: 'GET', arity: 2, url: (v) => `/checkout${q([['tid', v[0]!], ['token', v[1]!]])}` },
    { name: 'GET /checkout?tid=<real>&token=<odd>', surface: 'page', method: 'GET', arity: 1, url: (v) => `/checkout?tid=${existing.tid}&token=${id(v)}` },
    {
      name: 'POST /sandbox/payments/:TRANS_SEQNO/pay (odd TRANS_SEQNO)', surface: { sandbox: sandboxPay }, method: 'POST', arity: 1, url: (v) => `/sandbox/payments/${id(v)}/pay`,
      body: () => JSON.stringify({ PLATFORM_CODE: t.platformCode, STORE_CODE: t.storeCode, cardNumber: '4000000000000002' }),
    },
    { name: 'GET /sandbox/messages?phone&limit', surface: { sandbox: sandboxOk }, method: 'GET', arity: 2, url: (v) => `/sandbox/messages${q([['phone', v[0]!], ['limit', v[1]!]])}` },
    { name: 'GET /sandbox/outbox?phone', surface: 'page', method: 'GET', arity: 1, url: (v) => `/sandbox/outbox${q([['phone', v[0]!]])}` },
  ];

  for (const route of urlRoutes) {
    test(`${route.name}: odd path and query values get a documented answer`, async () => {
      // "." and ".." as a path segment are resolved by the client (another route altogether).
      const segment = route.url(['x']).includes('?') ? oddSegment : oddSegment.filter((s) => !/^(\.|%2e){1,2}$/i.test(s));
      const values = fc.array(fc.option(segment, { freq: 6 }), { minLength: route.arity, maxLength: route.arity });
      await property(values, async (v) => {
        const path = route.url(v);
        const body = route.body?.();
        await probe(route.name, route.surface, () => `${route.method} ${path.length > 200 ? `${path.slice(0, 200)}… (${path.length} chars)` : path}`,
          () => raw(t, route.method, path, { text: body, contentType: body ? 'application/json' : undefined, headers: { ...from(), ...(route.auth ? a.h : {}) } }));
      }, URL_RUNS);
    });
  }

  test('GET /app/v1/points/me: odd access tokens get -1 (401 when empty, 200 when present but unknown)', async () => {
    const token = fc.oneof(fc.string({ unit: 'binary-ascii', maxLength: 300 }), fc.constantFrom('', ' ', 'sat_', `sat_${'A'.repeat(43)}`, 'x'.repeat(201), 'null', '\t'))
      .map((s) => s.replace(/[^\x20-\x7e\t]/g, '')); // what an HTTP header can carry
    await property(token, async (tok) => {
      const r = await raw(t, 'GET', '/app/v1/points/me', { headers: { 'x-access-token': tok } });
      // HTTP trims a header value: blank is no token at all.
      assert.equal(r.status, tok.trim() === '' ? 401 : 200, r.text);
      assert.equal(r.body.result_code, -1, r.text);
      assert.match(r.body.result_msg, NAMES_FIELD);
    }, URL_RUNS);
  });

  test('bodies just above the 1 MiB limit get 413 in the envelope; just below, an ordinary answer', async () => {
    const big = (n: number) => JSON.stringify({ pad: 'x'.repeat(n - 10) }); // {"pad":"…"} is n bytes
    assert.equal(big(1000).length, 1000);
    const gatewayPaths = ['/api/requestPayment', '/api/searchPayment', '/api/requestPaymentCancel'];
    const appPaths = ['/app/v1/auth/login', '/app/v1/auth/refresh', '/app/v1/sales/bill', '/app/v1/sales/bill/resend', `/sandbox/payments/${existing.seq}/pay`, '/sandbox/terminal-payments', '/sandbox/clock'];
    const before = await dbSnapshot(t);
    for (const p of gatewayPaths) {
      const over = await raw(t, 'POST', p, { text: big(MiB + 1), contentType: 'application/json' });
      assert.equal(over.status, 413, `${p}: ${over.text}`);
      assert.deepEqual(over.body, { result_code: -1, result_msg: over.body.result_msg, result_data: { RESULT_CODE: '4002', RESULT_MSG: over.body.result_data.RESULT_MSG } });
      assert.match(over.body.result_data.RESULT_MSG, /^body: /);
      const under = await raw(t, 'POST', p, { text: big(MiB), contentType: 'application/json' });
      assert.equal(under.status, 200, `${p}: ${under.text.slice(0, 200)}`);
      assert.equal(under.body.result_data.RESULT_CODE, '4002');
    }
    for (const p of appPaths) {
      const over = await raw(t, 'POST', p, { text: big(MiB + 1), contentType: 'application/json', headers: a.h });
      assert.equal(over.status, 413, `${p}: ${over.text}`);
      assert.equal(over.body.result_code, -20);
      assert.equal(over.body.result_data, null);
      assert.match(over.body.result_msg, /^body: /);
      const under = await raw(t, 'POST', p, { text: big(MiB), contentType: 'application/json', headers: a.h });
      assert.equal(under.status, 400, `${p}: ${under.text.slice(0, 200)}`);
      assert.equal(under.body.result_code, -20);
    }
    // The card form is small: its limit is 16 KiB, and the answer is a page.
    const form = await raw(t, 'POST', '/checkout/pay', { text: `tid=${existing.tid}&token=${existing.token}&pad=${'x'.repeat(16 * 1024)}`, contentType: 'application/x-www-form-urlencoded' });
    assert.equal(form.status, 413);
    assert.match(form.headers.get('content-type') ?? '', /^text\/html/);
    const jsonForm = await raw(t, 'POST', '/checkout/pay', { text: big(MiB + 1), contentType: 'application/json' });
    assert.equal(jsonForm.status, 413);
    assert.match(jsonForm.headers.get('content-type') ?? '', /^text\/html/);
    assert.deepEqual(await dbSnapshot(t), before);
  });

  test('malformed percent-encoding and over-long path segments: the envelope of the surface, not a framework error', async () => {
    const gw = await raw(t, 'POST', '/api/searchPayment%zz', { text: '{}', contentType: 'application/json' });
    assert.equal(gw.status, 400, gw.text);
    assert.equal(gw.body.result_code, -1);
    assert.equal(gw.body.result_data.RESULT_CODE, '4002');
    assert.match(gw.body.result_data.RESULT_MSG, /^path: /);
    for (const path of ['/app/v1/sales/bill/%E0%A4%A', `/app/v1/sales/bill/${'A'.repeat(1001)}`, '/app/v1/sales/public/bill/%C0', `/sandbox/payments/${'9'.repeat(1001)}/pay`]) {
      const r = await raw(t, path.startsWith('/sandbox') ? 'POST' : 'GET', path, { headers: a.h, text: path.startsWith('/sandbox') ? '{}' : undefined, contentType: 'application/json' });
      assert.equal(r.status, 400, `${path.slice(0, 60)}: ${r.text}`);
      assert.deepEqual(r.body, { result_code: -20, result_msg: r.body.result_msg, result_data: null });
      assert.match(r.body.result_msg, /^path: /);
    }
    for (const path of ['/pay/%E0%A4%A', `/pay/${'A'.repeat(1001)}`]) {
      const page = await raw(t, 'GET', path);
      assert.equal(page.status, 400, page.text);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(page.headers.get('cache-control'), 'no-store');
    }
  });

  test('a JSON body nested deeper than 32 levels is refused before any handler sees it', async () => {
    const before = await dbSnapshot(t);
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const bill = JSON.stringify({ ...billBody(), requestId: 'deep-nesting-1' }).replace(/}$/, `,"unknown":${nest(100_000)}}`);
    const r = await raw(t, 'POST', '/app/v1/sales/bill', { text: bill, contentType: 'application/json', headers: a.h });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { result_code: -20, result_msg: 'body: is nested more than 32 levels deep', result_data: null });
    const gw = await raw(t, 'POST', '/api/requestPayment', { text: `{"ITEMS":${nest(33)}}`, contentType: 'application/json' });
    assert.equal(gw.status, 400);
    assert.equal(gw.body.result_data.RESULT_MSG, 'body: is nested more than 32 levels deep');
    // 32 levels, and brackets inside strings, are fine.
    const ok = await raw(t, 'POST', '/app/v1/sales/bill', { text: JSON.stringify({ ...billBody({ reason: '[[[[{{{{' }) }).replace(/}$/, `,"unknown":${nest(31)}}`), contentType: 'application/json', headers: a.h });
    assert.equal(ok.body.result_code, 0, ok.text);
    assert.equal((await dbSnapshot(t))['invoices:PENDING:WAITING:live'], (before['invoices:PENDING:WAITING:live'] ?? 0) + 1);
  });
});
