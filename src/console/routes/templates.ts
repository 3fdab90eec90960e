import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { Csrf, Str, wholeNumber } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { parseItems } from '../recipients.js';
import { itemsText, templateForm, templateList, type TemplateValues } from '../views/templates.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const FormBody = Type.Object({ ...Csrf, name: Str(40), reason: Str(60), description: Str(200), amount: Str(20), items: Str(2000), sendChannel: Str(20), dueDays: Str(5) });

/** The form as the template service's body (TemplateBody); problems of the text itself come back as a message. */
function bodyOf(v: TemplateValues): Record<string, unknown> | string {
  const out: Record<string, unknown> = { name: v.name?.trim() ?? '', reason: v.reason?.trim() ?? '' };
  if (v.description?.trim()) out.description = v.description.trim();
  if (v.amount?.trim()) {
    const n = wholeNumber(v.amount);
    if (n === undefined) return '금액은 숫자로 적어 주세요.';
    out.amount = n;
  }
  if (v.items?.trim()) {
    const r = parseItems(v.items);
    if ('error' in r) return r.error;
    out.items = r.items;
  }
  if (v.sendChannel) out.sendChannel = v.sendChannel;
  if (v.dueDays?.trim()) {
    const n = wholeNumber(v.dueDays);
    if (n === undefined) return '납부 기한(발송 후 며칠)은 숫자로 적어 주세요.';
    out.dueDays = n;
  }
  return out;
}

/** Templates (docs/console.md, "Templates"): list, create, edit, delete; the API's billTemplateId. */
export function templateRoutes(app: App, deps: ConsoleDeps): void {
  const svc = deps.invoicing.templates;
  const form = async (req: FastifyRequest, reply: FastifyReply, values: TemplateValues, id?: string, error?: string, status = 200) =>
    renderPage(req, reply, { title: id ? '템플릿 수정' : '새 템플릿', active: 'templates', body: templateForm({ csrf: await csrfToken(req, reply), id, values, error }) }, status);

  app.get('/templates', { schema: { hide: true, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const notice = { saved: '템플릿을 저장했습니다.', deleted: '템플릿을 삭제했습니다.' }[req.query.notice ?? ''];
    return renderPage(req, reply, { title: '템플릿', active: 'templates', notice, body: templateList({ templates: await svc.list(user.tenant.id), canEdit: can(user.member, 'template.edit') }) });
  });

  app.get('/templates/new', { schema: { hide: true } }, async (req, reply) => form(req, reply, {}));

  const save = async (req: FastifyRequest, reply: FastifyReply, values: TemplateValues, id?: string) => {
    const user = userOf(req);
    const body = bodyOf(values);
    if (typeof body === 'string') return form(req, reply, values, id, body, 400);
    try {
      const t = id ? await svc.update(user.tenant.id, id, body) : await svc.create(user.tenant.id, body);
      await deps.audit.record(user, req.ip, id ? 'template.update' : 'template.create', t.id, t.name);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'VALIDATION') return form(req, reply, values, id, err.message, 400);
      throw err;
    }
    return seeOther(reply, '/console/templates?notice=saved');
  };

  app.post('/templates', { schema: { hide: true, body: FormBody } }, async (req, reply) => save(req, reply, req.body));

  app.get('/templates/:id', { schema: { hide: true, params: IdParams } }, async (req, reply) => {
    const t = await svc.get(userOf(req).tenant.id, req.params.id);
    return form(req, reply, { name: t.name, reason: t.reason, description: t.description ?? '', amount: t.amount === null ? '' : String(t.amount), items: itemsText(t), sendChannel: t.sendChannel ?? '', dueDays: t.dueDays === null ? '' : String(t.dueDays) }, t.id);
  });

  app.post('/templates/:id', { schema: { hide: true, params: IdParams, body: FormBody } }, async (req, reply) => {
    await svc.get(userOf(req).tenant.id, req.params.id);
    return save(req, reply, req.body, req.params.id);
  });

  app.post('/templates/:id/delete', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    await svc.remove(user.tenant.id, req.params.id);
    await deps.audit.record(user, req.ip, 'template.delete', req.params.id);
    return seeOther(reply, '/console/templates?notice=deleted');
  });
}
