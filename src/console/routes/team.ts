import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isRole } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { emailProblemKo, fieldErrorsOf, hasErrors, type FieldErrors } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { teamBody, type InviteValues } from '../views/team.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/** The team (docs/console.md, "Team"), for owners: members, roles, invites (the link shown once), removal. */
export function teamRoutes(app: App, deps: ConsoleDeps): void {
  const team = deps.invoicing.team;
  type Extra = { link?: string; resetLink?: { email: string; link: string }; invite?: InviteValues; errors?: FieldErrors; notice?: string };
  const show = async (req: FastifyRequest, reply: FastifyReply, extra: Extra = {}, status = 200) => {
    const user = userOf(req);
    const body = teamBody({ members: await team.members(user.tenant.id), invites: await deps.invites.open(user.tenant.id), me: user.member, tenantId: user.tenant.id, csrf: await csrfToken(req, reply), ...extra });
    return renderPage(req, reply, { title: '팀', active: 'team', body, notice: extra.notice }, status);
  };
  /** A refusal of the service (English `field: reason`) beside the field it names; `field` puts it beside another (a member's role select). */
  const refused = (req: FastifyRequest, reply: FastifyReply, err: unknown, extra: Extra, field?: string) => {
    const errors = fieldErrorsOf(err);
    return show(req, reply, { ...extra, errors: field ? { [field]: Object.values(errors)[0]! } : errors }, err instanceof AppError ? err.httpStatus : 400);
  };

  app.get('/team', { schema: { hide: true, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) =>
    show(req, reply, { notice: { role: '역할을 바꿨습니다.', removed: '멤버를 팀에서 뺐습니다.', revoked: '초대를 취소했습니다.', 'signed-out': '그 멤버를 모든 기기에서 로그아웃시켰습니다.' }[req.query.notice ?? ''] }));

  app.post('/team/invite', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, body: Type.Object({ ...Csrf, email: Text(), role: Text() }) } }, async (req, reply) => {
    const user = userOf(req);
    // An invite is for viewing unless the owner chose more (issue 32: the least role by default).
    const role = req.body.role?.trim() || 'viewer';
    const invite = { email: req.body.email ?? '', role };
    const errors: FieldErrors = {};
    const email = emailProblemKo(req.body.email);
    if (email) errors.email = email;
    if (!isRole(role)) errors.role = '역할을 목록에서 골라 주세요 (소유자, 관리자, 조회 전용).';
    if (hasErrors(errors) || !isRole(role)) return show(req, reply, { invite, errors }, 400);
    try {
      const { invite: made, token } = await deps.invites.create(user.tenant, user.member, req.body.email ?? '', role);
      await deps.audit.record(user, req.ip, 'team.invite', made.email, role);
      // The link is shown on this answer only: its token is not kept (only its hash).
      return show(req, reply, { link: `${deps.publicUrl}/console/invite/${token}`, notice: `${made.email}님을 초대했습니다.` });
    } catch (err) {
      return refused(req, reply, err, { invite });
    }
  });

  app.post('/team/:id/role', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf, role: Text() }) } }, async (req, reply) => {
    const user = userOf(req);
    const role = req.body.role;
    // The member's own role select shows the problem (its id is role-<member>).
    const field = `role-${req.params.id}`;
    if (!isRole(role)) return show(req, reply, { errors: { [field]: '역할을 목록에서 골라 주세요 (소유자, 관리자, 조회 전용).' } }, 400);
    try {
      const m = await team.setRole(user.tenant.id, req.params.id, role);
      await deps.audit.record(user, req.ip, 'team.role', m.email, role);
    } catch (err) {
      return refused(req, reply, err, {}, field);
    }
    return seeOther(reply, '/console/team?notice=role');
  });

  app.post('/team/:id/remove', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const m = (await team.members(user.tenant.id)).find((x) => x.id === req.params.id);
    if (!m) throw new AppError('NOT_FOUND', 'member: no such member of this team');
    if (m.id === user.tenant.id) return show(req, reply, { errors: { form: '팀의 첫 계정은 청구서와 포인트를 가지고 있어 팀에서 뺄 수 없습니다.' } }, 409);
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
