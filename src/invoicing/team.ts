import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { hashPassword, newId } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
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

  /** Changes a member's role; the team's last owner stays an owner. */
  async setRole(tenantId: string, memberId: string, role: AccountRole): Promise<Account> {
    return this.db.transaction().execute(async (trx) => {
      const m = await team.teamAccount(trx, tenantId, memberId);
      if (!m) throw new AppError('NOT_FOUND', 'member: no such member of this team');
      if (m.role === 'owner' && role !== 'owner' && (await team.countOwners(trx, tenantId)) <= 1) {
        throw new AppError('STATE', 'role: the team needs at least one owner; make someone else an owner first');
      }
      await team.setRole(trx, tenantId, memberId, role);
      return { ...m, role };
    });
  }

  /** Removes a member and its API tokens; the team's first account (it holds the data) stays. */
  async remove(tenantId: string, memberId: string): Promise<Account> {
    return this.db.transaction().execute(async (trx) => {
      const m = await team.teamAccount(trx, tenantId, memberId);
      if (!m) throw new AppError('NOT_FOUND', 'member: no such member of this team');
      if (m.id === tenantId) throw new AppError('STATE', 'member: the team\'s first account holds its invoices and points; it cannot be removed');
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
}
