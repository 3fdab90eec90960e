import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { hashPassword, newId } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
import { OperatorError } from '../gateway/index.js';
import { emailProblem, normalizeEmail, passwordProblem, tenantOf, type AuthService } from './accounts.js';
import * as team from './console-repository.js';
import { ACCOUNT_ROLES, type AccountRole } from './invoice-state.js';
import * as repo from './repository.js';
import type { Account } from './repository.js';

/**
 * A store's team (docs/console.md, "Team"): the accounts that work on one tenant's invoices,
 * wallet and templates. The tenant is the team's first account (`sunap account create`); the
 * others join by invite. Roles: owner (everything, team, settings), manager (payments,
 * invoices, points), viewer (reads only). A team always keeps an owner.
 */
export const ROLE_RANK: Record<AccountRole, number> = { viewer: 0, manager: 1, owner: 2 };

export function hasRole(a: Pick<Account, 'role'>, needed: AccountRole): boolean {
  return ROLE_RANK[a.role] >= ROLE_RANK[needed];
}

export function isRole(v: unknown): v is AccountRole {
  return typeof v === 'string' && (ACCOUNT_ROLES as readonly string[]).includes(v);
}

const validation = (msg: string) => new AppError('VALIDATION', msg);

const LAST_OWNER = 'role: the team needs at least one owner; make someone else an owner first';

/**
 * A member's new role, keeping the team's last owner. The team is locked first (lockTeam), so
 * two owners demoting each other at the same moment cannot both see the other still an owner:
 * the second waits, then counts the first's change (on PostgreSQL each statement reads what is
 * committed; on SQLite the transaction holds the write lock).
 */
export async function setTeamRole(db: Kysely<Database>, tenantId: string, memberId: string, role: AccountRole): Promise<Account> {
  return db.transaction().execute(async (trx) => {
    await team.lockTeam(trx, tenantId);
    const m = await team.teamAccount(trx, tenantId, memberId);
    if (!m) throw new AppError('NOT_FOUND', 'member: no such member of this team');
    if (m.role === 'owner' && role !== 'owner' && (await team.countOwners(trx, tenantId)) <= 1) throw new AppError('STATE', LAST_OWNER);
    await team.setRole(trx, tenantId, memberId, role);
    return { ...m, role };
  });
}

/** The operator's `sunap account set-role` (README.md, "Operator CLI"): gives a team back an owner, or changes any member's role. */
export async function setRoleByEmail(db: Kysely<Database>, input: { email: string; role: string }): Promise<{ email: string; role: AccountRole; storeCode: string; owners: number }> {
  const role = input.role;
  // The command line refuses another value first (a usage error naming the nearest role).
  if (!isRole(role)) throw new OperatorError(`--role: must be ${ACCOUNT_ROLES.join(', ')}, got "${role}"`);
  const email = normalizeEmail(input.email);
  const account = await repo.findAccountByEmail(db, email);
  if (!account) throw new OperatorError(`--email: no account ${email}`);
  try {
    await setTeamRole(db, tenantOf(account), account.id, role);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'STATE') throw new OperatorError(`--role: ${email} is the team's last owner; make another member an owner first (sunap account set-role --email OTHER --role owner)`);
    throw err;
  }
  return { email, role, storeCode: account.store_code, owners: await team.countOwners(db, tenantOf(account)) };
}

export class TeamService {
  /** `auth`: the sign-in's password check and its throttles, which the change-password form shares. */
  constructor(private readonly db: Kysely<Database>, private readonly clock: Clock, private readonly auth: Pick<AuthService, 'checkPassword'>) {}

  /** An account by id: for a console session, which proved who it is by its cookie. */
  account(id: string): Promise<Account | undefined> {
    return repo.findAccountById(this.db, id);
  }

  /** The team's account of a member (itself for the first owner). */
  async tenantOf(member: Account): Promise<Account | undefined> {
    return tenantOf(member) === member.id ? member : repo.findAccountById(this.db, tenantOf(member));
  }

  members(tenantId: string): Promise<Account[]> {
    return team.teamAccounts(this.db, tenantId);
  }

  /** True when an account with this email exists anywhere (emails sign in, so they are unique). */
  /** An account by its sign-in email (any case): for the operator's commands. */
  accountByEmail(email: string): Promise<Account | undefined> {
    return repo.findAccountByEmail(this.db, normalizeEmail(email));
  }

  async emailTaken(email: string): Promise<boolean> {
    return !!(await repo.findAccountByEmail(this.db, normalizeEmail(email)));
  }

  /** A new member of the tenant's team (an accepted invite). */
  async addMember(tenant: Account, input: { email: string; password: string; role: AccountRole }): Promise<Account> {
    const email = normalizeEmail(input.email);
    const problem = emailProblem(email) ?? passwordProblem(input.password);
    if (problem) throw validation(problem);
    const row: Account = {
      id: newId(), email, password_hash: await hashPassword(input.password), store_code: tenant.store_code,
      invoicing_enabled: 1, created_at: this.clock.nowMs(), role: input.role, tenant_id: tenant.id,
    };
    try {
      await team.insertMember(this.db, row);
    } catch (e) {
      if (isUniqueViolation(e)) throw validation(`email: an account with ${email} already exists`);
      throw e;
    }
    return row;
  }

  /** Changes a member's role; the team's last owner stays an owner (atomically: see setTeamRole). */
  setRole(tenantId: string, memberId: string, role: AccountRole): Promise<Account> {
    return setTeamRole(this.db, tenantId, memberId, role);
  }

  /** Removes a member and its API tokens; the team's first account (it holds the data) stays, and so does its last owner. */
  async remove(tenantId: string, memberId: string): Promise<Account> {
    return this.db.transaction().execute(async (trx) => {
      await team.lockTeam(trx, tenantId);
      const m = await team.teamAccount(trx, tenantId, memberId);
      if (!m) throw new AppError('NOT_FOUND', 'member: no such member of this team');
      if (m.id === tenantId) throw new AppError('STATE', 'member: the team\'s first account holds its invoices and points; it cannot be removed');
      if (m.role === 'owner' && (await team.countOwners(trx, tenantId)) <= 1) throw new AppError('STATE', LAST_OWNER);
      await team.deleteMember(trx, tenantId, memberId);
      return m;
    });
  }

  /**
   * A new password after the current one is checked; the account's API tokens are revoked. The
   * current password is checked by the sign-in's own check (`from`: the client's address), so a
   * stolen session guessing it meets the same lockout as the sign-in form, per account and per
   * address, counted together with sign-ins (docs/security.md, "Sign-in throttling"); TOO_MANY
   * when locked.
   */
  async changePassword(account: Account, current: string, next: string, from?: string): Promise<void> {
    try {
      const checked = await this.auth.checkPassword(account.email, current, from);
      if (checked.id !== account.id) throw validation('current: is not your current password');
    } catch (err) {
      if (err instanceof AppError && err.kind === 'BAD_CREDENTIALS') throw validation('current: is not your current password');
      throw err;
    }
    const problem = passwordProblem(next, 'next');
    if (problem) throw validation(problem);
    const hash = await hashPassword(next);
    await this.db.transaction().execute(async (trx) => {
      await team.setPasswordHash(trx, account.id, hash);
      await team.revokeAllTokens(trx, account.id, this.clock.nowMs());
    });
  }

  /** Checks and hashes a password chosen without the current one (a reset link, the operator); VALIDATION naming `field` when it is not acceptable. */
  async newPasswordHash(next: string, field = 'password'): Promise<string> {
    const problem = passwordProblem(next, field);
    if (problem) throw validation(problem);
    return hashPassword(next);
  }

  /** Stores such a password's hash and revokes the account's API tokens, in the caller's transaction (with the reset it completes). */
  async storePasswordHash(trx: Transaction<Database>, accountId: string, hash: string): Promise<void> {
    await team.setPasswordHash(trx, accountId, hash);
    await team.revokeAllTokens(trx, accountId, this.clock.nowMs());
  }
}
