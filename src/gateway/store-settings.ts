import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { SecretBox } from '../platform/crypto.js';
import {
  CHECKOUT_PROCESSOR_IDS, DEFAULT_METHODS, PAY_METHODS, PAY_WAYS, PUBLIC_KEY_FIELDS, SECRET_KEY_FIELDS, type CheckoutProcessorId, type PayMethod, type PayWay,
  type ProcessorKeys,
} from '../ports/checkout.js';
import * as settingsRepo from './settings-repository.js';
import { findStoreByCode } from './repository.js';

/**
 * A store's processor settings (docs/console.md, "Settings"; README, "Operator CLI"): the
 * processor, the way (the processor's window, or key-in by contract), the methods its page
 * offers, and its keys per processor. Secrets are sealed with SUNAP_SECRET_KEY and never shown
 * again: a view names which secrets are set, nothing more. Set by the operator (`sunap store
 * set-processor`) and by the store's owner (the console). Problems are named per field, in
 * English; the console words them in Korean.
 */
export interface SettingsInput {
  processor?: CheckoutProcessorId;
  way?: PayWay;
  methods?: PayMethod[];
  /** Keys of `processor` (or of the current one); a key left out keeps its stored value. */
  keys?: ProcessorKeys;
}

export type KeyField = keyof ProcessorKeys;
export type SettingsField = 'processor' | 'way' | 'methods' | KeyField;

export interface KeysView {
  processor: CheckoutProcessorId;
  clientKey?: string;
  storeId?: string;
  channelKey?: string;
  /** The names of the secrets that are set (their values are never shown). */
  secretsSet: string[];
  updatedAt: number;
}

export interface SettingsView {
  storeCode: string;
  processor: CheckoutProcessorId;
  way: PayWay;
  methods: PayMethod[];
  /** The store's own settings, or the operator's configuration (SUNAP_CARD_PROCESSOR). */
  source: 'store' | 'operator';
  keys: KeysView[];
}

export interface SettingsContext {
  db: Kysely<Database>;
  box: SecretBox;
  live: boolean;
  /** The operator's processor and way: what a store without settings uses. */
  operator: { processor: CheckoutProcessorId; way: PayWay };
  /** Processors the operator configured keys for (a store may use them without its own). */
  operatorKeys: readonly CheckoutProcessorId[];
}

export class SettingsProblem extends Error {
  override name = 'SettingsProblem';
  constructor(readonly problems: Partial<Record<SettingsField, string>>) {
    super(Object.entries(problems).map(([f, p]) => `${f}: ${p}`).join('; '));
  }
}

const TOSS_CLIENT = /^(test|live)_ck_[A-Za-z0-9]{8,200}$/;
const TOSS_SECRET = /^(test|live)_sk_[A-Za-z0-9]{8,200}$/;
const WIDGET_KEY = /^(test|live)_g(ck|sk)_/;

/** The checks of each key as given (before merging with the stored ones). */
export const KEY_RULES: Record<KeyField, { test: RegExp; problem: string }> = {
  clientKey: { test: TOSS_CLIENT, problem: 'must be a Toss client key of the API individual integration (test_ck_… or live_ck_…)' },
  secretKey: { test: TOSS_SECRET, problem: 'must be a Toss secret key of the API individual integration (test_sk_… or live_sk_…)' },
  apiSecret: { test: /^[A-Za-z0-9_\-+/=]{20,500}$/, problem: 'must be a PortOne V2 API secret (20 to 500 letters, digits and _ - + / =)' },
  storeId: { test: /^store-[0-9a-f-]{36}$/, problem: 'must be a PortOne store id (store-…)' },
  channelKey: { test: /^channel-key-[0-9a-f-]{36}$/, problem: 'must be a PortOne channel key (channel-key-…)' },
  webhookSecret: { test: /^whsec_[A-Za-z0-9+/=]{20,200}$/, problem: 'must be a PortOne webhook secret (whsec_…)' },
};

/** Which keys each processor takes, and which it needs for each way. */
const PROCESSOR_KEYS: Record<CheckoutProcessorId, { takes: KeyField[]; needs: Record<PayWay, KeyField[]> }> = {
  sandbox: { takes: [], needs: { checkout: [], 'key-in': [] } },
  toss: { takes: ['clientKey', 'secretKey'], needs: { checkout: ['clientKey', 'secretKey'], 'key-in': ['secretKey'] } },
  portone: { takes: ['apiSecret', 'storeId', 'channelKey', 'webhookSecret'], needs: { checkout: ['apiSecret', 'storeId', 'channelKey'], 'key-in': [] } },
};

export async function viewSettings(c: SettingsContext, storeCode: string): Promise<SettingsView> {
  const row = await settingsRepo.storeProcessor(c.db, storeCode);
  const keys = (await settingsRepo.allStoreKeys(c.db, storeCode)).map((k) => ({
    processor: k.processor, ...settingsRepo.publicKeys(k), secretsSet: settingsRepo.secretNames(c.box, k), updatedAt: Number(k.updated_at),
  }));
  if (!row) return { storeCode, ...c.operator, methods: [...DEFAULT_METHODS], source: 'operator', keys };
  return { storeCode, processor: row.processor, way: row.way, methods: settingsRepo.parseMethods(row.methods), source: 'store', keys };
}

/** Checks and stores a store's settings; throws SettingsProblem naming each bad field, and changes nothing then. */
export async function setSettings(c: SettingsContext, storeCode: string, input: SettingsInput, now: number): Promise<SettingsView> {
  if (!(await findStoreByCode(c.db, storeCode))) throw new SettingsProblem({ processor: `no store with code ${storeCode}` });
  const current = await viewSettings(c, storeCode);
  const problems: Partial<Record<SettingsField, string>> = {};
  const processor = input.processor ?? current.processor;
  const way = input.way ?? current.way;
  const methods = input.methods ?? current.methods;
  if (!(CHECKOUT_PROCESSOR_IDS as readonly string[]).includes(processor)) problems.processor = `must be one of ${CHECKOUT_PROCESSOR_IDS.join(', ')}`;
  else if (c.live && processor === 'sandbox') problems.processor = 'the sandbox takes no real payment: live mode needs toss or portone';
  if (!(PAY_WAYS as readonly string[]).includes(way)) problems.way = `must be ${PAY_WAYS.join(' or ')}`;
  else if (way === 'key-in' && processor === 'portone') problems.way = 'PortOne takes payments through its window only; key-in is for sandbox and toss';
  if (methods.length === 0) problems.methods = `choose at least one of ${PAY_METHODS.join(', ')}`;
  else if (methods.some((m) => !(PAY_METHODS as readonly string[]).includes(m))) problems.methods = `must be among ${PAY_METHODS.join(', ')}`;

  const rules = PROCESSOR_KEYS[processor as CheckoutProcessorId] ?? PROCESSOR_KEYS.sandbox;
  const given = input.keys ?? {};
  for (const [f, v] of Object.entries(given) as [KeyField, string | undefined][]) {
    if (v === undefined || v === '') continue;
    if (!rules.takes.includes(f)) problems[f] = `${processor} takes no ${f}`;
    else if (WIDGET_KEY.test(v)) problems[f] = 'a payment widget key (…_gck_/…_gsk_) does not open the payment window; use the keys of the API individual integration (…_ck_/…_sk_)';
    else if (!KEY_RULES[f].test.test(v)) problems[f] = KEY_RULES[f].problem;
  }
  const stored = await settingsRepo.storeKeys(c.db, storeCode, processor as CheckoutProcessorId);
  const merged: ProcessorKeys = { ...(stored ? settingsRepo.openKeys(c.box, stored) : {}), ...Object.fromEntries(Object.entries(given).filter(([, v]) => v)) };
  const own = rules.takes.some((f) => merged[f]);
  // Without keys of its own a store uses the operator's, when the operator has them.
  if (own || !c.operatorKeys.includes(processor as CheckoutProcessorId)) {
    for (const f of rules.needs[way as PayWay] ?? []) if (!merged[f] && !problems[f]) problems[f] = `is required for ${processor} (${way})`;
  }
  if (merged.clientKey && merged.secretKey && !problems.clientKey && !problems.secretKey && merged.clientKey.slice(0, 4) !== merged.secretKey.slice(0, 4)) {
    problems.secretKey = 'is not of the same mode as the client key (test_… with test_…, live_… with live_…)';
  }
  if (Object.keys(problems).length > 0) throw new SettingsProblem(problems);

  await c.db.transaction().execute(async (trx) => {
    await settingsRepo.upsertStoreProcessor(trx, { store_code: storeCode, processor: processor as CheckoutProcessorId, way: way as PayWay, methods: JSON.stringify(PAY_METHODS.filter((m) => methods.includes(m))), updated_at: now });
    if (own) {
      const pub = Object.fromEntries(PUBLIC_KEY_FIELDS.filter((f) => merged[f]).map((f) => [f, merged[f]]));
      const sec = Object.fromEntries(SECRET_KEY_FIELDS.filter((f) => merged[f]).map((f) => [f, merged[f]]));
      await settingsRepo.upsertStoreKeys(trx, { store_code: storeCode, processor: processor as CheckoutProcessorId, public_keys: JSON.stringify(pub), secrets_sealed: c.box.seal(JSON.stringify(sec)), updated_at: now });
    }
  });
  return viewSettings(c, storeCode);
}

/** Back to the operator's configuration (the keys go too). */
export async function resetSettings(c: SettingsContext, storeCode: string): Promise<SettingsView> {
  if (!(await findStoreByCode(c.db, storeCode))) throw new SettingsProblem({ processor: `no store with code ${storeCode}` });
  await settingsRepo.deleteStoreSettings(c.db, storeCode);
  return viewSettings(c, storeCode);
}
