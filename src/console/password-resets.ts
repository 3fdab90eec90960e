import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Account, TeamService } from '../invoicing/index.js';
import type { Clock } from '../platform/clock.js';
import { newId, randomToken, sha256Hex } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import * as repo from './repository.js';
import type { ResetRow } from './repository.js';

/** A reset link works for one hour, once; a newer link for the same member revokes the older ones. */
export const RESET_TTL_MS = 60 * 60_000;

/** Who made a reset link when no member did: the operator's CLI (`sunap account reset-password`). */
export const OPERATOR = 'operator';

/**
 * The way back in (docs/console.md, "Getting back in"): a one-time link to choose a new
 * password, made by the team's owner (Team page) or by the operator (the CLI prints it). Only
 * the SHA-256 of the link's token is kept. Using it sets the password, revokes the member's API
 * tokens and ends every console session of the member, in one transaction with marking the
 * link used (a conditional update, so two uses at once make one change).
 */
export class PasswordResets {
  constructor(private readonly db: Kysely<Database>, private readonly deps: { clock: Clock; team: TeamService }) {}

  /** A new link's token for the member (the link is `/console/reset/<token>`). */
  async create(tenantId: string, member: Account, createdBy: string): Promise<{ reset: ResetRow; token: string }> {
    const token = randomToken(32);
    const now = this.deps.clock.nowMs();
    const reset: ResetRow = {
      id: newId(), tenant_id: tenantId, account_id: member.id, token_hash: sha256Hex(token), created_by: createdBy,
      created_at: now, expires_at: now + RESET_TTL_MS, used_at: null, revoked_at: null,
    };
    await this.db.transaction().execute((trx) => repo.insertReset(trx, reset, now));
    return { reset, token };
  }

  /** The reset behind a link and its member, while it can still be used; undefined otherwise. */
  async usable(token: string): Promise<{ reset: ResetRow; member: Account } | undefined> {
    if (token.length > 100) return undefined;
    const reset = await repo.findResetByToken(this.db, sha256Hex(token));
    if (!reset || reset.used_at !== null || reset.revoked_at !== null || reset.expires_at <= this.deps.clock.nowMs()) return undefined;
    const member = await this.deps.team.account(reset.account_id);
    return member ? { reset, member } : undefined;
  }

  /** Sets the new password through the link, once; how many console sessions it ended. */
  async use(token: string, password: string): Promise<{ member: Account; sessionsEnded: number }> {
    const found = await this.usable(token);
    if (!found) throw new AppError('NOT_FOUND', 'reset: this link is unknown, used, revoked or expired');
    const hash = await this.deps.team.newPasswordHash(password);
    const sessionsEnded = await this.db.transaction().execute(async (trx) => {
      const now = this.deps.clock.nowMs();
      if (!(await repo.useReset(trx, found.reset.id, now))) throw new AppError('NOT_FOUND', 'reset: this link was used already');
      await this.deps.team.storePasswordHash(trx, found.member.id, hash);
      return repo.revokeSessions(trx, found.member.id, now);
    });
    return { member: found.member, sessionsEnded };
  }

  /** The operator sets a password directly (`--password`): the same effects as a link, no link; how many console sessions it ended. */
  async setDirectly(member: Account, password: string): Promise<number> {
    const hash = await this.deps.team.newPasswordHash(password, '--password');
    return this.db.transaction().execute(async (trx) => {
      await this.deps.team.storePasswordHash(trx, member.id, hash);
      return repo.revokeSessions(trx, member.id, this.deps.clock.nowMs());
    });
  }
}
