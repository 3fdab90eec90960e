/**
 * The card processor and messaging provider settings (README.md, "Configuration"; docs/going-live.md).
 * Problems are collected, not thrown one at a time, so a live start that is missing several
 * pieces names every one of them at once.
 */
type Env = Record<string, string | undefined>;

/**
 * The operator's card processor (SUNAP_CARD_PROCESSOR): `sandbox`; `toss`, Toss Payments' own
 * payment window (client key + secret key of the same pair); `toss-keyin`, Toss's card-number
 * API (by contract only: Sunap's card form). Stores may choose their own (sunap store
 * set-processor); this is their fallback.
 */
export type CardProcessorSettings =
  | { kind: 'sandbox' }
  | { kind: 'toss'; clientKey: string; secretKey: string; baseUrl: string; testCode?: string; sdkUrl: string }
  | { kind: 'toss-keyin'; secretKey: string; baseUrl: string; testCode?: string }
  | { kind: 'portone'; apiSecret: string; storeId: string; channelKey: string; webhookSecret: string };

export const CARD_PROCESSOR_KINDS = ['sandbox', 'toss', 'toss-keyin', 'portone'] as const;

export type MessagingSettings =
  | { kind: 'sandbox' }
  | { kind: 'solapi'; apiKey: string; apiSecret: string; baseUrl: string; sender: string; pfId: string; templateId: string };

export const TOSS_API_URL = 'https://api.tosspayments.com';
/** Toss's browser SDK v2 (the payment window). */
export const TOSS_SDK_URL = 'https://js.tosspayments.com/v2/standard';
export const SOLAPI_API_URL = 'https://api.solapi.com';
export const PORTONE_API_URL = 'https://api.portone.io';

/** The variables that hold secrets: never printed, logged or stored. */
export const SECRET_VARIABLES = ['SUNAP_SECRET_KEY', 'SUNAP_TOSS_SECRET_KEY', 'SUNAP_SOLAPI_API_SECRET', 'SUNAP_PORTONE_API_SECRET', 'SUNAP_PORTONE_WEBHOOK_SECRET'] as const;

function value(env: Env, name: string): string {
  return env[name]?.trim() ?? '';
}

/** A provider's base URL: https only (the secrets travel there). */
function providerUrl(env: Env, name: string, fallback: string, problems: string[]): string {
  const raw = value(env, name) || fallback;
  try {
    const u = new URL(raw);
    if (u.protocol === 'https:' && !u.username && !u.password) return raw.replace(/\/+$/, '');
  } catch {
    // reported below
  }
  problems.push(`${name}: must be an https:// URL without credentials, got "${raw}"`);
  return fallback;
}

function required(env: Env, name: string, problems: string[], check: (v: string) => string | null): string {
  const v = value(env, name);
  if (!v) {
    problems.push(`${name}: required with this provider`);
    return '';
  }
  const problem = check(v);
  if (problem) problems.push(`${name}: ${problem}`);
  return v;
}

export function loadCardProcessor(env: Env, problems: string[]): CardProcessorSettings {
  const kind = value(env, 'SUNAP_CARD_PROCESSOR') || 'sandbox';
  if (kind === 'sandbox') return { kind };
  if (kind === 'portone') return loadPortone(env, problems);
  if (kind !== 'toss' && kind !== 'toss-keyin') {
    problems.push(`SUNAP_CARD_PROCESSOR: must be sandbox, toss (Toss Payments' payment window), toss-keyin (its card-number API, by contract only) or portone (PortOne V2's window, any PG), got "${kind}"`);
    return { kind: 'sandbox' };
  }
  const widget = 'a payment widget key (…_gsk_/…_gck_) does not open the payment window; use the keys of the API individual integration';
  const secretKey = required(env, 'SUNAP_TOSS_SECRET_KEY', problems, (v) =>
    /^(test|live)_gsk_/.test(v) ? widget
      : /^(test|live)_sk_[A-Za-z0-9]{8,200}$/.test(v) ? null : 'must be a Toss secret key (test_sk_… or live_sk_…); the client key (…_ck_…) goes in SUNAP_TOSS_CLIENT_KEY');
  const testCode = value(env, 'SUNAP_TOSS_TEST_CODE');
  if (testCode && !secretKey.startsWith('test_sk_')) problems.push('SUNAP_TOSS_TEST_CODE: only with a test key (test_sk_…); Toss forces errors in test mode only');
  if (testCode && !/^[A-Z_]{1,100}$/.test(testCode)) problems.push(`SUNAP_TOSS_TEST_CODE: must be an error code such as REJECT_CARD_COMPANY, got "${testCode}"`);
  const baseUrl = providerUrl(env, 'SUNAP_TOSS_API_URL', TOSS_API_URL, problems);
  const extra = testCode ? { testCode } : {};
  if (kind === 'toss-keyin') return { kind, secretKey, baseUrl, ...extra };
  const clientKey = required(env, 'SUNAP_TOSS_CLIENT_KEY', problems, (v) =>
    /^(test|live)_gck_/.test(v) ? widget
      : !/^(test|live)_ck_[A-Za-z0-9]{8,200}$/.test(v) ? 'must be a Toss client key (test_ck_… or live_ck_…)'
        : secretKey && secretKey.slice(0, 4) !== v.slice(0, 4) ? 'must be of the same mode as SUNAP_TOSS_SECRET_KEY (test_ck_ with test_sk_, live_ck_ with live_sk_): Toss issues them as a pair' : null);
  // The SDK the payment page loads: Toss's own, or the rehearsal fake's (SUNAP_TOSS_SDK_URL).
  const sdkUrl = providerUrl(env, 'SUNAP_TOSS_SDK_URL', TOSS_SDK_URL, problems);
  return { kind, clientKey, secretKey, baseUrl, sdkUrl, ...extra };
}

/**
 * PortOne V2 (docs/going-live.md, "PortOne"): the V2 API secret, the store id, the channel key of
 * the PG contract the window uses, and the webhook secret its notices are verified with (a
 * virtual account's deposit arrives only as a notice). Every missing one is named.
 */
function loadPortone(env: Env, problems: string[]): CardProcessorSettings {
  return {
    kind: 'portone',
    apiSecret: required(env, 'SUNAP_PORTONE_API_SECRET', problems, (v) => (/^[A-Za-z0-9_\-+/=]{20,500}$/.test(v) ? null : 'must be a PortOne V2 API secret (20 to 500 letters, digits and _ - + / =), from 결제 연동 → 연동 정보 → V2 API')),
    storeId: required(env, 'SUNAP_PORTONE_STORE_ID', problems, (v) => (/^store-[0-9a-f-]{36}$/.test(v) ? null : 'must be a PortOne store id (store-…)')),
    channelKey: required(env, 'SUNAP_PORTONE_CHANNEL_KEY', problems, (v) => (/^channel-key-[0-9a-f-]{36}$/.test(v) ? null : 'must be the channel key of a PG channel (channel-key-…)')),
    webhookSecret: required(env, 'SUNAP_PORTONE_WEBHOOK_SECRET', problems, (v) => (/^whsec_[A-Za-z0-9+/=]{20,200}$/.test(v) ? null : 'must be a PortOne webhook secret (whsec_…)')),
  };
}

/** SUNAP_PORTONE_API_URL: PortOne's API for the operator's keys and every store's own (https; the fake in a rehearsal). */
export function loadPortoneApiUrl(env: Env, problems: string[]): string {
  return providerUrl(env, 'SUNAP_PORTONE_API_URL', PORTONE_API_URL, problems);
}

export function loadMessaging(env: Env, problems: string[]): MessagingSettings {
  const kind = value(env, 'SUNAP_MESSAGING_PROVIDER') || 'sandbox';
  if (kind === 'sandbox') return { kind };
  if (kind !== 'solapi') {
    problems.push(`SUNAP_MESSAGING_PROVIDER: must be sandbox or solapi, got "${kind}"`);
    return { kind: 'sandbox' };
  }
  const text = (v: string) => (/^[A-Za-z0-9_-]{4,200}$/.test(v) ? null : 'must be 4-200 of A-Z a-z 0-9 _ -, as Solapi shows it');
  return {
    kind,
    apiKey: required(env, 'SUNAP_SOLAPI_API_KEY', problems, text),
    apiSecret: required(env, 'SUNAP_SOLAPI_API_SECRET', problems, text),
    baseUrl: providerUrl(env, 'SUNAP_SOLAPI_API_URL', SOLAPI_API_URL, problems),
    sender: required(env, 'SUNAP_SOLAPI_SENDER', problems, (v) =>
      (/^\d{8,12}$/.test(v) ? null : 'must be the registered sender number, 8 to 12 digits without dashes')),
    pfId: required(env, 'SUNAP_SOLAPI_PFID', problems, text),
    templateId: required(env, 'SUNAP_SOLAPI_TEMPLATE_ID', problems, text),
  };
}

/**
 * Why a 32-byte master key is too weak to protect API keys, or null. A random key has about 30
 * distinct byte values and no pattern; fewer than 16 distinct values (a repeated byte such as
 * all zeros, a short pattern repeated) or bytes in a constant step (00 01 02 …) mean a key
 * somebody typed, not generated.
 */
export function secretKeyWeakness(key: Buffer): string | null {
  if (new Set(key).size < 16) return `has only ${new Set(key).size} distinct byte values (a repeated byte or pattern); generate one with: openssl rand -hex 32`;
  const step = (key[1]! - key[0]! + 256) % 256;
  if (key.every((b, i) => i === 0 || (b - key[i - 1]! + 256) % 256 === step)) return 'is a counting sequence; generate one with: openssl rand -hex 32';
  return null;
}
