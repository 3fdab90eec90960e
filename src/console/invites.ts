import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { emailProblem, normalizeEmail, type Account, type AccountRole, type TeamService } from '../invoicing/index.js';
import type { Clock } from '../platform/clock.js';
import { newId, randomToken, sha256Hex } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import * as repo from './repository.js';
import type { InviteRow } from './repository.js';

/** An invite link works for three days, once. */
export const INVITE_TTL_MS = 3 * 86_400_000;

/**
 * Invites (docs/console.md, "Team"): the owner invites an email with a role; the link (shown
 * once, only its hash is kept) lets that person choose a password and join the team.
 */
export class Invites {
  constructor(private readonly db: Kysely<Database>, private readonly deps: { clock: Clock; team: TeamService }) {}

  /** A new invite and its token (the link is `/console/invite/<token>`). */
  async create(tenant: Account, invitedBy: Account, emailRaw: string, role: AccountRole): Promise<{ invite: InviteRow; token: string }> {
    const email = normalizeEmail(emailRaw);
    const problem = emailProblem(email);
    if (problem) throw new AppError('VALIDATION', problem);
    if (await this.deps.team.emailTaken(email)) throw new AppError('VALIDATION', `email: an account with ${email} already exists`);
    const token = randomToken(32);
    const now = this.deps.clock.nowMs();
    const invite: InviteRow = {
      id: newId(), tenant_id: tenant.id, email, role, token_hash: sha256Hex(token), invited_by: invitedBy.email, created_at: now,
      expires_at: now + INVITE_TTL_MS, accepted_at: null, revoked_at: null,
    };
    await repo.insertInvite(this.db, invite);
    return { invite, token };
  }

  open(tenantId: string): Promise<InviteRow[]> {
    return repo.openInvites(this.db, tenantId);
  }

  /** The invite behind a link, while it can still be accepted; undefined otherwise. */
  async usable(token: string): Promise<InviteRow | undefined> {
    if (token.length > 100) return undefined;
    const inv = await repo.findInviteByToken(this.db, sha256Hex(token));
    if (!inv || inv.accepted_at !== null || inv.revoked_at !== null || inv.expires_at <= this.deps.clock.nowMs()) return undefined;
    return inv;
  }

  /** Accepts the invite once: the new member's account. */
  async accept(token: string, password: string): Promise<Account> {
    const inv = await this.usable(token);
    if (!inv) throw new AppError('NOT_FOUND', 'invite: this invite link is unknown, used, revoked or expired');
    const tenant = await this.deps.team.account(inv.tenant_id);
    if (!tenant) throw new AppError('NOT_FOUND', 'invite: the team no longer exists');
    if (!(await repo.acceptInvite(this.db, inv.id, this.deps.clock.nowMs()))) throw new AppError('NOT_FOUND', 'invite: this invite link was used already');
    try {
      return await this.deps.team.addMember(tenant, { email: inv.email, password, role: inv.role });
    } catch (err) {
      // Not joined after all (a password too short, the email taken meanwhile): the link works again.
      await repo.reopenInvite(this.db, inv.id);
      throw err;
    }
  }

  revoke(tenantId: string, id: string): Promise<boolean> {
    return repo.revokeInvite(this.db, tenantId, id, this.deps.clock.nowMs());
  }
}
