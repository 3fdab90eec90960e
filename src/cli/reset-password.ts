import { AuditLog, OPERATOR, PasswordResets, RESET_TTL_MS } from '../console/index.js';
import { OperatorError } from '../gateway/index.js';
import { AuthService, TeamService } from '../invoicing/index.js';
import { AppError } from '../platform/errors.js';
import { kstIso } from '../platform/kst.js';
import type { Session } from './session.js';

/**
 * `sunap account reset-password` (docs/console.md, "Getting back in"): for a member who cannot
 * sign in and has no owner to ask (the owner themself). Without `--password` it prints a
 * one-time link to the console's reset page (an hour, once; it revokes earlier links); with it,
 * it sets that password. Either way the reset is on the team's audit log, and a password set
 * ends the member's console sessions and API tokens.
 */
export async function resetPassword(session: Session, input: { email: string; password?: string }) {
  const { database, clock, config } = await session.open();
  const db = database.db;
  const team = new TeamService(db, clock, new AuthService(db, clock));
  const member = await team.accountByEmail(input.email);
  if (!member) throw new OperatorError(`--email: no account ${input.email.trim().toLowerCase()}`);
  const tenant = await team.tenantOf(member);
  if (!tenant) throw new OperatorError(`--email: ${member.email} belongs to no team`);
  const resets = new PasswordResets(db, { clock, team });
  const audit = new AuditLog(db, clock);
  if (input.password !== undefined) {
    let ended: number;
    try {
      ended = await resets.setDirectly(member, input.password);
    } catch (err) {
      if (err instanceof AppError) throw new OperatorError(err.message);
      throw err;
    }
    await audit.recordOperator(tenant.id, 'operator.password_reset', member.email, '비밀번호 직접 설정');
    return { email: member.email, passwordSet: true, sessionsEnded: ended };
  }
  const { token, reset } = await resets.create(tenant.id, member, OPERATOR);
  await audit.recordOperator(tenant.id, 'operator.password_reset', member.email, '재설정 링크 발급');
  return { email: member.email, link: `${config.publicUrl}/console/reset/${token}`, expiresAt: kstIso(reset.expires_at), validMinutes: RESET_TTL_MS / 60_000 };
}
