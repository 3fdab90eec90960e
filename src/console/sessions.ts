import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { GatewayService, Store } from '../gateway/index.js';
import type { Account, AuthService, TeamService } from '../invoicing/index.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256Hex } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import * as repo from './repository.js';
import type { SessionRow } from './repository.js';

/**
 * Console sessions live in the database (docs/console.md, "Sign-in and sessions"): the cookie
 * holds a random token, the row its SHA-256, so a session can be listed and revoked, and a
 * revoked one is signed out on its next request, on every instance.
 */
export const SESSION = {
  /** Signed out after this long without a request. */
  idleMs: 12 * 3_600_000,
  /** Signed out this long after signing in, however active. */
  maxMs: 7 * 86_400_000,
  /** last_seen_at is written at most this often (not on every request). */
  touchEveryMs: 5 * 60_000,
};

/** Who is signed in: the session, the member's own account, its team's account and store. */
export interface ConsoleUser {
  sessionId: string;
  member: Account;
  tenant: Account;
  store: Store;
}

export class Sessions {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: { clock: Clock; auth: AuthService; team: TeamService; gateway: GatewayService },
  ) {}

  /**
   * Signs in through the invoicing side's password check (the same per-email throttle as the
   * API's login): the new session's cookie token and who it is.
   */
  async signIn(email: string, password: string, meta: { ip: string; userAgent: string }): Promise<{ token: string; user: ConsoleUser }> {
    const member = await this.deps.auth.checkPassword(email, password, meta.ip);
    const user = await this.userOf(member, '');
    if (!user) throw new AppError('FORBIDDEN', 'account: this account may not sign in (disabled); ask the operator');
    const token = randomToken(32);
    const now = this.deps.clock.nowMs();
    const row: SessionRow = {
      id: sha256Hex(token), account_id: member.id, created_at: now, last_seen_at: now, expires_at: now + SESSION.idleMs,
      revoked_at: null, ip: meta.ip.slice(0, 64), user_agent: meta.userAgent.slice(0, 300),
    };
    await repo.insertSession(this.db, row);
    return { token, user: { ...user, sessionId: row.id } };
  }

  /** The user behind a cookie token, or null (unknown, revoked, expired, removed or disabled). */
  async resolve(token: string | undefined): Promise<ConsoleUser | null> {
    if (!token || token.length > 100) return null;
    const s = await repo.findSession(this.db, sha256Hex(token));
    const now = this.deps.clock.nowMs();
    if (!s || s.revoked_at !== null || s.expires_at <= now || s.created_at + SESSION.maxMs <= now) return null;
    const member = await this.deps.team.account(s.account_id);
    if (!member) return null;
    const user = await this.userOf(member, s.id);
    if (!user) return null;
    if (now - s.last_seen_at >= SESSION.touchEveryMs) await repo.touchSession(this.db, s.id, now, Math.min(now + SESSION.idleMs, s.created_at + SESSION.maxMs));
    return user;
  }

  private async userOf(member: Account, sessionId: string): Promise<ConsoleUser | null> {
    if (!member.invoicing_enabled) return null;
    const tenant = await this.deps.team.tenantOf(member);
    if (!tenant || !tenant.invoicing_enabled) return null;
    const store = await this.deps.gateway.findStore(tenant.store_code);
    return store ? { sessionId, member, tenant, store } : null;
  }

  list(accountId: string): Promise<SessionRow[]> {
    return repo.activeSessions(this.db, accountId, this.deps.clock.nowMs());
  }

  revoke(accountId: string, sessionId: string): Promise<boolean> {
    return repo.revokeSession(this.db, accountId, sessionId, this.deps.clock.nowMs());
  }

  /** Signs the account out everywhere (but `keep`, when given); how many sessions ended. */
  revokeAll(accountId: string, keep?: string): Promise<number> {
    return repo.revokeSessions(this.db, accountId, this.deps.clock.nowMs(), keep);
  }

  /** Before a member is removed: its sessions end with it. */
  drop(accountId: string): Promise<void> {
    return repo.deleteSessions(this.db, accountId);
  }
}
