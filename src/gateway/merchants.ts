import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { newId, randomToken, SecretBox } from '../platform/crypto.js';
import { isUniqueViolation } from '../platform/errors.js';

/** Operator actions on platforms and stores (the `sunap platform|store` commands). */
export class OperatorError extends Error {
  override name = 'OperatorError';
}

function code(prefix: string): string {
  return prefix + randomBytes(5).toString('hex').toUpperCase();
}

export async function createPlatform(db: Kysely<Database>, box: SecretBox, now: number, input: { name: string; code?: string; apiKey?: string }) {
  if (!input.name.trim()) throw new OperatorError('--name: must not be empty');
  const platformCode = input.code ?? code('PC');
  const apiKey = input.apiKey ?? `sk_${randomToken(24)}`;
  try {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('platforms').values({ code: platformCode, name: input.name.trim(), created_at: now }).execute();
      await trx.insertInto('platform_keys').values({ id: newId(), platform_code: platformCode, key_sealed: box.seal(apiKey), retired_at: null, created_at: now }).execute();
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new OperatorError(`platform ${platformCode} already exists`);
    throw e;
  }
  return { platformCode, apiKey };
}

/**
 * New key for a platform. The previous key keeps signing for `graceSeconds` (service clock);
 * keys older than that one stop at once, so at most one previous key is ever valid.
 */
export async function rotateKey(db: Kysely<Database>, box: SecretBox, now: number, input: { platformCode: string; graceSeconds: number; apiKey?: string }) {
  const apiKey = input.apiKey ?? `sk_${randomToken(24)}`;
  await db.transaction().execute(async (trx) => {
    const p = await trx.selectFrom('platforms').select('code').where('code', '=', input.platformCode).executeTakeFirst();
    if (!p) throw new OperatorError(`--platform-code: no platform ${input.platformCode}`);
    await trx.updateTable('platform_keys').set({ retired_at: now }).where('platform_code', '=', input.platformCode)
      .where('retired_at', 'is not', null).where('retired_at', '>', now).execute();
    await trx.updateTable('platform_keys').set({ retired_at: now + input.graceSeconds * 1000 })
      .where('platform_code', '=', input.platformCode).where('retired_at', 'is', null).execute();
    await trx.insertInto('platform_keys').values({ id: newId(), platform_code: input.platformCode, key_sealed: box.seal(apiKey), retired_at: null, created_at: now }).execute();
  });
  return { platformCode: input.platformCode, apiKey };
}

export async function createStore(db: Kysely<Database>, now: number, input: { platformCode: string; name: string; code?: string; ceoName?: string; bizRegNum?: string; tel?: string; cat?: boolean }) {
  if (!input.name.trim()) throw new OperatorError('--name: must not be empty');
  const p = await db.selectFrom('platforms').select('code').where('code', '=', input.platformCode).executeTakeFirst();
  if (!p) throw new OperatorError(`--platform-code: no platform ${input.platformCode}`);
  const storeCode = input.code ?? code('SD');
  try {
    await db.insertInto('stores').values({
      code: storeCode, platform_code: input.platformCode, name: input.name.trim(), ceo_name: input.ceoName ?? '',
      biz_reg_num: input.bizRegNum ?? '', tel: input.tel ?? '', cat_enabled: input.cat === false ? 0 : 1, created_at: now,
    }).execute();
  } catch (e) {
    if (isUniqueViolation(e)) throw new OperatorError(`store ${storeCode} already exists`);
    throw e;
  }
  return { storeCode };
}
