import { Type } from '@sinclair/typebox';
import type { CookieSerializeOptions } from '@fastify/cookie';
import { rateLimitError, AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { hasErrors, PASSWORD_RULE, textProblems, type FieldErrors } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, seeOther, sendPage, userOf, type ConsoleDeps } from '../http.js';
import { invitePage, signInPage } from '../views/auth.js';

export interface CookieSettings {
  session: string;
  options: CookieSerializeOptions;
}

/** Only paths inside the console are followed after signing in (never another site). */
function safeNext(next: string | undefined): string {
  return next && /^\/console(\/[^\s\\]*)?$/.test(next) && !next.startsWith('//') ? next : '/console';
}

const NOTICES: Record<string, string> = { out: '로그아웃했습니다.', password: '비밀번호를 바꿨습니다. 다시 로그인해 주세요.', reset: '새 비밀번호를 정했습니다. 새 비밀번호로 로그인해 주세요.' };

/** Sign-in, sign-out and invites (docs/console.md, "Sign-in and sessions"). */
export function authRoutes(app: App, deps: ConsoleDeps, cookies: CookieSettings): void {
  const limit = deps.loginRateLimit > 0 ? { rateLimit: { max: deps.loginRateLimit, timeWindow: 60_000, errorResponseBuilder: rateLimitError } } : {};

  app.get('/login', {
    schema: { hide: true, querystring: Type.Object({ next: Str(500), notice: Str(20) }) },
  }, async (req, reply) => {
    if (req.consoleUser) return seeOther(reply, safeNext(req.query.next));
    return sendPage(reply, 200, signInPage({ csrf: await csrfToken(req, reply), next: safeNext(req.query.next), notice: NOTICES[req.query.notice ?? ''] }));
  });

  // Sign-in is limited per address and per email in the database (AuthService.checkPassword).
  app.post('/login', {
    bodyLimit: FORM_BODY_LIMIT,
    schema: { hide: true, body: Type.Object({ ...Csrf, email: Text(), password: Text(), next: Text() }) },
  }, async (req, reply) => {
    const { email = '', password = '' } = req.body;
    const again = async (status: number, errors: FieldErrors) => sendPage(reply, status, signInPage({ csrf: await csrfToken(req, reply), next: safeNext(req.body.next), email, errors }));
    // An empty or over-long field is said beside it; which of the two is wrong is never said (wrong credentials are one sentence).
    const errors = textProblems(req.body, { email: { label: '이메일', max: 254, required: true }, password: { label: '비밀번호', max: 200, required: true, text: 'secret' } });
    if (hasErrors(errors)) return again(400, errors);
    try {
      const { token, user } = await deps.sessions.signIn(email, password, { ip: req.ip, userAgent: String(req.headers['user-agent'] ?? '') });
      reply.setCookie(cookies.session, token, cookies.options);
      await deps.audit.record(user, req.ip, 'session.sign_in');
      return seeOther(reply, safeNext(req.body.next));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.kind === 'TOO_MANY') return again(429, { form: `로그인 시도가 너무 많습니다. ${err.message.replace(/^.*try again in (\d+) seconds.*$/, '$1')}초 후 다시 시도해 주세요.` });
      if (err.kind === 'FORBIDDEN') return again(403, { form: '이 계정은 사용이 중지되었습니다. 운영자에게 문의해 주세요.' });
      return again(401, { form: '이메일 또는 비밀번호가 올바르지 않습니다.' });
    }
  });

  app.post('/logout', { schema: { hide: true, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    await deps.sessions.revoke(user.member.id, user.sessionId);
    await deps.audit.record(user, req.ip, 'session.sign_out');
    reply.clearCookie(cookies.session, { path: '/console' });
    return seeOther(reply, '/console/login?notice=out');
  });

  const InviteParams = Type.Object({ token: Type.String({ maxLength: 100 }) });
  app.get('/invite/:token', { schema: { hide: true, params: InviteParams } }, async (req, reply) => {
    const inv = await deps.invites.usable(req.params.token);
    if (!inv) throw new AppError('NOT_FOUND', 'invite: unknown, used, revoked or expired');
    const tenant = await deps.invoicing.team.account(inv.tenant_id);
    const store = tenant ? await deps.gateway.findStore(tenant.store_code) : undefined;
    return sendPage(reply, 200, invitePage({ csrf: await csrfToken(req, reply), token: req.params.token, email: inv.email, role: inv.role, storeName: store?.name ?? '' }));
  });

  app.post('/invite/:token', {
    config: { ...limit },
    bodyLimit: FORM_BODY_LIMIT,
    schema: { hide: true, params: InviteParams, body: Type.Object({ ...Csrf, password: Text() }) },
  }, async (req, reply) => {
    const inv = await deps.invites.usable(req.params.token);
    if (!inv) throw new AppError('NOT_FOUND', 'invite: unknown, used, revoked or expired');
    const password = req.body.password ?? '';
    const errors = textProblems(req.body, { password: PASSWORD_RULE });
    if (hasErrors(errors)) {
      const tenant = await deps.invoicing.team.account(inv.tenant_id);
      const store = tenant ? await deps.gateway.findStore(tenant.store_code) : undefined;
      return sendPage(reply, 400, invitePage({ csrf: await csrfToken(req, reply), token: req.params.token, email: inv.email, role: inv.role, storeName: store?.name ?? '', errors }));
    }
    const member = await deps.invites.accept(req.params.token, password);
    const { token, user } = await deps.sessions.signIn(member.email, password, { ip: req.ip, userAgent: String(req.headers['user-agent'] ?? '') });
    reply.setCookie(cookies.session, token, cookies.options);
    await deps.audit.record(user, req.ip, 'team.join', member.email);
    return seeOther(reply, '/console');
  });
}
