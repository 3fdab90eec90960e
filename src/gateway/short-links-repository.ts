import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';

/**
 * Short payment links (docs/invoicing.md, "SMS or LMS"; docs/security.md, "Short payment
 * links"). A payment's page link carries its id and a 43-character token: about 100 bytes,
 * more than an SMS holds. `/s/<code>` redirects to that link instead.
 *
 * The code is random and carries no information: 12 characters drawn uniformly from
 * [0-9A-Za-z] by the CSPRNG, 62^12 ≈ 2^71.4 codes. Even with a billion live links, a guess
 * hits one with a chance of about 1 in 3·10^12, and the route answers at most
 * SHORT_LINK_RATE_LIMIT guesses a minute per address. Nothing in the code depends on the
 * payment, the store or the time, so one tenant's links tell nothing about another's; the
 * row is the only link between a code and its payment.
 */
export const SHORT_CODE_LENGTH = 12;
export const SHORT_CODE_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** What a code looks like; anything else is unknown without a database read. */
export const SHORT_CODE_PATTERN = /^[0-9A-Za-z]{12}$/;

export function newShortCode(): string {
  let code = '';
  for (let i = 0; i < SHORT_CODE_LENGTH; i++) code += SHORT_CODE_ALPHABET[randomInt(SHORT_CODE_ALPHABET.length)];
  return code;
}

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The payment's code, made on first use: one per payment (`payment_id` unique), so two sends
 * racing for it both get the one that was stored. A clash of codes (a chance of 2^-71) just
 * draws again.
 */
export async function ensureShortCode(db: Db, storeCode: string, paymentId: string, now: number): Promise<string> {
  for (let i = 0; i < 3; i++) {
    const existing = await db.selectFrom('short_links').select('code').where('payment_id', '=', paymentId).executeTakeFirst();
    if (existing) return existing.code;
    await db.insertInto('short_links').values({ code: newShortCode(), store_code: storeCode, payment_id: paymentId, created_at: now })
      .onConflict((oc) => oc.doNothing()).execute();
  }
  const made = await db.selectFrom('short_links').select('code').where('payment_id', '=', paymentId).executeTakeFirst();
  if (!made) throw new Error(`could not make a short link for payment ${paymentId}`);
  return made.code;
}

/** The payment a code opens, or null (an unknown code and a malformed one read the same). */
export async function findShortLink(db: Db, code: string): Promise<{ paymentId: string; storeCode: string } | null> {
  if (!SHORT_CODE_PATTERN.test(code)) return null;
  const row = await db.selectFrom('short_links').select(['payment_id', 'store_code']).where('code', '=', code).executeTakeFirst();
  return row ? { paymentId: row.payment_id, storeCode: row.store_code } : null;
}
