import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { OperatorError, storeByCode } from '../gateway/index.js';
import type { Clock } from '../platform/clock.js';
import { hashPassword, newId, randomToken, sha256Hex, verifyPassword } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
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

/** The wait after attempt 1, 2, ... in milliseconds, up to the first that reaches the cap (which repeats). */
const LOCKOUTS_MS: readonly number[] = (() => {
  const out: number[] = [];
  for (let n = 1; ; n++) {
    out.push(lockoutSeconds(n) * 1000);
    if (lockoutSeconds(n) >= THROTTLE.maxSeconds) return out;
  }
})();

/** The per-address limit counts every sign-in attempt in a fixed window of one minute. */
const ADDRESS_WINDOW_MS = 60_000;

/**
 * Drops sign-in throttle rows that are forgotten anyway (a quiet quarter of an hour), so
 * guesses at unknown emails leave nothing behind. Runs hourly: each run schedules the next
 * under the next hour's unique key, so instances never schedule it twice.
 */
export const THROTTLE_PURGE_EVERY_MS = 3600_000;
export const THROTTLE_PURGE_JOB: JobDefinition<{ hour: number }, AuthService> = defineJob({
  kind: 'invoicing.throttle-purge',
  backoffSeconds: [60, 300],
  housekeeping: true,
  async run(_payload: { hour: number }, auth: AuthService) {
    await auth.purgeThrottles();
  },
});

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * The one rule for an account's email and password, wherever an account is made or its
 * password changed (the operator's `sunap account create`, a console invite, a password
 * change): the problem as `field: reason`, or null.
 */
export function emailProblem(email: string, field = 'email'): string | null {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) && email.length <= 254 ? null : `${field}: must be an email address`;
}

export function passwordProblem(password: string, field = 'password'): string | null {
  if (password.length < 8) return `${field}: must be at least 8 characters`;
  if (password.length > 200) return `${field}: must be at most 200 characters`;
  return null;
}

/** The account whose invoices, wallet and templates `a` works on (src/invoicing/team.ts). */
export function tenantOf(a: Pick<Account, 'id' | 'tenant_id'>): string {
  return a.tenant_id ?? a.id;
}

// ---- operator actions (the `sunap account|points` commands, and tests) --------------------

export async function createAccount(db: Kysely<Database>, now: number, input: { email: string; password: string; storeCode: string; invoicingEnabled?: boolean }) {
  const email = normalizeEmail(input.email);
  const problem = emailProblem(email, '--email') ?? passwordProblem(input.password, '--password');
  if (problem) throw new OperatorError(problem);
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

function tooMany(waitMs: number, what: string): AppError {
  return new AppError('TOO_MANY', `too many ${what}; try again in ${Math.max(1, Math.ceil(waitMs / 1000))} seconds`);
}

/** A hash that verifies nothing, so an unknown email costs as much time as a wrong password. */
let dummyHash: Promise<string> | null = null;

export class AuthService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    /** Sign-in attempts a minute per client address (SUNAP_LOGIN_RATE_LIMIT); 0: none. */
    private readonly opts: { perAddressPerMinute: number } = { perAddressPerMinute: 0 },
  ) {}

  async login(emailRaw: string, password: string, from?: string): Promise<TokenPair> {
    const account = await this.checkPassword(emailRaw, password, from);
    if (!account.invoicing_enabled) throw new AppError('FORBIDDEN', 'account: may not use invoicing');
    return this.issue(account.id, newId(), this.clock.nowMs());
  }

  /**
   * The one password check of every sign-in (the invoicing API's login and the console's),
   * behind two throttles kept in the database, so they hold across instances: at most
   * `perAddressPerMinute` attempts a minute from one client address (`from`), then the
   * per-email lockout. Each takes its slot with one atomic upsert BEFORE the password hash
   * runs: a burst of simultaneous guesses cannot all be checked. The account, or -3 (wrong
   * email or password) / -29.
   */
  async checkPassword(emailRaw: string, password: string, from?: string): Promise<Account> {
    const email = normalizeEmail(emailRaw);
    const now = this.clock.nowMs();
    if (from !== undefined && this.opts.perAddressPerMinute > 0) {
      const a = await repo.takeWindowAttempt(this.db, `addr:${from}`, now, ADDRESS_WINDOW_MS);
      if (a.attempts > this.opts.perAddressPerMinute) throw tooMany(a.windowEndsAt - now, 'sign-in attempts from this address');
    }
    const key = `email:${email}`;
    if ((await repo.takeEmailAttempt(this.db, key, now, THROTTLE.forgetSeconds * 1000, LOCKOUTS_MS)) === null) {
      const t = await repo.getThrottle(this.db, key);
      throw tooMany((t ? Number(t.next_allowed_at) : now + 1000) - now, 'failed logins');
    }
    const account = await repo.findAccountByEmail(this.db, email);
    dummyHash ??= hashPassword('not a password');
    const ok = await verifyPassword(password, account?.password_hash ?? (await dummyHash));
    if (!account || !ok) throw new AppError('BAD_CREDENTIALS', 'email, password: wrong email or password');
    // The right password forgets the email's failures (the address keeps its count).
    await repo.clearThrottle(this.db, key);
    return account;
  }

  /** Deletes forgotten throttle rows; schedules the next purge. */
  async purgeThrottles(): Promise<number> {
    const now = this.clock.nowMs();
    const n = await repo.purgeThrottles(this.db, now - THROTTLE.forgetSeconds * 1000);
    await this.schedulePurge(now + THROTTLE_PURGE_EVERY_MS);
    return n;
  }

  /** Makes sure a purge is due at `at` (idempotent: one job per hour, whichever instance writes it). */
  async schedulePurge(at = this.clock.nowMs()): Promise<void> {
    const hour = Math.floor(at / THROTTLE_PURGE_EVERY_MS);
    await enqueue(this.db, THROTTLE_PURGE_JOB, { hour }, { runAt: at, uniqueKey: `invoicing.throttle-purge:${hour}`, now: this.clock.nowMs() });
  }

  /**
   * Signs an API session out: the access token presented and every token of its login (its
   * refresh token, and any rotated from it) are revoked, so neither works again.
   */
  async logout(header: unknown): Promise<void> {
    const token = Array.isArray(header) ? header[0] : header;
    if (typeof token !== 'string' || token === '' || token.length > 200) return;
    const row = await repo.findToken(this.db, 'ACCESS', sha256Hex(token));
    if (row) await repo.revokeFamily(this.db, row.account_id, row.family_id, this.clock.nowMs());
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
