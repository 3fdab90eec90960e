import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hash, randomBytes, randomUUID, scrypt, timingSafeEqual, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;

/** API_SIGN (docs/reference.md, "Signing gateway calls"): sha256 hex over TRANS_SEQNO+PLATFORM_CODE+STORE_CODE+TRANS_AT+API_KEY. */
export function apiSign(transSeqNo: string, platformCode: string, storeCode: string, transAt: string, apiKey: string): string {
  // The one-shot hash: no Hash object per signed call.
  return hash('sha256', transSeqNo + platformCode + storeCode + transAt + apiKey, 'hex');
}

/** Constant-time comparison of two hex strings, case-insensitive. */
export function hexEqual(a: string, b: string): boolean {
  const x = Buffer.from(a.toLowerCase());
  const y = Buffer.from(b.toLowerCase());
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Webhook signature header value: t=<unix>,v1=<hmac hex over "t." + raw body>. */
export function webhookSignature(secret: string, t: number, rawBody: Buffer | string): string {
  const mac = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
  return `t=${t},v1=${mac}`;
}

/**
 * The Standard Webhooks signature (what the `standardwebhooks` package verifies): HMAC-SHA256,
 * keyed by the base64 part of a `whsec_` secret, over `id.timestamp.body`, as `v1,<base64>`.
 */
export function standardWebhookSignature(secret: string, msgId: string, timestampSec: number, rawBody: Buffer | string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampSec}.`).update(rawBody).digest('base64')}`;
}

/** A new endpoint secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/**
 * The KeyObject of a long-lived key (the master key, a token key), made once. node:crypto turns
 * a Buffer key into a KeyObject on every createHmac or createDecipheriv: ~22 µs of CPU per HMAC
 * against ~4 µs with the KeyObject (BENCHMARKS.md, "The hot path at the stack's own cost"), on
 * every requestPayment's page token. Same bytes, same MAC.
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();
export function secretKeyOf(key: Buffer): KeyObject {
  let k = keyObjects.get(key);
  if (!k) keyObjects.set(key, (k = createSecretKey(key)));
  return k;
}

export function hmacToken(key: Buffer, purpose: string, value: string, bytes = 24): string {
  return createHmac('sha256', secretKeyOf(key)).update(`${purpose}:${value}`).digest().subarray(0, bytes).toString('base64url');
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function newId(): string {
  return randomUUID();
}

export function tokenEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Secrets at rest (docs/architecture.md, "Invariants"): AES-256-GCM under the master key.
 * Format: v1.<keyId>.<iv>.<tag>.<ciphertext>, base64url parts; the key id names the master
 * key so a future rotation can tell which key sealed a value.
 */
export class SecretBox {
  readonly keyId: string;
  /** The master key as a KeyObject, made once (see secretKeyOf). */
  private readonly key: KeyObject;
  constructor(key: Buffer) {
    this.keyId = hash('sha256', key, 'hex').slice(0, 8);
    this.key = createSecretKey(key);
  }
  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plain), c.final()]);
    return ['v1', this.keyId, iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }
  /**
   * Every signed call opens its platform's key and every webhook its secret: remember what was
   * opened, by its sealed form (which changes whenever the secret does), for a bounded set.
   */
  private readonly opened = new Map<string, string>();

  open(sealed: string): string {
    const hit = this.opened.get(sealed);
    if (hit !== undefined) return hit;
    const plain = this.decrypt(sealed);
    if (this.opened.size >= 1000) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(sealed, plain);
    return plain;
  }

  private decrypt(sealed: string): string {
    const [v, keyId, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('sealed value has an unknown format');
    if (keyId !== this.keyId) throw new Error(`sealed with master key ${keyId}, but SUNAP_SECRET_KEY is ${this.keyId}`);
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  }
}

const SCRYPT = { N: 16384, r: 8, p: 1 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const got = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, { ...SCRYPT, N: Number(n) });
  return timingSafeEqual(got, expected);
}
