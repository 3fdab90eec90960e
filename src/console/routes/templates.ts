import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can, MAX_DUE_DAYS, SEND_CHANNELS } from '../../invoicing/index.js';
import type { App } from '../../platform/http.js';
import { AMOUNT_RULE, fieldErrorsOf, hasErrors, numberField, textProblems, type FieldErrors, type TextRule } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { parseItems } from '../recipients.js';
import { itemsText, templateForm, templateList, type TemplateValues } from '../views/templates.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
// Generous limits: a value longer than its field allows comes back beside the field in Korean, never as a bare error page.
const FormBody = Type.Object({ ...Csrf, name: Text(), reason: Text(), description: Text(), amount: Text(), items: Text(), sendChannel: Text(), dueDays: Text() });

/** The template's text limits (the API's TemplateBody). */
const TEXT_RULES = {
  name: { label: '템플릿 이름', max: 40, required: true },
  reason: { label: '청구 사유', max: 60, required: '청구 사유를 적어 주세요 (알림에 보입니다).' },
  description: { label: '안내 문구', max: 200, text: 'lines' },
} satisfies Record<string, TextRule>;

/**
 * The form as the template service's body, or every problem of it at once, each beside its
 * field: the texts, the numbers, the channel, and the items against the amount (bad only together).
 */
function bodyOf(v: TemplateValues): { body: Record<string, unknown> } | { errors: FieldErrors } {
  const e = textProblems(v, TEXT_RULES);
  const out: Record<string, unknown> = { name: v.name?.trim() ?? '', reason: v.reason?.trim() ?? '' };
  if (v.description?.trim()) out.description = v.description.trim();
  const amount = numberField(v.amount, AMOUNT_RULE);
  if (amount.error) e.amount = amount.error;
  else if (amount.value !== undefined) out.amount = amount.value;
  if (v.items?.trim()) {
    const r = parseItems(v.items);
    if ('error' in r) e.items = r.error;
    else {
      out.items = r.items;
      const sum = r.items.reduce((s, it) => s + it.price * (it.qty ?? 1), 0);
      if (amount.value === undefined && !amount.error) e.amount = `항목이 있으면 금액도 적어 주세요 (항목 합계 ${sum.toLocaleString('ko-KR')}원).`;
      else if (amount.value !== undefined && sum !== amount.value) e.items = `항목 합계(${sum.toLocaleString('ko-KR')}원)가 금액(${amount.value.toLocaleString('ko-KR')}원)과 다릅니다.`;
    }
  }
  if (v.sendChannel) {
    if (SEND_CHANNELS.some((c) => c === v.sendChannel)) out.sendChannel = v.sendChannel;
    else e.sendChannel = '발송 방법을 목록에서 골라 주세요.';
  }
  const due = numberField(v.dueDays, { label: '납부 기한(발송 후 며칠)', min: 0, max: MAX_DUE_DAYS, unit: '일' });
  if (due.error) e.dueDays = due.error;
  else if (due.value !== undefined) out.dueDays = due.value;
  return hasErrors(e) ? { errors: e } : { body: out };
}

/** Templates (docs/console.md, "Templates"): list, create, edit, delete; the API's billTemplateId. */
export function templateRoutes(app: App, deps: ConsoleDeps): void {
  const svc = deps.invoicing.templates;
  const form = async (req: FastifyRequest, reply: FastifyReply, values: TemplateValues, id?: string, errors: FieldErrors = {}, status = 200) =>
    renderPage(req, reply, { title: id ? '템플릿 수정' : '새 템플릿', active: 'templates', body: templateForm({ csrf: await csrfToken(req, reply), id, values, errors }) }, status);

  app.get('/templates', { schema: { hide: true, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const notice = { saved: '템플릿을 저장했습니다.', deleted: '템플릿을 삭제했습니다.' }[req.query.notice ?? ''];
    return renderPage(req, reply, { title: '템플릿', active: 'templates', notice, body: templateList({ templates: await svc.list(user.tenant.id), canEdit: can(user.member, 'template.edit') }) });
  });

  app.get('/templates/new', { schema: { hide: true } }, async (req, reply) => form(req, reply, {}));

  const save = async (req: FastifyRequest, reply: FastifyReply, values: TemplateValues, id?: string) => {
    const user = userOf(req);
    const checked = bodyOf(values);
    if ('errors' in checked) return form(req, reply, values, id, checked.errors, 400);
    try {
      const t = id ? await svc.update(user.tenant.id, id, checked.body) : await svc.create(user.tenant.id, checked.body);
      await deps.audit.record(user, req.ip, id ? 'template.update' : 'template.create', t.id, t.name);
    } catch (err) {
      // What the service still refuses (the API's English), said beside its field.
      return form(req, reply, values, id, fieldErrorsOf(err), 400);
    }
    return seeOther(reply, '/console/templates?notice=saved');
  };

  app.post('/templates', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, body: FormBody } }, async (req, reply) => save(req, reply, req.body));

  app.get('/templates/:id', { schema: { hide: true, params: IdParams } }, async (req, reply) => {
    const t = await svc.get(userOf(req).tenant.id, req.params.id);
    return form(req, reply, { name: t.name, reason: t.reason, description: t.description ?? '', amount: t.amount === null ? '' : String(t.amount), items: itemsText(t), sendChannel: t.sendChannel ?? '', dueDays: t.dueDays === null ? '' : String(t.dueDays) }, t.id);
  });

  app.post('/templates/:id', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, params: IdParams, body: FormBody } }, async (req, reply) => {
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
