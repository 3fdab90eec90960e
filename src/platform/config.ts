import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

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
  allowPrivateTargets: boolean;
  signMaxSkewSeconds: number;
  logLevel: string;
  /** Send-point price of one message per channel (decisions §5). */
  costs: { ALIMTALK: number; SMS: number };
  /** Trust X-Forwarded-For from a proxy in front (per-address rate limits see the client). */
  trustProxy: boolean;
  /** How often the job worker looks for due jobs, in milliseconds. */
  jobPollMs: number;
  /** How long a claimed job stays leased to one worker, in milliseconds. */
  jobLeaseMs: number;
  /** Jobs one instance runs at once (deliveries waiting on merchants mostly). */
  jobConcurrency: number;
  /** Time limit of one outbound call (callback, webhook, messaging provider), in milliseconds. */
  outboundTimeoutMs: number;
  /** Login attempts per client address per minute (0: no per-address limit; the per-email throttle always applies). */
  loginRateLimit: number;
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

/** Directory that holds the embedded database and the generated sandbox key. */
export function dataDir(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path && path !== ':memory:') return dirname(resolve(path));
  }
  return resolve('data');
}

function loadSecretKey(env: Env, mode: Mode, databaseUrl: string): Buffer {
  const raw = env.SUNAP_SECRET_KEY;
  if (raw !== undefined && raw !== '') return parseSecretKey(raw.trim());
  if (mode === 'live') throw new ConfigError('SUNAP_SECRET_KEY: required in live mode (64 hex characters or 32 bytes base64)');
  // Sandbox: generate once and keep it beside the database, so restarts can still decrypt.
  const file = join(dataDir(databaseUrl), 'secret.key');
  if (existsSync(file)) return parseSecretKey(readFileSync(file, 'utf8').trim(), file);
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(32);
  try {
    writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process (a second instance or the CLI) created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return parseSecretKey(readFileSync(file, 'utf8').trim(), file);
    throw err;
  }
  return key;
}

function parseSecretKey(value: string, source = 'SUNAP_SECRET_KEY'): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const b = Buffer.from(value, 'base64');
  if (b.length === 32 && /^[A-Za-z0-9+/=_-]+$/.test(value)) return b;
  throw new ConfigError(`${source}: must be 32 bytes, as 64 hex characters or base64`);
}

export function loadConfig(env: Env = process.env): Config {
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
  if (mode === 'live') {
    // Live mode needs real adapters; none ships yet, so refuse rather than charge nothing.
    const card = env.SUNAP_CARD_PROCESSOR?.trim();
    const messaging = env.SUNAP_MESSAGING_PROVIDER?.trim();
    if (!card || card === 'sandbox') {
      throw new ConfigError('SUNAP_MODE=live: a real card processor must be configured (SUNAP_CARD_PROCESSOR); this build ships only the sandbox adapter');
    }
    if (!messaging || messaging === 'sandbox') {
      throw new ConfigError('SUNAP_MODE=live: a real messaging provider must be configured (SUNAP_MESSAGING_PROVIDER); this build ships only the sandbox adapter');
    }
    throw new ConfigError(`SUNAP_CARD_PROCESSOR: unknown adapter "${card}"`);
  }
  const publicUrl = urlVar(env, 'SUNAP_PUBLIC_URL', `http://localhost:${port}`);
  return {
    port,
    host,
    databaseUrl,
    mode,
    publicUrl,
    paymentPageUrl: urlVar(env, 'SUNAP_PAYMENT_PAGE_URL', `${publicUrl}/checkout`),
    publicPayPageUrl: urlVar(env, 'SUNAP_PUBLIC_PAY_PAGE_URL', `${publicUrl}/pay`),
    secretKey: loadSecretKey(env, mode, databaseUrl),
    allowPrivateTargets: boolVar(env, 'SUNAP_ALLOW_PRIVATE_TARGETS', mode === 'sandbox'),
    signMaxSkewSeconds: intVar(env, 'SUNAP_SIGN_MAX_SKEW_SECONDS', 600, 0, 10 * 365 * 86400),
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    costs: {
      ALIMTALK: intVar(env, 'SUNAP_COST_ALIMTALK', 10, 0, 1_000_000),
      SMS: intVar(env, 'SUNAP_COST_SMS', 30, 0, 1_000_000),
    },
    trustProxy: boolVar(env, 'SUNAP_TRUST_PROXY', false),
    jobPollMs: intVar(env, 'SUNAP_JOB_POLL_MS', 500, 10, 60_000),
    jobLeaseMs: intVar(env, 'SUNAP_JOB_LEASE_MS', 60_000, 1_000, 3_600_000),
    jobConcurrency: intVar(env, 'SUNAP_JOB_CONCURRENCY', 64, 1, 1_000),
    outboundTimeoutMs: intVar(env, 'SUNAP_OUTBOUND_TIMEOUT_MS', 10_000, 100, 120_000),
    loginRateLimit: intVar(env, 'SUNAP_LOGIN_RATE_LIMIT', 100, 0, 1_000_000),
  };
}
