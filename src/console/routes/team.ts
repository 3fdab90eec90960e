import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isRole } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { Csrf, Str } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { teamBody } from '../views/team.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/** The team (docs/console.md, "Team"), for owners: members, roles, invites (the link shown once), removal. */
export function teamRoutes(app: App, deps: ConsoleDeps): void {
  const team = deps.invoicing.team;
  const show = async (req: FastifyRequest, reply: FastifyReply, extra: { link?: string; resetLink?: { email: string; link: string }; error?: string; notice?: string } = {}, status = 200) => {
    const user = userOf(req);
    const body = teamBody({ members: await team.members(user.tenant.id), invites: await deps.invites.open(user.tenant.id), me: user.member, tenantId: user.tenant.id, csrf: await csrfToken(req, reply), ...extra });
    return renderPage(req, reply, { title: '팀', active: 'team', body, notice: extra.notice }, status);
  };
  const refused = (req: FastifyRequest, reply: FastifyReply, err: unknown) => {
    if (err instanceof AppError && (err.kind === 'VALIDATION' || err.kind === 'STATE')) return show(req, reply, { error: err.message }, err.httpStatus);
    throw err;
  };

  app.get('/team', { schema: { hide: true, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) =>
    show(req, reply, { notice: { role: '역할을 바꿨습니다.', removed: '멤버를 팀에서 뺐습니다.', revoked: '초대를 취소했습니다.', 'signed-out': '그 멤버를 모든 기기에서 로그아웃시켰습니다.' }[req.query.notice ?? ''] }));

  app.post('/team/invite', { schema: { hide: true, body: Type.Object({ ...Csrf, email: Str(254), role: Str(10) }) } }, async (req, reply) => {
    const user = userOf(req);
    // No role chosen: the least one (viewer); a member is given more on purpose, never by default.
    const role = req.body.role || 'viewer';
    if (!isRole(role)) return show(req, reply, { error: 'role: must be owner, manager or viewer' }, 400);
    try {
      const { invite, token } = await deps.invites.create(user.tenant, user.member, req.body.email ?? '', role);
      await deps.audit.record(user, req.ip, 'team.invite', invite.email, role);
      // The link is shown on this answer only: its token is not kept (only its hash).
      return show(req, reply, { link: `${deps.publicUrl}/console/invite/${token}`, notice: `${invite.email}님을 초대했습니다.` });
    } catch (err) {
      return refused(req, reply, err);
    }
  });

  app.post('/team/:id/role', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf, role: Str(10) }) } }, async (req, reply) => {
    const user = userOf(req);
    const role = req.body.role;
    if (!isRole(role)) return show(req, reply, { error: 'role: must be owner, manager or viewer' }, 400);
    try {
      const m = await team.setRole(user.tenant.id, req.params.id, role);
      await deps.audit.record(user, req.ip, 'team.role', m.email, role);
    } catch (err) {
      return refused(req, reply, err);
    }
    return seeOther(reply, '/console/team?notice=role');
  });

  app.post('/team/:id/remove', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const m = (await team.members(user.tenant.id)).find((x) => x.id === req.params.id);
    if (!m) throw new AppError('NOT_FOUND', 'member: no such member of this team');
    if (m.id === user.tenant.id) return show(req, reply, { error: 'member: the team\'s first account holds its invoices and points; it cannot be removed' }, 409);
    // Its sessions end first (they reference the account), then the account and its API tokens.
    await deps.sessions.drop(m.id);
    await team.remove(user.tenant.id, m.id);
    await deps.audit.record(user, req.ip, 'team.remove', m.email);
    return seeOther(reply, m.id === user.member.id ? '/console/login' : '/console/team?notice=removed');
  });

  app.post('/team/invites/:id/revoke', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    if (!(await deps.invites.revoke(user.tenant.id, req.params.id))) throw new AppError('NOT_FOUND', 'invite: no such open invite');
    await deps.audit.record(user, req.ip, 'team.invite_revoke', req.params.id);
    return seeOther(reply, '/console/team?notice=revoked');
  });

  const memberOf = async (tenantId: string, id: string) => {
    const m = (await team.members(tenantId)).find((x) => x.id === id);
    if (!m) throw new AppError('NOT_FOUND', 'member: no such member of this team');
    return m;
  };

  // A one-time link (an hour) for a member who forgot the password; shown on this answer only.
  app.post('/team/:id/reset-link', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const m = await memberOf(user.tenant.id, req.params.id);
    const { token } = await deps.resets.create(user.tenant.id, m, user.member.email);
    await deps.audit.record(user, req.ip, 'team.password_reset_link', m.email);
    return show(req, reply, { resetLink: { email: m.email, link: `${deps.publicUrl}/console/reset/${token}` }, notice: `${m.email}님의 비밀번호 재설정 링크를 만들었습니다.` });
  });

  // Signs a member out of every device (a lost phone, a member leaving).
  app.post('/team/:id/sign-out', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const m = await memberOf(user.tenant.id, req.params.id);
    const n = await deps.sessions.revokeAll(m.id);
    await deps.audit.record(user, req.ip, 'team.sign_out', m.email, `${n}개 세션`);
    return seeOther(reply, m.id === user.member.id ? '/console/login' : '/console/team?notice=signed-out');
  });
}
