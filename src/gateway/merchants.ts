import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { newId, randomToken, type SecretBox } from '../platform/crypto.js';
import { isUniqueViolation } from '../platform/errors.js';
import { controlProblem } from '../platform/validation.js';
import * as repo from './repository.js';

/** Operator actions on platforms and stores (the `sunap platform|store` commands). */
export class OperatorError extends Error {
  override name = 'OperatorError';
}

function code(prefix: string): string {
  return prefix + randomBytes(5).toString('hex').toUpperCase();
}

const newApiKey = () => `sk_${randomToken(24)}`;

/** A platform and its first API key (sealed at rest; the plain key is returned once). */
/** A name people read (pages, messages, exports): no control characters (docs/reference.md, "Validation"). */
function displayText(option: string, value: string | undefined): void {
  const problem = value ? controlProblem(value) : null;
  if (problem) throw new OperatorError(`${option}: ${problem}`);
}

export async function createPlatform(db: Kysely<Database>, box: SecretBox, now: number, input: { name: string; code?: string; apiKey?: string }) {
  if (!input.name.trim()) throw new OperatorError('--name: must not be empty');
  displayText('--name', input.name);
  const platformCode = input.code ?? code('PC');
  const apiKey = input.apiKey ?? newApiKey();
  try {
    await db.transaction().execute((trx) => repo.insertPlatform(trx, { code: platformCode, name: input.name.trim(), keyId: newId(), keySealed: box.seal(apiKey), now }));
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
  const apiKey = input.apiKey ?? newApiKey();
  await db.transaction().execute(async (trx) => {
    if (!(await repo.platformExists(trx, input.platformCode))) throw new OperatorError(`--platform-code: no platform ${input.platformCode}`);
    await repo.rotatePlatformKey(trx, { platformCode: input.platformCode, keyId: newId(), keySealed: box.seal(apiKey), now, retireAt: now + input.graceSeconds * 1000 });
  });
  return { platformCode: input.platformCode, apiKey };
}

export async function createStore(db: Kysely<Database>, now: number, input: { platformCode: string; name: string; code?: string; ceoName?: string; bizRegNum?: string; tel?: string; cat?: boolean }) {
  if (!input.name.trim()) throw new OperatorError('--name: must not be empty');
  displayText('--name', input.name);
  displayText('--ceo-name', input.ceoName);
  if (!(await repo.platformExists(db, input.platformCode))) throw new OperatorError(`--platform-code: no platform ${input.platformCode}`);
  const storeCode = input.code ?? code('SD');
  try {
    await repo.insertStore(db, {
      code: storeCode, platform_code: input.platformCode, name: input.name.trim(), ceo_name: input.ceoName ?? '',
      biz_reg_num: input.bizRegNum ?? '', tel: input.tel ?? '', cat_enabled: input.cat === false ? 0 : 1, created_at: now,
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new OperatorError(`store ${storeCode} already exists`);
    throw e;
  }
  return { storeCode };
}
