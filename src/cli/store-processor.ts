import { OperatorError, resetSettings, setSettings, SettingsProblem, storeByCode, viewSettings, type SettingsField, type SettingsView } from '../gateway/index.js';
import { settingsContextOf } from '../app.js';
import { PAY_METHODS, type CheckoutProcessorId, type PayMethod, type PayWay, type ProcessorKeys } from '../ports/checkout.js';
import type { Session } from './session.js';

/**
 * `sunap store show | set-processor | reset-processor` (README.md, "Operator CLI"): a store's
 * processor, way, offered methods and keys. Secrets are sealed with SUNAP_SECRET_KEY and never
 * printed again: `show` names which are set.
 */

/** The option that sets each field, for messages in the CLI's `--option: reason` form. */
export const FIELD_OPTIONS: Record<SettingsField, string> = {
  processor: '--processor', way: '--way', methods: '--methods', clientKey: '--client-key', secretKey: '--secret-key', apiSecret: '--api-secret',
  storeId: '--store-id', channelKey: '--channel-key', webhookSecret: '--webhook-secret',
};

function problemsOf(err: SettingsProblem): OperatorError {
  return new OperatorError(Object.entries(err.problems).map(([f, p]) => `${FIELD_OPTIONS[f as SettingsField]}: ${p}`).join('; '));
}

/** The view as the CLI prints it: flat, the keys as "processor: clientKey=…, secrets set: secretKey". */
export function printable(v: SettingsView) {
  return {
    storeCode: v.storeCode, processor: v.processor, way: v.way, methods: v.methods, source: v.source,
    keys: v.keys.map((k) => ({ processor: k.processor, clientKey: k.clientKey, storeId: k.storeId, channelKey: k.channelKey, secretsSet: k.secretsSet })),
  };
}

async function opened(session: Session, storeCode: string) {
  const o = await session.open();
  if (!(await storeByCode(o.database.db, storeCode))) throw new OperatorError(`--store-code: no store ${storeCode}`);
  return { ...o, ctx: settingsContextOf(o.config, o.database.db, o.box) };
}

export async function showStore(session: Session, storeCode: string) {
  const { ctx } = await opened(session, storeCode);
  return printable(await viewSettings(ctx, storeCode));
}

export interface SetProcessorValues {
  processor?: string;
  way?: string;
  methods?: string;
  keys: ProcessorKeys;
}

export async function setStoreProcessor(session: Session, storeCode: string, v: SetProcessorValues) {
  const { ctx, clock } = await opened(session, storeCode);
  const methods = v.methods === undefined ? undefined : v.methods.split(',').map((m) => m.trim().toUpperCase()).filter(Boolean);
  const unknown = methods?.filter((m) => !(PAY_METHODS as readonly string[]).includes(m)) ?? [];
  if (unknown.length) throw new OperatorError(`--methods: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a method; choose from ${PAY_METHODS.join(', ')}`);
  try {
    const view = await setSettings(ctx, storeCode, {
      processor: v.processor as CheckoutProcessorId | undefined, way: v.way as PayWay | undefined, methods: methods as PayMethod[] | undefined, keys: v.keys,
    }, clock.nowMs());
    return printable(view);
  } catch (err) {
    if (err instanceof SettingsProblem) throw problemsOf(err);
    throw err;
  }
}

export async function resetStoreProcessor(session: Session, storeCode: string) {
  const { ctx } = await opened(session, storeCode);
  return printable(await resetSettings(ctx, storeCode));
}

/** Text output: one line per setting, one per processor's keys (never a secret). */
export function printStore(result: Record<string, unknown>, json: boolean): number {
  if (json) {
    process.stdout.write(JSON.stringify(result) + '\n');
    return 0;
  }
  const v = result as unknown as ReturnType<typeof printable>;
  const lines = [`storeCode: ${v.storeCode}`, `processor: ${v.processor}`, `way: ${v.way}`, `methods: ${v.methods.join(', ')}`, `source: ${v.source}`];
  for (const k of v.keys) {
    const shown = [k.clientKey && `clientKey ${k.clientKey}`, k.storeId && `storeId ${k.storeId}`, k.channelKey && `channelKey ${k.channelKey}`].filter(Boolean);
    lines.push(`keys ${k.processor}: ${[...shown, `secrets set: ${k.secretsSet.join(', ') || '(none)'}`].join('; ')}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
