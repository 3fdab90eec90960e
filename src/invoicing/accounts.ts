import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { OperatorError } from '../gateway/merchants.js';
import type { Clock } from '../platform/clock.js';
import { hashPassword, newId, randomToken, sha256Hex, verifyPassword } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
import * as repo from './repository.js';
import type { Account } from './repository.js';

/** Access token lifetime (decisions §5, §8: accessTokenExpiresIn is 3600 seconds). */
export const ACCESS_TTL_SECONDS = 3600;
export const REFRESH_TTL_SECONDS = 30 * 86400;

/**
 * Failed logins per email: the first FREE_FAILURES cost nothing; after that each further try
 * waits a lockout that doubles from 30 s up to 15 min. A quiet quarter of an hour forgets them.
 */
export const THROTTLE = { freeFailures: 5, baseSeconds: 30, maxSeconds: 900, forgetSeconds: 900 };

export function lockoutSeconds(failures: number): number {
  if (failures < THROTTLE.freeFailures) return 0;
  return Math.min(THROTTLE.maxSeconds, THROTTLE.baseSeconds * 2 ** (failures - THROTTLE.freeFailures));
}

const normalizeEmail = (email: string) => email.trim().toLowerCase();

// ---- operator actions (the `sunap account|points` commands, and tests) --------------------

export async function createAccount(db: Kysely<Database>, now: number, input: { email: string; password: string; storeCode: string; invoicingEnabled?: boolean }) {
  const email = normalizeEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) throw new OperatorError('--email: must be an email address');
  if (input.password.length < 8) throw new OperatorError('--password: must be at least 8 characters');
  if (input.password.length > 200) throw new OperatorError('--password: must be at most 200 characters');
  const store = await db.selectFrom('stores').select('code').where('code', '=', input.storeCode).executeTakeFirst();
  if (!store) throw new OperatorError(`--store-code: no store ${input.storeCode}`);
  const accountId = newId();
  const passwordHash = await hashPassword(input.password);
  try {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('accounts').values({
        id: accountId, email, password_hash: passwordHash, store_code: store.code,
        invoicing_enabled: input.invoicingEnabled === false ? 0 : 1, created_at: now,
      }).execute();
      await trx.insertInto('wallets').values({ account_id: accountId, balance: 0, updated_at: now }).execute();
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new OperatorError(`--email: an account with ${email} already exists`);
    throw e;
  }
  return { accountId, email, storeCode: store.code };
}

export async function setInvoicingEnabled(db: Kysely<Database>, input: { email: string; enabled: boolean }) {
  const email = normalizeEmail(input.email);
  const r = await db.updateTable('accounts').set({ invoicing_enabled: input.enabled ? 1 : 0 }).where('email', '=', email).executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw new OperatorError(`--email: no account ${email}`);
  return { email, invoicingEnabled: input.enabled };
}

/** Adds send points: a GRANT ledger row and the balance change in one transaction. */
export async function grantPoints(db: Kysely<Database>, now: number, input: { email: string; amount: number; memo?: string }) {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0 || input.amount > 1_000_000_000) {
    throw new OperatorError('--amount: must be a whole number from 1 to 1000000000');
  }
  const email = normalizeEmail(input.email);
  return db.transaction().execute(async (trx) => {
    const account = await repo.findAccountByEmail(trx, email);
    if (!account) throw new OperatorError(`--email: no account ${email}`);
    await repo.addLedger(trx, [{ account_id: account.id, delta: input.amount, kind: 'GRANT', ref: null, memo: input.memo ?? null, created_at: now }]);
    await repo.credit(trx, account.id, input.amount, now);
    return { balance: await repo.balance(trx, account.id) };
  });
}

// ---- login and tokens ---------------------------------------------------------------------

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiresIn: number;
}

/** A hash that verifies nothing, so an unknown email costs as much time as a wrong password. */
let dummyHash: Promise<string> | null = null;

export class AuthService {
  constructor(private readonly db: Kysely<Database>, private readonly clock: Clock) {}

  async login(emailRaw: string, password: string): Promise<TokenPair> {
    const email = normalizeEmail(emailRaw);
    const key = `login:${email}`;
    const now = this.clock.nowMs();
    const t = await repo.getThrottle(this.db, key);
    const stale = !t || now - t.last_failure_at > THROTTLE.forgetSeconds * 1000;
    if (t && !stale) {
      const wait = t.last_failure_at + lockoutSeconds(t.failures) * 1000 - now;
      if (wait > 0) throw new AppError('TOO_MANY', `too many failed logins; try again in ${Math.ceil(wait / 1000)} seconds`);
    }
    const account = await repo.findAccountByEmail(this.db, email);
    dummyHash ??= hashPassword('not a password');
    const ok = await verifyPassword(password, account?.password_hash ?? (await dummyHash));
    if (!account || !ok) {
      await repo.recordLoginFailure(this.db, key, now, stale);
      throw new AppError('BAD_CREDENTIALS', 'email, password: wrong email or password');
    }
    if (t) await repo.clearThrottle(this.db, key);
    if (!account.invoicing_enabled) throw new AppError('FORBIDDEN', 'account: may not use invoicing');
    return this.issue(account.id, newId(), now);
  }

  /**
   * Rotation: a refresh token works once. Presenting one that was already rotated means it
   * leaked (or a client replayed it): the whole family, access tokens included, is revoked.
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const now = this.clock.nowMs();
    const row = await repo.findToken(this.db, 'REFRESH', sha256Hex(refreshToken));
    const refused = () => new AppError('BAD_CREDENTIALS', 'refreshToken: unknown, expired or already used');
    if (!row || row.revoked_at !== null) throw refused();
    if (row.rotated_at !== null) {
      await repo.revokeFamily(this.db, row.account_id, row.family_id, now);
      throw refused();
    }
    if (row.expires_at <= now) throw refused();
    if (!row.invoicing_enabled) throw new AppError('FORBIDDEN', 'account: may not use invoicing');
    const pair = await this.db.transaction().execute(async (trx) => {
      if (!(await repo.rotateToken(trx, row.id, now))) return null;
      return this.issue(row.account_id, row.family_id, now, trx);
    });
    if (!pair) {
      // Two uses of one refresh token at once: the same as a reuse.
      await repo.revokeFamily(this.db, row.account_id, row.family_id, now);
      throw refused();
    }
    return pair;
  }

  /** The account behind an x-access-token header: -1 missing/unknown, -2 expired, -4 not allowed. */
  async authenticate(header: unknown): Promise<Account> {
    const token = Array.isArray(header) ? header[0] : header;
    if (typeof token !== 'string' || token === '' || token.length > 200) {
      throw new AppError('TOKEN_MISSING', 'x-access-token: missing or unknown access token');
    }
    const row = await repo.findToken(this.db, 'ACCESS', sha256Hex(token));
    if (!row || row.revoked_at !== null) throw new AppError('TOKEN_MISSING', 'x-access-token: missing or unknown access token');
    if (row.expires_at <= this.clock.nowMs()) throw new AppError('TOKEN_EXPIRED', 'x-access-token: expired; refresh it');
    if (!row.invoicing_enabled) throw new AppError('FORBIDDEN', 'account: may not use invoicing');
    const account = await repo.findAccountById(this.db, row.account_id);
    if (!account) throw new AppError('TOKEN_MISSING', 'x-access-token: missing or unknown access token');
    return account;
  }

  private async issue(accountId: string, familyId: string, now: number, db: repo.Db = this.db): Promise<TokenPair> {
    const accessToken = `sat_${randomToken(32)}`;
    const refreshToken = `srt_${randomToken(32)}`;
    const row = (kind: 'ACCESS' | 'REFRESH', token: string, ttl: number) => ({
      id: newId(), account_id: accountId, family_id: familyId, kind, token_hash: sha256Hex(token),
      expires_at: now + ttl * 1000, rotated_at: null, revoked_at: null, created_at: now,
    });
    await repo.insertTokens(db, [row('ACCESS', accessToken, ACCESS_TTL_SECONDS), row('REFRESH', refreshToken, REFRESH_TTL_SECONDS)]);
    return { accessToken, refreshToken, accessTokenExpiresIn: ACCESS_TTL_SECONDS };
  }
}
