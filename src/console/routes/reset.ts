import { Type } from '@sinclair/typebox';
import { AppError, rateLimitError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { hasErrors, PASSWORD_RULE, textProblems } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Text } from '../forms.js';
import { csrfToken, seeOther, sendPage, type ConsoleDeps } from '../http.js';
import { forgotPage, resetPage } from '../views/auth.js';

/**
 * Getting back in (docs/console.md, "Getting back in"): "비밀번호를 잊었나요?" says who can
 * make a reset link (the store's owner on the Team page, or the operator with the CLI), and the
 * link's page sets the new password, once, within its hour.
 */
export function resetRoutes(app: App, deps: ConsoleDeps): void {
  const limit = deps.loginRateLimit > 0 ? { rateLimit: { max: deps.loginRateLimit, timeWindow: 60_000, errorResponseBuilder: rateLimitError } } : {};

  app.get('/forgot', { schema: { hide: true } }, async (_req, reply) => sendPage(reply, 200, forgotPage()));

  const Params = Type.Object({ token: Type.String({ maxLength: 100 }) });
  const storeName = async (tenantId: string) => {
    const tenant = await deps.invoicing.team.account(tenantId);
    return (tenant ? await deps.gateway.findStore(tenant.store_code) : undefined)?.name ?? '';
  };

  app.get('/reset/:token', { schema: { hide: true, params: Params } }, async (req, reply) => {
    const found = await deps.resets.usable(req.params.token);
    if (!found) throw new AppError('NOT_FOUND', 'reset: unknown, used, revoked or expired');
    return sendPage(reply, 200, resetPage({ csrf: await csrfToken(req, reply), token: req.params.token, email: found.member.email, storeName: await storeName(found.reset.tenant_id) }));
  });

  app.post('/reset/:token', {
    config: { ...limit },
    // Generous limits: a long value is said beside its field, never a bare error page.
    bodyLimit: FORM_BODY_LIMIT,
    schema: { hide: true, params: Params, body: Type.Object({ ...Csrf, password: Text(), confirm: Text() }) },
  }, async (req, reply) => {
    const found = await deps.resets.usable(req.params.token);
    if (!found) throw new AppError('NOT_FOUND', 'reset: unknown, used, revoked or expired');
    const password = req.body.password ?? '';
    const errors = textProblems(req.body, { password: PASSWORD_RULE });
    if ((req.body.confirm ?? '') !== password) errors.confirm = '두 번 적은 비밀번호가 다릅니다.';
    if (hasErrors(errors)) {
      return sendPage(reply, 400, resetPage({ csrf: await csrfToken(req, reply), token: req.params.token, email: found.member.email, storeName: await storeName(found.reset.tenant_id), errors }));
    }
    const { member } = await deps.resets.use(req.params.token, password);
    const tenant = await deps.invoicing.team.tenantOf(member);
    if (tenant) await deps.audit.record({ member, tenant }, req.ip, 'account.password_reset', member.email, `링크: ${found.reset.created_by}`);
    return seeOther(reply, '/console/login?notice=reset');
  });
}
