import { createPlatform, createStore, rotateKey } from '../gateway/index.js';
import { createAccount, grantPoints, setInvoicingEnabled, setRoleByEmail } from '../invoicing/index.js';
import type { Options, Values } from './args.js';
import { doctor, doctorText, type DoctorReport } from './doctor.js';
import type { Session } from './session.js';
import { resetPassword } from './reset-password.js';
import { printStore, resetStoreProcessor, setStoreProcessor, showStore } from './store-processor.js';

/** Environment variables a command's help explains; the rest of the configuration is in README.md. */
export const ENV = {
  DATABASE_URL: 'the database: sqlite:PATH or postgres://user@host:5432/db (default sqlite:./data/sunap.db)',
  SUNAP_MODE: 'sandbox (default) or live; in sandbox, times follow the shared sandbox clock',
  SUNAP_SECRET_KEY: 'master key (64 hex characters) that encrypts API keys at rest; sandbox: generated beside the database when unset; live: required',
  PORT: 'listen port (default 8080)',
  HOST: 'listen address (default 127.0.0.1)',
  LOG_LEVEL: 'log level of the JSON log lines: fatal, error, warn, info (default), debug, trace or silent',
  SUNAP_PUBLIC_URL: 'the base of every link Sunap hands out; https in live mode',
  SUNAP_CARD_PROCESSOR: 'sandbox (default), toss (Toss Payments\' payment window) or toss-keyin (its card-number API, by contract only), with the SUNAP_TOSS_* settings (README.md, Configuration); a store\'s own processor (sunap store set-processor) comes first',
  SUNAP_MESSAGING_PROVIDER: 'sandbox (default) or solapi, with the SUNAP_SOLAPI_* settings (README.md, Configuration)',
} as const;
export type EnvVar = keyof typeof ENV;

/** null: the command keeps running (serve) and prints nothing itself. */
export type Result = Record<string, unknown> | null;

export interface Command<O extends Options = Options> {
  /** One or two words: `migrate`, `platform create`. */
  name: string;
  summary: string;
  options: O;
  env: readonly EnvVar[];
  /** What `--json` prints, for the help. */
  json: string;
  /** A closing paragraph of the help, if any. */
  more?: string;
  run(values: Values<O>, session: Session): Promise<Result>;
  /** Prints the result itself (instead of key: value lines) and says the exit code. */
  print?(result: Record<string, unknown>, json: boolean): number;
}

// Keeps each entry's run() typed by its own options while the table holds them all.
function command<const O extends Options>(c: Command<O>): Command {
  return c as unknown as Command;
}

const DB = ['DATABASE_URL', 'SUNAP_MODE'] as const;
const email = { type: 'string', required: true, value: 'EMAIL', description: 'the account\'s sign-in email (any case)' } as const;

export const commands: readonly Command[] = [
  command({
    name: 'serve',
    summary: 'run the server (gateway, invoicing, job worker) until SIGTERM or SIGINT; the same as npm start',
    options: {},
    env: ['DATABASE_URL', 'SUNAP_MODE', 'SUNAP_SECRET_KEY', 'PORT', 'HOST', 'LOG_LEVEL'],
    json: 'nothing of its own: the server logs JSON lines on stdout either way',
    more: 'The other settings (SUNAP_PUBLIC_URL, rate limits, job worker, outbound time limit) are listed in README.md, section Configuration. A bad value stops the start (exit 2); a failure to start, such as a port in use or another server already on the same SQLite file (the lock file DATABASE.lock beside it), exits 1.',
    run: async () => {
      const { serve } = await import('../server.js');
      try {
        await serve();
      } catch (err) {
        // The app is half built (database open, worker timers): exit rather than linger.
        process.stderr.write(`sunap: could not start: ${(err as Error).message}\n`);
        process.exit(1);
      }
      return null;
    },
  }),
  command({
    name: 'doctor',
    summary: 'check a configuration without changing anything: database reachable and migrated, secret key, each provider\'s credentials (a harmless authenticated call), public URL',
    options: {},
    env: ['DATABASE_URL', 'SUNAP_MODE', 'SUNAP_SECRET_KEY', 'SUNAP_PUBLIC_URL', 'SUNAP_CARD_PROCESSOR', 'SUNAP_MESSAGING_PROVIDER'],
    json: '{"ok": true|false, "checks": [{"name", "status": "ok"|"warn"|"fail", "detail"}]}',
    more: 'One line per check (status, name, detail). It applies no migration, writes no key file, sends no message and charges no card. Exit 0 when no check failed (warnings allowed), 1 when one did, 2 when the configuration itself is refused (the line says why). Run it before going live (docs/going-live.md).',
    run: async () => ({ ...(await doctor()) }),
    print: (result, json) => {
      const report = result as unknown as DoctorReport;
      process.stdout.write(json ? JSON.stringify({ ok: report.ok, checks: report.checks }) + '\n' : doctorText(report));
      return report.configError ? 2 : report.ok ? 0 : 1;
    },
  }),
  command({
    name: 'migrate',
    summary: 'apply the database migrations not applied yet (serve and the other commands do it first too)',
    options: {},
    env: ['DATABASE_URL'],
    json: '{"applied": [...]}: the names of the migrations this run applied, oldest first ([] when up to date)',
    run: async (_, session) => ({ applied: (await session.open()).applied }),
  }),
  command({
    name: 'platform create',
    summary: 'create a platform and its first API key',
    options: {
      name: { type: 'string', required: true, value: 'NAME', description: 'the platform\'s name' },
    },
    env: [...DB, 'SUNAP_SECRET_KEY'],
    json: '{"platformCode": "PC...", "apiKey": "sk_..."}; the key is shown only this once',
    run: async (v, session) => {
      const { database, box, clock } = await session.open();
      return createPlatform(database.db, box, clock.nowMs(), { name: v.name });
    },
  }),
  command({
    name: 'platform rotate-key',
    summary: 'issue a new API key for a platform; the previous one keeps signing for a grace period',
    options: {
      'platform-code': { type: 'string', required: true, value: 'CODE', description: 'the platform whose key is replaced' },
      'grace-seconds': {
        type: 'integer', value: 'SECONDS', min: 0, max: 999_999_999, default: 0,
        description: 'how long the previous key keeps signing, by the service clock (default 0: refused at once); older keys stop at once',
      },
    },
    env: [...DB, 'SUNAP_SECRET_KEY'],
    json: '{"platformCode": "PC...", "apiKey": "sk_..."}: the new key, shown only this once',
    run: async (v, session) => {
      const { database, box, clock } = await session.open();
      return rotateKey(database.db, box, clock.nowMs(), { platformCode: v['platform-code'], graceSeconds: v['grace-seconds'] });
    },
  }),
  command({
    name: 'store create',
    summary: 'create a store (a merchant) under a platform',
    options: {
      'platform-code': { type: 'string', required: true, value: 'CODE', description: 'the platform the store belongs to' },
      name: { type: 'string', required: true, value: 'NAME', description: 'the store\'s name' },
      'ceo-name': { type: 'string', value: 'NAME', description: 'the representative\'s name' },
      'biz-reg-num': { type: 'string', value: 'NUMBER', description: 'the business registration number' },
      tel: { type: 'string', value: 'PHONE', description: 'the store\'s phone number' },
      'no-cat': { type: 'boolean', description: 'no online-terminal (CAT) information: cancels of its payments are refused with 4006' },
    },
    env: DB,
    json: '{"storeCode": "SD..."}',
    run: async (v, session) => {
      const { database, clock } = await session.open();
      return createStore(database.db, clock.nowMs(), {
        platformCode: v['platform-code'], name: v.name, ceoName: v['ceo-name'], bizRegNum: v['biz-reg-num'], tel: v.tel, cat: !v['no-cat'],
      });
    },
  }),
  command({
    name: 'store show',
    summary: 'show a store\'s processor, way (window or key-in), offered methods and keys (secrets are named, never shown)',
    options: { 'store-code': { type: 'string', required: true, value: 'CODE', description: 'the store' } },
    env: [...DB, 'SUNAP_SECRET_KEY', 'SUNAP_CARD_PROCESSOR'],
    json: '{"storeCode", "processor", "way", "methods": [...], "source": "store"|"operator", "keys": [{"processor", "clientKey"?, "storeId"?, "channelKey"?, "secretsSet": [...]}]}',
    more: 'source is "operator" while the store has no settings of its own: it then takes payments with SUNAP_CARD_PROCESSOR and its keys.',
    run: async (v, session) => showStore(session, v['store-code']),
    print: printStore,
  }),
  command({
    name: 'store set-processor',
    summary: 'set a store\'s own processor, way, offered methods and keys (secrets sealed with SUNAP_SECRET_KEY, never shown again)',
    options: {
      'store-code': { type: 'string', required: true, value: 'CODE', description: 'the store' },
      processor: { type: 'string', value: 'NAME', description: 'sandbox, toss or portone (default: the current one)' },
      way: { type: 'string', value: 'WAY', description: 'checkout (the processor\'s own window; the default) or key-in (Sunap\'s card form and the card-number API; only with a key-in contract)' },
      methods: { type: 'string', value: 'LIST', description: 'the methods the payment page offers, comma-separated: CARD, EASY_PAY, TRANSFER, VIRTUAL_ACCOUNT, MOBILE_PHONE (default CARD,EASY_PAY,VIRTUAL_ACCOUNT)' },
      'client-key': { type: 'string', value: 'KEY', description: 'toss: the client key of the API individual integration (test_ck_… / live_ck_…)' },
      'secret-key': { type: 'string', value: 'KEY', description: 'toss: the secret key of the same pair (test_sk_… / live_sk_…); sealed, never shown again' },
      'api-secret': { type: 'string', value: 'SECRET', description: 'portone: the V2 API secret; sealed, never shown again' },
      'store-id': { type: 'string', value: 'ID', description: 'portone: the store id (store-…)' },
      'channel-key': { type: 'string', value: 'KEY', description: 'portone: the channel key of the store\'s PG contract (channel-key-…)' },
      'webhook-secret': { type: 'string', value: 'SECRET', description: 'portone: the webhook secret (whsec_…); sealed, never shown again' },
    },
    env: [...DB, 'SUNAP_SECRET_KEY', 'SUNAP_CARD_PROCESSOR'],
    json: 'the store as `sunap store show --json` prints it after the change',
    more: 'A key left out keeps its stored value, so a secret is given once. Without keys of its own a store uses the operator\'s (SUNAP_TOSS_*) for the same processor. Payments keep the processor that took them: a later change never moves their cancels and look-ups. A secret on a command line lands in the shell\'s history: pass it from a variable (--secret-key "$TOSS_SECRET_KEY").',
    run: async (v, session) => setStoreProcessor(session, v['store-code'], {
      processor: v.processor, way: v.way, methods: v.methods,
      keys: { clientKey: v['client-key'], secretKey: v['secret-key'], apiSecret: v['api-secret'], storeId: v['store-id'], channelKey: v['channel-key'], webhookSecret: v['webhook-secret'] },
    }),
    print: printStore,
  }),
  command({
    name: 'store reset-processor',
    summary: 'forget a store\'s own processor settings and keys: it takes payments with the operator\'s processor again',
    options: { 'store-code': { type: 'string', required: true, value: 'CODE', description: 'the store' } },
    env: [...DB, 'SUNAP_SECRET_KEY', 'SUNAP_CARD_PROCESSOR'],
    json: 'the store as `sunap store show --json` prints it after the change (source "operator")',
    run: async (v, session) => resetStoreProcessor(session, v['store-code']),
    print: printStore,
  }),
  command({
    name: 'account create',
    summary: 'create a store\'s first owner: an invoicing account that signs in to the console (/console) and invites its team there',
    options: {
      email: { ...email, description: 'the sign-in email (kept in lower case)' },
      password: { type: 'string', required: true, value: 'PASSWORD', description: 'the sign-in password, 8 to 200 characters' },
      'store-code': { type: 'string', required: true, value: 'CODE', description: 'the store whose payments the account\'s invoices use' },
    },
    env: DB,
    json: '{"accountId", "email", "storeCode"}: the email as kept (lower case)',
    run: async (v, session) => {
      const { database, clock } = await session.open();
      return createAccount(database.db, clock.nowMs(), { email: v.email, password: v.password, storeCode: v['store-code'] });
    },
  }),
  command({
    name: 'account enable',
    summary: 'let an account sign in and use invoicing again',
    options: { email },
    env: ['DATABASE_URL'],
    json: '{"email": "...", "invoicingEnabled": true}',
    run: async (v, session) => setInvoicingEnabled((await session.open()).database.db, { email: v.email, enabled: true }),
  }),
  command({
    name: 'account disable',
    summary: 'refuse an account\'s sign-ins and calls (its data stays) until it is enabled again',
    options: { email },
    env: ['DATABASE_URL'],
    json: '{"email": "...", "invoicingEnabled": false}',
    run: async (v, session) => setInvoicingEnabled((await session.open()).database.db, { email: v.email, enabled: false }),
  }),
  command({
    name: 'account reset-password',
    summary: 'let a member back in: print a one-time link (an hour, once) to choose a new password in the console, or set --password',
    options: {
      email,
      password: { type: 'string', value: 'PASSWORD', description: 'set this password now (8 to 200 characters) instead of printing a link' },
    },
    env: ['DATABASE_URL', 'SUNAP_MODE', 'SUNAP_PUBLIC_URL'],
    json: '{"email", "link", "expiresAt", "validMinutes": 60} or, with --password, {"email", "passwordSet": true, "sessionsEnded": N}',
    more: 'The link opens /console/reset/<token> under SUNAP_PUBLIC_URL; only its hash is kept, a newer link revokes older ones. Setting the password (by the link or --password) ends the member\'s console sessions and API tokens. Either way the team\'s audit log records it.',
    run: async (v, session) => resetPassword(session, { email: v.email, password: v.password }),
  }),
  command({
    name: 'account set-role',
    summary: 'change a team member\'s role in the console (owner, manager or viewer); gives a team that lost its owners an owner again',
    options: {
      email,
      role: { type: 'string', required: true, value: 'ROLE', choices: ['owner', 'manager', 'viewer'], description: 'owner (everything: team, settings), manager (payments, invoices, points) or viewer (reads only)' },
    },
    env: ['DATABASE_URL'],
    json: '{"email", "role", "storeCode", "owners"}: owners is the number of owners the team has after the change',
    more: 'The team keeps at least one owner: demoting its last owner is refused (exit 1) until another member is an owner. The member\'s console sessions stay signed in and see the new role on their next page.',
    run: async (v, session) => setRoleByEmail((await session.open()).database.db, { email: v.email, role: v.role }),
  }),
  command({
    name: 'points grant',
    summary: 'add send points to an account (a GRANT row in its ledger)',
    options: {
      email,
      amount: { type: 'integer', required: true, value: 'POINTS', min: 1, max: 1_000_000_000, description: 'the points to add' },
      memo: { type: 'string', value: 'TEXT', description: 'a note kept on the ledger row' },
    },
    env: DB,
    json: '{"balance": N}: the balance after the grant',
    run: async (v, session) => {
      const { database, clock } = await session.open();
      return grantPoints(database.db, clock.nowMs(), { email: v.email, amount: v.amount, memo: v.memo });
    },
  }),
];

/** The first word of the two-word commands. */
export const groups = [...new Set(commands.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!))];

/** The command named by the first words of argv, and the arguments after its name. */
export function findCommand(argv: string[]): { command: Command; rest: string[] } | null {
  const two = commands.find((c) => c.name === `${argv[0]} ${argv[1]}`);
  if (two) return { command: two, rest: argv.slice(2) };
  const one = commands.find((c) => c.name === argv[0]);
  return one ? { command: one, rest: argv.slice(1) } : null;
}
