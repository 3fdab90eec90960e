import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can, MAX_DUE_DAYS, REMINDER_LIMITS } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { fieldErrorsOf, hasErrors, numberField, type FieldErrors } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Str, Text, wholeNumber } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import type { ConsoleUser } from '../sessions.js';
import { pointsBanner, runDetail, scheduleDetail, scheduleForm, scheduleList, type ScheduleFormValues } from '../views/schedules.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const FormBody = Type.Object({
  ...Csrf, classId: Text(), templateId: Text(), repeat: Text(), dayOfMonth: Text(), time: Text(), at: Text(),
  dueDays: Text(), beforeDays: Text(), afterDays: Text(), times: Text(),
});
const NOTICES: Record<string, string> = { created: '예약했습니다.', paused: '일시 정지했습니다. 다시 시작할 때까지 보내지 않습니다.', resumed: '다시 시작했습니다.' };

/** The service's `field: reason` in Korean, beside what the form calls the field (what the form could not check itself: an archived class, a time past). */
const KOREAN: [RegExp, string, string][] = [
  [/^dayOfMonth: /, 'dayOfMonth', '매달 며칠은 1~31 사이의 숫자여야 합니다.'],
  [/^time: /, 'time', '시각을 골라 주세요 (00:00~23:59).'],
  [/^at: must not be in the past/, 'at', '한 번 보낼 날짜와 시각은 지금 이후여야 합니다.'],
  [/^at: /, 'at', '한 번 보낼 날짜와 시각을 골라 주세요.'],
  [/^classId: the class is archived/, 'classId', '보관된 반입니다. 보관을 풀고 다시 해 주세요.'],
  [/^classId: /, 'classId', '반을 골라 주세요.'],
  [/^templateId: /, 'templateId', '템플릿을 골라 주세요.'],
  [/^dueDays: /, 'dueDays', '납부 기한은 발송 후 0~365일이어야 합니다.'],
  [/^reminders: give/, 'beforeDays', '미납 안내는 "기한 며칠 전"이나 "기한 지난 뒤 며칠마다" 중 하나 이상을 적어 주세요.'],
  [/^reminders\.beforeDays: /, 'beforeDays', '기한 며칠 전은 1~30 사이여야 합니다.'],
  [/^reminders\.afterDays: /, 'afterDays', '기한 지난 뒤 며칠마다는 1~30 사이여야 합니다.'],
  [/^reminders\.times: /, 'times', '최대 몇 번은 1~5 사이여야 합니다.'],
  [/^reminders: /, 'times', '미납 안내에 최대 몇 번을 적어 주세요 (1~5).'],
  [/^schedules: at most/, 'form', '예약 발송은 팀마다 100개까지 만들 수 있습니다.'],
];
function korean(err: unknown): FieldErrors {
  if (!(err instanceof AppError) || err.httpStatus >= 500 || err.kind === 'NOT_FOUND') throw err;
  const hit = KOREAN.find(([re]) => re.test(err.message));
  return hit ? { [hit[1]]: hit[2] } : fieldErrorsOf(err);
}

/** Every problem the form can see itself, at once (the limits are the service's: REMINDER_LIMITS, MAX_DUE_DAYS). */
function problemsOf(v: ScheduleFormValues): FieldErrors {
  const e: FieldErrors = {};
  const num = (id: keyof ScheduleFormValues, label: string, min: number, max: number, unit: string, required = false) => {
    const r = numberField(v[id], { label, min, max, unit, required });
    if (r.error) e[id] = r.error;
  };
  if (!v.classId?.trim()) e.classId = '반을 골라 주세요.';
  if (!v.templateId?.trim()) e.templateId = '템플릿을 골라 주세요.';
  if (v.repeat === 'ONCE') {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v.at?.trim() ?? '')) e.at = '한 번 보낼 날짜와 시각을 골라 주세요.';
  } else {
    num('dayOfMonth', '매달 며칠', 1, 31, '일', true);
    if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(v.time?.trim() ?? '')) e.time = '시각을 골라 주세요 (00:00~23:59).';
  }
  num('dueDays', '납부 기한(발송 후 며칠)', 0, MAX_DUE_DAYS, '일');
  num('beforeDays', '기한 며칠 전', 1, REMINDER_LIMITS.beforeDays, '일');
  num('afterDays', '기한 지난 뒤 며칠마다', 1, REMINDER_LIMITS.afterDays, '일');
  num('times', '최대 몇 번', 1, REMINDER_LIMITS.times, '번');
  // Bad only together: a reminder needs when (before, after or both) and how many times.
  const when = v.beforeDays?.trim() || v.afterDays?.trim();
  if (when && !v.times?.trim() && !e.times) e.times = `미납 안내에 최대 몇 번을 적어 주세요 (1~${REMINDER_LIMITS.times}).`;
  if (!when && v.times?.trim() && !e.beforeDays) e.beforeDays = '미납 안내는 "기한 며칠 전"이나 "기한 지난 뒤 며칠마다" 중 하나 이상을 적어 주세요.';
  return e;
}

/** The form as the service's body: numbers as people type them; a text that is not a number is passed on as it is, so the service names it. */
function bodyOf(v: ScheduleFormValues): Record<string, unknown> {
  const n = (s: string | undefined) => (s?.trim() ? wholeNumber(s) ?? s.trim() : undefined);
  const repeat = v.repeat === 'ONCE' ? 'ONCE' : 'MONTHLY';
  const out: Record<string, unknown> = { classId: v.classId ?? '', templateId: v.templateId ?? '', repeat };
  if (repeat === 'MONTHLY') Object.assign(out, { dayOfMonth: n(v.dayOfMonth), time: v.time?.trim() || undefined });
  else out.at = v.at?.trim().slice(0, 16) || undefined;
  if (v.dueDays?.trim()) out.dueDays = n(v.dueDays);
  if (v.beforeDays?.trim() || v.afterDays?.trim() || v.times?.trim()) {
    out.reminders = { beforeDays: n(v.beforeDays), afterDays: n(v.afterDays), times: n(v.times) };
  }
  return out;
}

/** Schedules (docs/console.md, "Schedules"): list with the points banner, a new one, one with its runs, one run, pause and resume. */
export function scheduleRoutes(app: App, deps: ConsoleDeps): void {
  const billing = deps.invoicing.billing;
  const banner = async (user: ConsoleUser) => pointsBanner(await billing.schedules.waiting(user.tenant.id), await deps.invoicing.invoices.balance(user.tenant.id));

  app.get('/schedules', { schema: { hide: true, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    return renderPage(req, reply, {
      title: '예약 발송', active: 'schedules', notice: NOTICES[req.query.notice ?? ''],
      body: scheduleList({ schedules: await billing.schedules.list(user.tenant.id), canEdit: can(user.member, 'schedule.edit'), banner: await banner(user) }),
    });
  });

  const form = async (req: FastifyRequest, reply: FastifyReply, values: ScheduleFormValues, errors: FieldErrors = {}, status = 200) => {
    const user = userOf(req);
    const body = scheduleForm({
      csrf: await csrfToken(req, reply), classes: await billing.classes.list(user.tenant.id), templates: await deps.invoicing.templates.list(user.tenant.id), values, errors,
    });
    return renderPage(req, reply, { title: '새 예약 발송', active: 'schedules', body }, status);
  };

  app.get('/schedules/new', { schema: { hide: true, querystring: Type.Object({ classId: Str(100) }) } }, async (req, reply) => form(req, reply, { classId: req.query.classId }));

  app.post('/schedules', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const user = userOf(req);
    const errors = problemsOf(req.body);
    if (hasErrors(errors)) return form(req, reply, req.body, errors, 400);
    let id: string;
    try {
      id = (await billing.schedules.create(user.tenant.id, user.tenant.store_code, bodyOf(req.body))).id;
    } catch (err) {
      return form(req, reply, req.body, korean(err), 400);
    }
    await deps.audit.record(user, req.ip, 'schedule.create', id);
    return seeOther(reply, `/console/schedules/${id}?notice=created`);
  });

  app.get('/schedules/:id', { schema: { hide: true, params: IdParams, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const { schedule, runs } = await billing.schedules.get(user.tenant.id, req.params.id);
    const waiting = (await billing.schedules.waiting(user.tenant.id)).filter((w) => w.schedule_id === schedule.id);
    const body = scheduleDetail({
      s: schedule, runs, csrf: await csrfToken(req, reply), canEdit: can(user.member, 'schedule.edit'),
      banner: pointsBanner(waiting, await deps.invoicing.invoices.balance(user.tenant.id)),
    });
    return renderPage(req, reply, { title: '예약 발송', active: 'schedules', body, notice: NOTICES[req.query.notice ?? ''] });
  });

  app.get('/schedules/:id/runs/:runId', { schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 64 }), runId: Type.String({ maxLength: 64 }) }) } }, async (req, reply) => {
    const user = userOf(req);
    const { schedule } = await billing.schedules.get(user.tenant.id, req.params.id);
    const { run, invoices } = await billing.schedules.run(user.tenant.id, req.params.id, req.params.runId);
    return renderPage(req, reply, { title: '발송 기록', active: 'schedules', body: runDetail({ s: schedule, run, invoices }) });
  });

  for (const action of ['pause', 'resume'] as const) {
    app.post(`/schedules/:id/${action}`, { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
      const user = userOf(req);
      if (action === 'pause') await billing.schedules.pause(user.tenant.id, req.params.id);
      else await billing.schedules.resume(user.tenant.id, req.params.id);
      await deps.audit.record(user, req.ip, action === 'pause' ? 'schedule.pause' : 'schedule.resume', req.params.id);
      return seeOther(reply, `/console/schedules/${req.params.id}?notice=${action}d`);
    });
  }
}
