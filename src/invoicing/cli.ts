import { parseArgs } from 'node:util';
import type { Commands as CommandTable } from '../cli.js';
import { OperatorError } from '../gateway/merchants.js';
import { createAccount, grantPoints, setInvoicingEnabled } from './accounts.js';

/**
 * `sunap account ...` and `sunap points ...` (decisions §3); spread into the CLI's command
 * table. Only types come from ../cli.js, so importing this module never runs the CLI's own.
 */
type Flags = Record<string, { type: 'string' | 'boolean' }>;

function flags(args: string[], options: Flags): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new OperatorError((err as Error).message.split('\n')[0]!);
  }
}

function need(v: Record<string, string | boolean | undefined>, name: string): string {
  const x = v[name];
  if (typeof x !== 'string' || x === '') throw new OperatorError(`--${name}: is required`);
  return x;
}

export const Commands: CommandTable = {
  'account create': {
    usage: 'sunap account create --email E --password PW --store-code S [--json]',
    run: async (args, { store, clock }) => {
      const v = flags(args, { email: { type: 'string' }, password: { type: 'string' }, 'store-code': { type: 'string' } });
      return createAccount(store.db, clock.nowMs(), { email: need(v, 'email'), password: need(v, 'password'), storeCode: need(v, 'store-code') });
    },
  },
  'account disable': {
    usage: 'sunap account disable --email E [--json]',
    run: async (args, { store }) => setInvoicingEnabled(store.db, { email: need(flags(args, { email: { type: 'string' } }), 'email'), enabled: false }),
  },
  'account enable': {
    usage: 'sunap account enable --email E [--json]',
    run: async (args, { store }) => setInvoicingEnabled(store.db, { email: need(flags(args, { email: { type: 'string' } }), 'email'), enabled: true }),
  },
  'points grant': {
    usage: 'sunap points grant --email E --amount N [--memo M] [--json]',
    run: async (args, { store, clock }) => {
      const v = flags(args, { email: { type: 'string' }, amount: { type: 'string' }, memo: { type: 'string' } });
      const amount = need(v, 'amount');
      if (!/^\d{1,10}$/.test(amount)) throw new OperatorError('--amount: must be a whole number of points');
      return grantPoints(store.db, clock.nowMs(), { email: need(v, 'email'), amount: Number(amount), memo: v.memo as string | undefined });
    },
  },
};
