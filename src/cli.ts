import { parseArgs } from 'node:util';
import { migrate, openStore } from './db/index.js';
import { createPlatform, createStore, OperatorError, rotateKey } from './gateway/merchants.js';
import { Commands as InvoicingCommands } from './invoicing/cli.js';
import { ServiceClock } from './platform/clock.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { SecretBox } from './platform/crypto.js';

/**
 * The operator CLI (decisions §3). Every command takes --json (one JSON object on stdout,
 * nothing else); errors exit non-zero with one line on stderr. Uses the server's DATABASE_URL.
 */
export class UsageError extends Error {}

export type Handler = (args: string[], ctx: Ctx) => Promise<Record<string, unknown>>;
export interface Ctx {
  store: ReturnType<typeof openStore>;
  box: SecretBox;
  clock: ServiceClock;
}

export function opts<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]);
  }
}

export function required(v: Record<string, string | boolean | undefined>, name: string): string {
  const x = v[name];
  if (typeof x !== 'string' || x === '') throw new UsageError(`--${name}: is required`);
  return x;
}

export type Commands = Record<string, { usage: string; run: Handler }>;

const commands: Commands = {
  'platform create': {
    usage: 'sunap platform create --name N [--json]',
    run: async (args, { store, box, clock }) => {
      const v = opts(args, { name: { type: 'string' } });
      return createPlatform(store.db, box, clock.nowMs(), { name: required(v, 'name') });
    },
  },
  'platform rotate-key': {
    usage: 'sunap platform rotate-key --platform-code P [--grace-seconds N] [--json]',
    run: async (args, { store, box, clock }) => {
      const v = opts(args, { 'platform-code': { type: 'string' }, 'grace-seconds': { type: 'string' } });
      const grace = (v['grace-seconds'] as string | undefined) ?? '0';
      if (!/^\d{1,9}$/.test(grace)) throw new UsageError('--grace-seconds: must be a whole number of seconds');
      return rotateKey(store.db, box, clock.nowMs(), { platformCode: required(v, 'platform-code'), graceSeconds: Number(grace) });
    },
  },
  'store create': {
    usage: 'sunap store create --platform-code P --name N [--ceo-name C] [--biz-reg-num B] [--tel T] [--no-cat] [--json]',
    run: async (args, { store, clock }) => {
      const v = opts(args, {
        'platform-code': { type: 'string' }, name: { type: 'string' }, 'ceo-name': { type: 'string' },
        'biz-reg-num': { type: 'string' }, tel: { type: 'string' }, 'no-cat': { type: 'boolean' },
      });
      return createStore(store.db, clock.nowMs(), {
        platformCode: required(v, 'platform-code'), name: required(v, 'name'), ceoName: v['ceo-name'] as string | undefined,
        bizRegNum: v['biz-reg-num'] as string | undefined, tel: v.tel as string | undefined, cat: !v['no-cat'],
      });
    },
  },
  ...InvoicingCommands,
};

function print(json: boolean, result: Record<string, unknown>): void {
  if (json) {
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  for (const [k, v] of Object.entries(result)) process.stdout.write(`${k}: ${Array.isArray(v) ? v.join(', ') || '(none)' : v}\n`);
  if ('apiKey' in result) process.stdout.write('The API key is shown only this once; keep it secret.\n');
}

function usage(): string {
  const all = [
    'sunap serve', 'sunap migrate [--json]',
    ...Object.values(commands).map((c) => c.usage),
  ];
  return 'usage:\n' + all.map((u) => `  ${u}`).join('\n') + '\n';
}

export async function main(argv: string[]): Promise<number> {
  const [a, b, ...rest] = argv;
  const json = argv.includes('--json');
  if (!a || a === '--help' || a === 'help') {
    process.stdout.write(usage());
    return a ? 0 : 1;
  }
  if (a === 'serve') {
    const { serve } = await import('./server.js');
    await serve();
    return -1;
  }
  const name = a === 'migrate' ? 'migrate' : `${a} ${b ?? ''}`.trim();
  const cmd = commands[name];
  if (name !== 'migrate' && !cmd) {
    process.stderr.write(`sunap: unknown command "${name}"\n${usage()}`);
    return 64;
  }
  let store: ReturnType<typeof openStore> | null = null;
  try {
    const config = loadConfig();
    store = openStore(config.databaseUrl, { poolSize: 2 });
    const applied = await migrate(store.db);
    if (name === 'migrate') {
      print(json, { applied });
      return 0;
    }
    const clock = new ServiceClock(config.mode === 'sandbox' ? store.db : null);
    await clock.refresh();
    const result = await cmd!.run(rest, { store, box: new SecretBox(config.secretKey), clock });
    print(json, result);
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof OperatorError || err instanceof ConfigError || (err as Error).name === 'OperatorError') {
      process.stderr.write(`sunap: ${(err as Error).message}\n`);
      return err instanceof UsageError ? 64 : 1;
    }
    process.stderr.write(`sunap: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await store?.close();
  }
}

const isMain = process.argv[1] && /cli\.[tj]s$|sunap(\.js)?$/.test(process.argv[1]);
if (isMain) {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
}
