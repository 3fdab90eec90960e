import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { OperatorError, storeByCode } from '../gateway/index.js';
import type { Clock } from '../platform/clock.js';
import { hashPassword, newId, randomToken, sha256Hex, verifyPassword } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
import { grant } from './points.js';
import * as repo from './repository.js';
import type { Account } from './repository.js';

/** Access token lifetime: accessTokenExpiresIn is 3600 seconds (docs/reference.md, "Invoicing: authentication and result_code values"). */
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

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The account whose invoices, wallet and templates `a` works on (src/invoicing/team.ts). */
export function tenantOf(a: Pick<Account, 'id' | 'tenant_id'>): string {
  return a.tenant_id ?? a.id;
}

// ---- operator actions (the `sunap account|points` commands, and tests) --------------------

export async function createAccount(db: Kysely<Database>, now: number, input: { email: string; password: string; storeCode: string; invoicingEnabled?: boolean }) {
  const email = normalizeEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) throw new OperatorError('--email: must be an email address');
  if (input.password.length < 8) throw new OperatorError('--password: must be at least 8 characters');
  if (input.password.length > 200) throw new OperatorError('--password: must be at most 200 characters');
  const store = await storeByCode(db, input.storeCode);
  if (!store) throw new OperatorError(`--store-code: no store ${input.storeCode}`);
  const accountId = newId();
  const passwordHash = await hashPassword(input.password);
  try {
    // The first owner of a new team: its own tenant (src/invoicing/team.ts).
    await db.transaction().execute((trx) => repo.insertAccount(trx, {
      id: accountId, email, password_hash: passwordHash, store_code: store.code,
      invoicing_enabled: input.invoicingEnabled === false ? 0 : 1, created_at: now, role: 'owner', tenant_id: accountId,
    }, now));
  } catch (e) {
    if (isUniqueViolation(e)) throw new OperatorError(`--email: an account with ${email} already exists`);
    throw e;
  }
  return { accountId, email, storeCode: store.code };
}

export async function setInvoicingEnabled(db: Kysely<Database>, input: { email: string; enabled: boolean }) {
  const email = normalizeEmail(input.email);
  if (!(await repo.setInvoicingEnabled(db, email, input.enabled))) throw new OperatorError(`--email: no account ${email}`);
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
    // A team member's email grants to the team's wallet, the one its invoices use.
    return { balance: await grant(trx, tenantOf(account), input.amount, input.memo ?? null, now) };
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
    const account = await this.checkPassword(emailRaw, password);
    if (!account.invoicing_enabled) throw new AppError('FORBIDDEN', 'account: may not use invoicing');
    return this.issue(account.id, newId(), this.clock.nowMs());
  }

  /**
   * The one password check of every sign-in (the invoicing API's login and the console's),
   * behind the per-email throttle: the account, or -3 (wrong email or password) / -29.
   */
  async checkPassword(emailRaw: string, password: string): Promise<Account> {
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
    return account;
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

  /**
   * The account behind an x-access-token header: -1 missing (HTTP 401) or unknown, revoked or
   * rotated (HTTP 200), -2 expired (HTTP 200), -4 not allowed. `tenant` is the account whose data the call works on (the team's), `member` the
   * one that signed in (its role).
   */
  async authenticate(header: unknown): Promise<{ tenant: Account; member: Account }> {
    const token = Array.isArray(header) ? header[0] : header;
    if (typeof token !== 'string' || token === '') throw new AppError('TOKEN_MISSING', 'x-access-token: missing; log in and send the access token');
    const unknown = () => new AppError('TOKEN_UNKNOWN', 'x-access-token: unknown, revoked or replaced access token; refresh it or log in again');
    if (token.length > 200) throw unknown();
    const row = await repo.findToken(this.db, 'ACCESS', sha256Hex(token));
    if (!row || row.revoked_at !== null) throw unknown();
    if (row.expires_at <= this.clock.nowMs()) throw new AppError('TOKEN_EXPIRED', 'x-access-token: expired; refresh it');
    if (!row.invoicing_enabled) throw new AppError('FORBIDDEN', 'account: may not use invoicing');
    const account = await repo.findAccountById(this.db, row.account_id);
    if (!account) throw unknown();
    return { tenant: await this.tenant(account), member: account };
  }

  /** The team's account for a member (the member itself for a team's first owner); -4 when the team may not use invoicing. */
  async tenant(member: Account): Promise<Account> {
    if (tenantOf(member) === member.id) return member;
    const tenant = await repo.findAccountById(this.db, tenantOf(member));
    if (!tenant || !tenant.invoicing_enabled) throw new AppError('FORBIDDEN', 'account: may not use invoicing');
    return tenant;
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
