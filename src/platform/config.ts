import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { loadCardProcessor, loadMessaging, loadPortoneApiUrl, secretKeyWeakness, type CardProcessorSettings, type MessagingSettings } from './providers.js';

export type Mode = 'sandbox' | 'live';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  mode: Mode;
  publicUrl: string;
  paymentPageUrl: string;
  publicPayPageUrl: string;
  /** 32-byte master key that encrypts API keys and webhook secrets at rest. */
  secretKey: Buffer;
  /** Where the master key came from: the variable, the sandbox's key file, or generated now (sandbox). */
  secretKeySource: 'env' | 'file' | 'generated';
  /** The operator's card processor (sandbox, toss or toss-keyin) and its settings: the fallback of stores without their own. */
  cardProcessor: CardProcessorSettings;
  /** PortOne's API (SUNAP_PORTONE_API_URL; the fake in a rehearsal), for the operator's keys and every store's own. */
  portoneApiUrl: string;
  /** The messaging provider (sandbox or solapi) and its settings. */
  messaging: MessagingSettings;
  /** What the operator should fix although the service can run (a weak sandbox key); logged at start. */
  warnings: string[];
  allowPrivateTargets: boolean;
  signMaxSkewSeconds: number;
  logLevel: string;
  /** Send-point price of one message per channel (README, "Configuration"). */
  costs: { ALIMTALK: number; SMS: number };
  /**
   * Which X-Forwarded-For hops to believe (Fastify's trustProxy): false (none, the socket's
   * address is the client), a number of proxies in front, or the proxies' addresses/CIDRs.
   */
  trustProxy: false | number | string[];
  /**
   * SQLite: concurrent write transactions share one COMMIT, so one fsync (src/db/index.ts,
   * GroupCommitSqliteDriver); false: one fsync per commit (SUNAP_SQLITE_GROUP_COMMIT).
   */
  sqliteGroupCommit: boolean;
  /**
   * PostgreSQL: connections this instance's pool opens at most (SUNAP_PG_POOL_SIZE). Several
   * instances share the server's max_connections, so it is the operator's to size.
   */
  pgPoolSize: number;
  /** How often the job worker looks for due jobs, in milliseconds. */
  jobPollMs: number;
  /** How long a claimed job stays leased to one worker, in milliseconds. */
  jobLeaseMs: number;
  /** Jobs one instance runs at once (deliveries waiting on merchants mostly). */
  jobConcurrency: number;
  /** A store's callbacks and webhooks running at once over all instances: one store's slow receivers cannot hold every slot. */
  jobStoreConcurrency: number;
  /** All stores of one platform together, the same way: many stores of one platform cannot hold every slot kept for fairness. */
  jobPlatformConcurrency: number;
  /** Outbound attempts (and their answers) are kept this many days; the deliveries stay. */
  deliveryRetentionDays: number;
  /** Time limit of one outbound call (callback, webhook, messaging provider), in milliseconds. */
  outboundTimeoutMs: number;
  /** Login attempts per client address per minute (0: no per-address limit; the per-email throttle always applies). */
  loginRateLimit: number;
  /**
   * Limits on slow and greedy clients (docs/security.md, "Slow clients"): the whole request
   * (headers and body) within requestTimeoutMs, its headers within headersTimeoutMs, an idle
   * kept-alive connection closed after keepAliveTimeoutMs, at most maxConnections open at once.
   */
  http: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number };
  /** Bearer token /metrics asks for (SUNAP_METRICS_TOKEN); null: /metrics is open to whoever reaches the port. */
  metricsToken: string | null;
  /** Sandbox routes answer callers on any address, not only loopback (SUNAP_SANDBOX_OPEN). */
  sandboxOpen: boolean;
  /**
   * ALIMTALK messages carry the short payment link too (SUNAP_ALIMTALK_SHORT_LINK), for a
   * template approved with it (docs/going-live.md, "The ALIMTALK template"); off: the full link.
   */
  alimtalkShortLink: boolean;
  /** The store whose card payments buy send points in the console (docs/console.md, "Points"); null: none named. */
  rechargeStoreCode: string | null;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name}: must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${name}: must be between ${min} and ${max}, got ${n}`);
  return n;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new ConfigError(`${name}: must be true or false, got "${raw}"`);
}

function urlVar(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : raw.trim();
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ConfigError(`${name}: must be an absolute http(s) URL, got "${value}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ConfigError(`${name}: must be an absolute http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

function storeCodeVar(env: Env, name: string): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw new ConfigError(`${name}: must be a store code (letters, digits, _ or -), got "${raw}"`);
  return raw;
}

/**
 * SUNAP_TRUST_PROXY: empty/false, a hop count, or a comma-separated list of proxy addresses
 * and CIDRs. `true` would believe every X-Forwarded-For hop, so any client could choose its
 * own address and escape the per-address limits: it is refused with what to set instead.
 */
export function trustProxyVar(env: Env): Config['trustProxy'] {
  const raw = env.SUNAP_TRUST_PROXY?.trim() ?? '';
  const name = 'SUNAP_TRUST_PROXY';
  if (raw === '' || ['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes'].includes(raw.toLowerCase())) {
    throw new ConfigError(`${name}: "true" would trust every X-Forwarded-For hop, so any client could set its own address; set the number of proxies in front of Sunap (e.g. 1) or their addresses (e.g. 10.0.0.5,10.1.0.0/16)`);
  }
  if (/^\d+$/.test(raw)) {
    const n = Number(raw);
    if (n > 10) throw new ConfigError(`${name}: a hop count must be between 1 and 10, got ${n}`);
    return n;
  }
  const list = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  for (const p of list) {
    const [addr, bits, extra] = p.split('/');
    const v = isIP(addr ?? '');
    const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (v === 6 ? 128 : 32));
    if (v === 0 || !okBits || extra !== undefined) {
      throw new ConfigError(`${name}: must be a number of proxies (e.g. 1) or a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.5,10.1.0.0/16), got "${p}"`);
    }
  }
  const everyone = coversEveryAddress(list);
  if (everyone) {
    throw new ConfigError(`${name}: the list covers every ${everyone} address, so any client could set its own address as "true" would; list only the proxies in front of Sunap (e.g. 10.0.0.5,10.1.0.0/16) or set their number (e.g. 1)`);
  }
  return list;
}

/** An IPv4 or IPv6 address (as isIP accepts it) as a number, with its width in bits. */
function addressNumber(addr: string): { n: bigint; width: 32 | 128 } {
  if (isIP(addr) === 4) return { n: addr.split('.').reduce((acc, o) => (acc << 8n) | BigInt(o), 0n), width: 32 };
  let text = addr.split('%')[0]!;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes its two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = addressNumber(v4[1]!).n;
    text = `${text.slice(0, -v4[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { n: all.reduce((acc, g) => (acc << 16n) | BigInt(`0x${g || '0'}`), 0n), width: 128 };
}

/**
 * Whether trusted ranges together hold every IPv4 or every IPv6 address (0.0.0.0/0, ::/0, or
 * pieces such as 0.0.0.0/1,128.0.0.0/1): then every hop is believed, as with "true". Fastify's
 * proxy check matches an IPv4 client against an IPv4-mapped range (::ffff:0:0/96 or narrower)
 * too, so those count for IPv4. Returns the family covered.
 */
export function coversEveryAddress(list: string[]): 'IPv4' | 'IPv6' | null {
  const MAPPED = 0xffffn << 32n;
  const v4: [bigint, bigint][] = [];
  const v6: [bigint, bigint][] = [];
  for (const entry of list) {
    const [addr, bits] = entry.split('/') as [string, string | undefined];
    const { n, width } = addressNumber(addr);
    const prefix = BigInt(bits ?? width);
    const size = 1n << (BigInt(width) - prefix);
    const start = n - (n % size);
    const end = start + size - 1n;
    if (width === 32) v4.push([start, end]);
    else {
      v6.push([start, end]);
      // A mapped range (::ffff:a.b.c.d/96 or narrower) is matched against IPv4 clients too.
      if (prefix >= 96n && start >= MAPPED && end <= MAPPED + 0xffffffffn) v4.push([start - MAPPED, end - MAPPED]);
    }
  }
  const covers = (ranges: [bigint, bigint][], last: bigint) => {
    let next = 0n;
    for (const [start, end] of ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      if (start > next) return false;
      if (end + 1n > next) next = end + 1n;
      if (next > last) return true;
    }
    return next > last;
  };
  if (covers(v6, (1n << 128n) - 1n)) return 'IPv6';
  if (covers(v4, (1n << 32n) - 1n)) return 'IPv4';
  return null;
}

/** Directory that holds the embedded database and the generated sandbox key. */
export function dataDir(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path && path !== ':memory:') return dirname(resolve(path));
  }
  return resolve('data');
}

type SecretKey = { key: Buffer; source: Config['secretKeySource'] };

/** `keyFile: false` (sunap doctor): a missing sandbox key file is not created; an ephemeral key stands in. */
function loadSecretKey(env: Env, mode: Mode, databaseUrl: string, keyFile: boolean): SecretKey | null {
  const raw = env.SUNAP_SECRET_KEY;
  if (raw !== undefined && raw !== '') return { key: parseSecretKey(raw.trim()), source: 'env' };
  if (mode === 'live') return null;
  // Sandbox: generate once and keep it beside the database, so restarts can still decrypt.
  const file = join(dataDir(databaseUrl), 'secret.key');
  if (existsSync(file)) return { key: parseSecretKey(readFileSync(file, 'utf8').trim(), file), source: 'file' };
  const key = randomBytes(32);
  if (!keyFile) return { key, source: 'generated' };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process (a second instance or the CLI) created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { key: parseSecretKey(readFileSync(file, 'utf8').trim(), file), source: 'file' };
    throw err;
  }
  return { key, source: 'file' };
}

function parseSecretKey(value: string, source = 'SUNAP_SECRET_KEY'): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const b = Buffer.from(value, 'base64');
  if (b.length === 32 && /^[A-Za-z0-9+/=_-]+$/.test(value)) return b;
  throw new ConfigError(`${source}: must be 32 bytes, as 64 hex characters or base64`);
}

/** pino's levels; anything else would make the logger throw at start with no variable named. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevelVar(env: Env): string {
  const raw = env.LOG_LEVEL?.trim() || 'info';
  const level = raw.toLowerCase();
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return level;
}

/**
 * The configuration from the environment; a bad value throws ConfigError naming the variable.
 * Live mode starts only with a real card processor and messaging provider, an https public
 * URL and a strong SUNAP_SECRET_KEY; every missing piece is named in one error.
 */
export function loadConfig(env: Env = process.env, opts: { keyFile?: boolean } = {}): Config {
  const port = intVar(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const databaseUrl = env.DATABASE_URL?.trim() || 'sqlite:./data/sunap.db';
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL: must be sqlite:PATH or postgres://..., got "${databaseUrl}"`);
  }
  const modeRaw = env.SUNAP_MODE?.trim() || 'sandbox';
  if (modeRaw !== 'sandbox' && modeRaw !== 'live') {
    throw new ConfigError(`SUNAP_MODE: must be sandbox or live, got "${modeRaw}"`);
  }
  const mode: Mode = modeRaw;
  const logLevel = logLevelVar(env);
  const publicUrl = urlVar(env, 'SUNAP_PUBLIC_URL', `http://localhost:${port}`);
  const paymentPageUrl = urlVar(env, 'SUNAP_PAYMENT_PAGE_URL', `${publicUrl}/checkout`);
  const publicPayPageUrl = urlVar(env, 'SUNAP_PUBLIC_PAY_PAGE_URL', `${publicUrl}/pay`);
  const problems: string[] = [];
  const warnings: string[] = [];
  const cardProcessor = loadCardProcessor(env, problems);
  const portoneApiUrl = loadPortoneApiUrl(env, problems);
  const messaging = loadMessaging(env, problems);
  const secret = loadSecretKey(env, mode, databaseUrl, opts.keyFile !== false && problems.length === 0);
  const weakness = secret?.source === 'env' ? secretKeyWeakness(secret.key) : null;
  if (mode === 'live') {
    if (cardProcessor.kind === 'sandbox' && !problems.some((p) => p.startsWith('SUNAP_CARD_PROCESSOR'))) {
      problems.push('SUNAP_CARD_PROCESSOR: live mode needs a real card processor: toss (Toss Payments\' payment window, with SUNAP_TOSS_CLIENT_KEY and SUNAP_TOSS_SECRET_KEY) or toss-keyin (its card-number API, by contract only, with SUNAP_TOSS_SECRET_KEY) or portone (PortOne V2\'s window, with SUNAP_PORTONE_API_SECRET, SUNAP_PORTONE_STORE_ID, SUNAP_PORTONE_CHANNEL_KEY and SUNAP_PORTONE_WEBHOOK_SECRET)');
    }
    if (messaging.kind === 'sandbox' && !problems.some((p) => p.startsWith('SUNAP_MESSAGING_PROVIDER'))) {
      problems.push('SUNAP_MESSAGING_PROVIDER: live mode needs a real messaging provider: solapi (with SUNAP_SOLAPI_API_KEY, SUNAP_SOLAPI_API_SECRET, SUNAP_SOLAPI_SENDER, SUNAP_SOLAPI_PFID, SUNAP_SOLAPI_TEMPLATE_ID)');
    }
    // The page URLs derive from SUNAP_PUBLIC_URL unless set: a derived one is that variable's problem.
    for (const [name, url] of [['SUNAP_PUBLIC_URL', publicUrl], ['SUNAP_PAYMENT_PAGE_URL', paymentPageUrl], ['SUNAP_PUBLIC_PAY_PAGE_URL', publicPayPageUrl]] as const) {
      const given = name === 'SUNAP_PUBLIC_URL' || !!env[name]?.trim();
      if (given && !url.startsWith('https://')) problems.push(`${name}: must be https:// in live mode (customers type card numbers behind it), got "${url}"`);
    }
    if (!secret) problems.push('SUNAP_SECRET_KEY: required in live mode (64 hex characters or 32 bytes base64; generate one with: openssl rand -hex 32)');
    else if (weakness) problems.push(`SUNAP_SECRET_KEY: too weak for live mode: it ${weakness}`);
  } else if (weakness) {
    warnings.push(`SUNAP_SECRET_KEY ${weakness}; live mode would refuse it`);
  }
  const metricsToken = env.SUNAP_METRICS_TOKEN?.trim() || null;
  if (metricsToken !== null && (metricsToken.length < 16 || metricsToken.length > 200 || /\s/.test(metricsToken))) {
    problems.push('SUNAP_METRICS_TOKEN: must be 16 to 200 characters without spaces (generate one with: openssl rand -hex 24)');
  }
  if (mode === 'live' && metricsToken === null) warnings.push('SUNAP_METRICS_TOKEN is not set: /metrics answers whoever reaches the port; set it, or keep the port away from the network');
  const requestTimeoutMs = intVar(env, 'SUNAP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  const headersTimeoutMs = intVar(env, 'SUNAP_HEADERS_TIMEOUT_MS', Math.min(10_000, requestTimeoutMs), 100, 600_000);
  // Node refuses a header limit above the whole request's.
  if (headersTimeoutMs > requestTimeoutMs) problems.push(`SUNAP_HEADERS_TIMEOUT_MS: must not exceed SUNAP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${headersTimeoutMs}`);
  if (problems.length === 1) throw new ConfigError(problems[0]!);
  if (problems.length > 1) throw new ConfigError(`${problems.length} problems:\n  - ${problems.join('\n  - ')}`);
  return {
    port,
    host,
    databaseUrl,
    mode,
    publicUrl,
    paymentPageUrl,
    publicPayPageUrl,
    secretKey: secret!.key,
    secretKeySource: secret!.source,
    cardProcessor,
    portoneApiUrl,
    messaging,
    warnings,
    allowPrivateTargets: boolVar(env, 'SUNAP_ALLOW_PRIVATE_TARGETS', mode === 'sandbox'),
    signMaxSkewSeconds: intVar(env, 'SUNAP_SIGN_MAX_SKEW_SECONDS', 600, 0, 10 * 365 * 86400),
    logLevel,
    costs: {
      ALIMTALK: intVar(env, 'SUNAP_COST_ALIMTALK', 10, 0, 1_000_000),
      SMS: intVar(env, 'SUNAP_COST_SMS', 30, 0, 1_000_000),
    },
    trustProxy: trustProxyVar(env),
    sqliteGroupCommit: boolVar(env, 'SUNAP_SQLITE_GROUP_COMMIT', true),
    pgPoolSize: intVar(env, 'SUNAP_PG_POOL_SIZE', 10, 1, 1_000),
    jobPollMs: intVar(env, 'SUNAP_JOB_POLL_MS', 500, 10, 60_000),
    jobLeaseMs: intVar(env, 'SUNAP_JOB_LEASE_MS', 60_000, 1_000, 3_600_000),
    jobConcurrency: intVar(env, 'SUNAP_JOB_CONCURRENCY', 64, 1, 1_000),
    jobStoreConcurrency: intVar(env, 'SUNAP_JOB_STORE_CONCURRENCY', 4, 1, 1_000),
    jobPlatformConcurrency: intVar(env, 'SUNAP_JOB_PLATFORM_CONCURRENCY', 16, 1, 1_000),
    deliveryRetentionDays: intVar(env, 'SUNAP_DELIVERY_RETENTION_DAYS', 30, 1, 3650),
    outboundTimeoutMs: intVar(env, 'SUNAP_OUTBOUND_TIMEOUT_MS', 10_000, 100, 120_000),
    loginRateLimit: intVar(env, 'SUNAP_LOGIN_RATE_LIMIT', 100, 0, 1_000_000),
    rechargeStoreCode: storeCodeVar(env, 'SUNAP_RECHARGE_STORE_CODE'),
    sandboxOpen: boolVar(env, 'SUNAP_SANDBOX_OPEN', false),
    alimtalkShortLink: boolVar(env, 'SUNAP_ALIMTALK_SHORT_LINK', false),
    metricsToken,
    http: {
      requestTimeoutMs,
      headersTimeoutMs,
      keepAliveTimeoutMs: intVar(env, 'SUNAP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 600_000),
      maxConnections: intVar(env, 'SUNAP_MAX_CONNECTIONS', 1000, 1, 1_000_000),
    },
  };
}
