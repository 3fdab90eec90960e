import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { fieldErrorsOf, hasErrors, PASSWORD_RULE, textProblems, type FieldErrors } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { accountBody } from '../views/account.js';
import type { CookieSettings } from './auth.js';

/** One's own account (docs/console.md, "Sign-in and sessions"): sessions, sign out everywhere, password. */
export function accountRoutes(app: App, deps: ConsoleDeps, cookies: CookieSettings): void {
  const show = async (req: FastifyRequest, reply: FastifyReply, extra: { notice?: string; errors?: FieldErrors } = {}, status = 200) => {
    const user = userOf(req);
    const body = accountBody({ user, sessions: await deps.sessions.list(user.member.id), csrf: await csrfToken(req, reply), errors: extra.errors });
    return renderPage(req, reply, { title: '내 계정', active: 'account', body, notice: extra.notice }, status);
  };

  app.get('/account', { schema: { hide: true, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) =>
    show(req, reply, { notice: { revoked: '그 기기를 로그아웃시켰습니다.', all: '다른 모든 기기에서 로그아웃했습니다.' }[req.query.notice ?? ''] }));

  app.post('/account/sessions/revoke', { schema: { hide: true, body: Type.Object({ ...Csrf, session: Str(64) }) } }, async (req, reply) => {
    const user = userOf(req);
    // Only one's own sessions: another account's id changes nothing and reads as not found.
    if (!(await deps.sessions.revoke(user.member.id, req.body.session ?? ''))) throw new AppError('NOT_FOUND', 'session: no such session of yours');
    await deps.audit.record(user, req.ip, 'session.revoke');
    return seeOther(reply, '/console/account?notice=revoked');
  });

  app.post('/account/sessions/revoke-all', { schema: { hide: true, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const n = await deps.sessions.revokeAll(user.member.id, user.sessionId);
    await deps.audit.record(user, req.ip, 'session.revoke_all', null, `${n}`);
    return seeOther(reply, '/console/account?notice=all');
  });

  app.post('/account/password', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, body: Type.Object({ ...Csrf, current: Text(), next: Text() }) } }, async (req, reply) => {
    const user = userOf(req);
    // Both fields checked at once; passwords are never written back into the form.
    const errors = textProblems(req.body, { current: { label: '지금 비밀번호', max: 200, required: true, text: 'secret' }, next: { ...PASSWORD_RULE, label: '새 비밀번호' } });
    if (hasErrors(errors)) return show(req, reply, { errors }, 400);
    try {
      await deps.invoicing.team.changePassword(user.member, req.body.current ?? '', req.body.next ?? '', req.ip);
    } catch (err) {
      // The sign-in's lockout (per account and per address) holds here too.
      if (err instanceof AppError && err.kind === 'TOO_MANY') {
        return show(req, reply, { errors: { form: `비밀번호 확인 시도가 너무 많습니다. ${err.message.replace(/^.*try again in (\d+) seconds.*$/, '$1')}초 후 다시 시도해 주세요.` } }, 429);
      }
      if (err instanceof AppError && err.kind === 'VALIDATION' && err.message.startsWith('current')) return show(req, reply, { errors: { current: '지금 비밀번호가 맞지 않습니다.' } }, 400);
      return show(req, reply, { errors: fieldErrorsOf(err) }, 400);
    }
    // Every session of the account ends, this one too: signing in again proves the new password.
    await deps.sessions.revokeAll(user.member.id);
    await deps.audit.record(user, req.ip, 'account.password');
    reply.clearCookie(cookies.session, { path: '/console' });
    return seeOther(reply, '/console/login?notice=password');
  });
}
