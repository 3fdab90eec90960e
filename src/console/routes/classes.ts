import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can, maskPhone } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { decodeCsv } from '../csv-upload.js';
import { AMOUNT_RULE, fieldErrorsOf, hasErrors, numberField, phoneProblem, textProblem, textProblems, type FieldErrors, type TextRule } from '../field-errors.js';
import { Csrf, digits, field, fileBytes, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { parseRecipients, type RecipientRow } from '../recipients.js';
import { classDetail, classList, classNewForm, type ClassDetailValues, type ClassFormValues } from '../views/classes.js';
import { classMonthPage, remindConfirm } from '../views/class-month.js';
import { streamCsv, type Column } from '../csv.js';
import { kstIso, kstMonth } from '../../platform/kst.js';
import { outsideQuietHours, type UnpaidRow } from '../../invoicing/index.js';
import { phone as phoneText } from '../views/format.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const NOTICES: Record<string, string> = {
  created: '반을 만들었습니다.', saved: '저장했습니다.', added: '추가했습니다.', removed: '뺐습니다.', imported: 'CSV를 올렸습니다.',
  archived: '보관했습니다. 이 반의 예약 발송은 보관을 풀 때까지 청구하지 않습니다.', unarchived: '보관을 풀었습니다.',
  reminded: '미결제 안내를 보냈습니다.', 'reminded-at-8': '밤 시간이라 아침 8시에 보냅니다.',
};

const UNPAID_COLUMNS: Column<UnpaidRow>[] = [
  { header: '이름', value: (r) => r.receiverName },
  { header: '전화번호', value: (r) => phoneText(r.receiverPhone) },
  { header: '보호자 전화번호', value: (r) => phoneText(r.guardianPhone) },
  { header: '금액', value: (r) => r.amount },
  { header: '납부 기한', value: (r) => r.dueDate },
  { header: '기한 지남', value: (r) => (r.overdue ? '예' : '') },
  { header: '보낸 횟수', value: (r) => r.sendCount },
  { header: '마지막 발송', value: (r) => (r.lastSentAt ? r.lastSentAt.replace('T', ' ') : null) },
  { header: '거래번호', value: (r) => r.transSeqNo },
  { header: 'uniqueId', value: (r) => r.uniqueId },
];

/** yyyy-MM, or this month (KST) when it is not one. */
const monthParam = (m: string | undefined, now: number) => (m && /^\d{4}-(0[1-9]|1[0-2])$/.test(m) ? m : kstMonth(now));
const shift = (month: string, by: number) => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const d = new Date(Date.UTC(y, m - 1 + by, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

/** The rows of a CSV (an uploaded file in any of the encodings Korean offices save, or pasted text), checked by the console's CSV rules. */
async function csvRows(body: unknown): Promise<{ rows: RecipientRow[] } | { error: string } | null> {
  const bytes = fileBytes(body, 'file');
  let text = field(body, 'csv') ?? '';
  if (bytes && bytes.length > 0) {
    const d = await decodeCsv(bytes);
    if ('error' in d) return { error: d.error };
    text = d.text;
  }
  if (!text.trim()) return null;
  // A class's member may leave the amount to the schedule's template, so an empty 금액 is fine here.
  const parsed = await parseRecipients(text, { templateAmount: 0 });
  if (parsed.error) return { error: parsed.error };
  // Items without an amount would be checked against 0: a class's items need the member's own amount.
  for (const r of parsed.rows) {
    if (r.amount === null && r.items) r.errors = ['항목이 있으면 금액도 적어 주세요'];
  }
  return { rows: parsed.rows };
}

const membersOf = (rows: RecipientRow[]) => rows.map((r) => ({
  name: r.name, phone: r.phone, ...(r.guardianPhone ? { guardianPhone: r.guardianPhone } : {}), ...(r.amount !== null ? { amount: r.amount } : {}), ...(r.items ? { items: r.items } : {}),
}));

/** A class service refusal in Korean, beside the field it is about (`fields` names this form's ids); the rows were checked already. */
function korean(err: unknown, fields: { name: string; memo: string; phone: string }): FieldErrors {
  if (!(err instanceof AppError) || err.httpStatus >= 500 || err.kind === 'NOT_FOUND') throw err;
  const m = err.message;
  if (/^name: /.test(m)) return { [fields.name]: '반 이름은 1~40자로 적어 주세요.' };
  if (/^memo: /.test(m)) return { [fields.memo]: '메모는 200자까지 적을 수 있습니다.' };
  if (/same name and phone/.test(m)) return { [fields.phone]: '이름과 전화번호가 같은 분이 이미 이 반에 있습니다.' };
  if (/at most 1000 per class/.test(m)) return { form: '한 반에는 1,000명까지 넣을 수 있습니다.' };
  if (/^classes: at most/.test(m)) return { form: '반은 팀마다 200개까지 만들 수 있습니다.' };
  return fieldErrorsOf(err);
}

/** A class's name and memo (the API's class body): every problem at once. */
const CLASS_TEXT: Record<'name' | 'memo', TextRule> = {
  name: { label: '반 이름', max: 40, required: true },
  memo: { label: '메모', max: 200 },
};
const NEW_FIELDS = { name: 'name', memo: 'memo', phone: 'csv' };
const DETAIL_FIELDS = { name: 'name', memo: 'memo', phone: 'm-phone' };

/** Classes (docs/console.md, "Classes"): list, a new class from a CSV, one class with its members, archive. */
export function classRoutes(app: App, deps: ConsoleDeps): void {
  const svc = deps.invoicing.billing.classes;

  app.get('/classes', { schema: { hide: true, querystring: Type.Object({ archived: Str(5), notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const archived = req.query.archived === '1';
    return renderPage(req, reply, {
      title: '반', active: 'classes', notice: NOTICES[req.query.notice ?? ''],
      body: classList({ classes: await svc.list(user.tenant.id, { archived }), archived, canEdit: can(user.member, 'class.edit') }),
    });
  });

  const newForm = async (req: FastifyRequest, reply: FastifyReply, values: ClassFormValues, errors: FieldErrors = {}, rows?: RecipientRow[], status = 200) =>
    renderPage(req, reply, { title: '새 반', active: 'classes', body: classNewForm({ csrf: await csrfToken(req, reply), values, errors, rows }) }, status);

  app.get('/classes/new', { schema: { hide: true } }, async (req, reply) => newForm(req, reply, {}));

  app.post('/classes', { bodyLimit: 4 * 1024 * 1024, schema: { hide: true } }, async (req, reply) => {
    const user = userOf(req);
    const values = { name: field(req.body, 'name') ?? '', memo: field(req.body, 'memo') ?? '', csv: field(req.body, 'csv') ?? '' };
    // The fields and the file at once: each problem beside its field, the CSV's row problems listed by line.
    const errors = textProblems(values, CLASS_TEXT);
    const csv = await csvRows(req.body);
    if (csv && 'error' in csv) errors.csv = csv.error;
    const badRows = csv && !('error' in csv) && csv.rows.some((r) => r.errors.length > 0) ? csv.rows : undefined;
    if (hasErrors(errors) || badRows) return newForm(req, reply, values, errors, badRows, 400);
    const rows = csv && !('error' in csv) ? csv.rows : [];
    let id: string;
    try {
      id = (await svc.create(user.tenant.id, { name: values.name.trim(), ...(values.memo.trim() ? { memo: values.memo.trim() } : {}), members: membersOf(rows) })).class.id;
    } catch (err) {
      return newForm(req, reply, values, korean(err, NEW_FIELDS), undefined, 400);
    }
    await deps.audit.record(user, req.ip, 'class.create', id, `${values.name.trim()} (${rows.length}명)`);
    return seeOther(reply, `/console/classes/${id}?notice=created`);
  });

  const show = async (req: FastifyRequest, reply: FastifyReply, id: string, extra: { errors?: FieldErrors; values?: ClassDetailValues; rows?: RecipientRow[]; notice?: string; status?: number } = {}) => {
    const user = userOf(req);
    const { class: c, members } = await svc.get(user.tenant.id, id);
    const body = classDetail({
      c, members, csrf: await csrfToken(req, reply), canEdit: can(user.member, 'class.edit'), errors: extra.errors, values: extra.values, rows: extra.rows,
      monthHref: `/console/classes/${c.id}/month?month=${kstMonth(deps.clock.nowMs())}`,
    });
    return renderPage(req, reply, { title: c.name, active: 'classes', body, notice: extra.notice }, extra.status ?? 200);
  };

  app.get('/classes/:id', { schema: { hide: true, params: IdParams, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) =>
    show(req, reply, req.params.id, { notice: NOTICES[req.query.notice ?? ''] }));

  app.post('/classes/:id', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf, name: Text(), memo: Text() }) } }, async (req, reply) => {
    const user = userOf(req);
    const values = { name: req.body.name, memo: req.body.memo };
    const errors = textProblems(req.body, CLASS_TEXT);
    if (hasErrors(errors)) return show(req, reply, req.params.id, { errors, values, status: 400 });
    try {
      await svc.update(user.tenant.id, req.params.id, { name: req.body.name?.trim() ?? '', ...(req.body.memo?.trim() ? { memo: req.body.memo.trim() } : {}) });
    } catch (err) {
      return show(req, reply, req.params.id, { errors: korean(err, DETAIL_FIELDS), values, status: 400 });
    }
    await deps.audit.record(user, req.ip, 'class.update', req.params.id, req.body.name ?? null);
    return seeOther(reply, `/console/classes/${req.params.id}?notice=saved`);
  });

  for (const action of ['archive', 'unarchive'] as const) {
    app.post(`/classes/:id/${action}`, { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
      const user = userOf(req);
      await svc.setArchived(user.tenant.id, req.params.id, action === 'archive');
      await deps.audit.record(user, req.ip, action === 'archive' ? 'class.archive' : 'class.unarchive', req.params.id);
      return seeOther(reply, `/console/classes/${req.params.id}?notice=${action}d`);
    });
  }

  app.post('/classes/:id/members', {
    bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf, name: Text(), phone: Text(), guardianPhone: Text(), amount: Text() }) },
  }, async (req, reply) => {
    const user = userOf(req);
    const b = req.body;
    const values = { member: { name: b.name, phone: b.phone, guardianPhone: b.guardianPhone, amount: b.amount } };
    // This form's fields are m-* on the class page (its own name and memo are the class's).
    const errors: FieldErrors = {};
    const nameProblem = textProblem(b.name, { label: '이름', max: 30, required: true });
    if (nameProblem) errors['m-name'] = nameProblem;
    const phoneP = phoneProblem(b.phone, '전화번호', true);
    if (phoneP) errors['m-phone'] = phoneP;
    const guardianP = phoneProblem(b.guardianPhone, '보호자 전화번호', false);
    if (guardianP) errors['m-guardian'] = guardianP;
    const amount = numberField(b.amount, AMOUNT_RULE);
    if (amount.error) errors['m-amount'] = amount.error;
    if (hasErrors(errors)) return show(req, reply, req.params.id, { errors, values, status: 400 });
    const name = b.name!.trim();
    const guardian = digits(b.guardianPhone);
    try {
      await svc.addMembers(user.tenant.id, req.params.id, [{ name, phone: digits(b.phone), ...(guardian ? { guardianPhone: guardian } : {}), ...(amount.value !== undefined ? { amount: amount.value } : {}) }]);
    } catch (err) {
      return show(req, reply, req.params.id, { errors: korean(err, DETAIL_FIELDS), values, status: 400 });
    }
    await deps.audit.record(user, req.ip, 'class.members', req.params.id, `추가: ${name}`);
    return seeOther(reply, `/console/classes/${req.params.id}?notice=added`);
  });

  app.post('/classes/:id/members/:memberId/delete', {
    schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 64 }), memberId: Type.String({ maxLength: 64 }) }), body: Type.Object({ ...Csrf }) },
  }, async (req, reply) => {
    const user = userOf(req);
    await svc.removeMember(user.tenant.id, req.params.id, req.params.memberId);
    await deps.audit.record(user, req.ip, 'class.members', req.params.id, `빼기: ${req.params.memberId}`);
    return seeOther(reply, `/console/classes/${req.params.id}?notice=removed`);
  });

  app.post('/classes/:id/import', { bodyLimit: 4 * 1024 * 1024, schema: { hide: true, params: IdParams } }, async (req, reply) => {
    const user = userOf(req);
    const csv = await csvRows(req.body);
    const values = { csv: field(req.body, 'csv') ?? '' };
    if (!csv) return show(req, reply, req.params.id, { errors: { csv: 'CSV 파일을 고르거나 내용을 붙여넣어 주세요.' }, values, status: 400 });
    if ('error' in csv) return show(req, reply, req.params.id, { errors: { csv: csv.error }, values, status: 400 });
    if (csv.rows.some((r) => r.errors.length > 0)) return show(req, reply, req.params.id, { rows: csv.rows, values, status: 400 });
    const replace = field(req.body, 'mode') === 'replace';
    try {
      if (replace) await svc.replaceMembers(user.tenant.id, req.params.id, membersOf(csv.rows));
      else await svc.addMembers(user.tenant.id, req.params.id, membersOf(csv.rows));
    } catch (err) {
      return show(req, reply, req.params.id, { errors: korean(err, { ...DETAIL_FIELDS, phone: 'csv' }), values, status: 400 });
    }
    await deps.audit.record(user, req.ip, 'class.members', req.params.id, `CSV ${replace ? '모두 바꾸기' : '추가'}: ${csv.rows.length}명`);
    return seeOther(reply, `/console/classes/${req.params.id}?notice=imported`);
  });

  // ---- the month of a class ------------------------------------------------------------------

  const months = deps.invoicing.billing.month;
  const MonthQ = Type.Object({ month: Str(20), notice: Str(20) });

  app.get('/classes/:id/month', { schema: { hide: true, params: IdParams, querystring: MonthQ } }, async (req, reply) => {
    const user = userOf(req);
    const month = monthParam(req.query.month, deps.clock.nowMs());
    const m = await months.month(user.tenant.id, req.params.id, month);
    const body = classMonthPage({ m, prev: shift(month, -1), next: shift(month, 1), canEdit: can(user.member, 'class.remind'), csrf: await csrfToken(req, reply), balance: await deps.invoicing.invoices.balance(user.tenant.id) });
    return renderPage(req, reply, { title: `${m.className} ${month}`, active: 'classes', body, notice: NOTICES[req.query.notice ?? ''] });
  });

  app.get('/classes/:id/month.csv', { schema: { hide: true, params: IdParams, querystring: MonthQ } }, async (req, reply) => {
    const user = userOf(req);
    const month = monthParam(req.query.month, deps.clock.nowMs());
    const m = await months.month(user.tenant.id, req.params.id, month);
    await deps.audit.record(user, req.ip, 'class.export_unpaid', req.params.id, month);
    const rows = (async function* () { yield* m.unpaidList; })();
    // A viewer takes no customer's phone number away: masked in its export (src/invoicing/access.ts).
    const masked = (v: string | null) => (v ? maskPhone(v) : '');
    const columns = can(user.member, 'classes.export.phones') ? UNPAID_COLUMNS : UNPAID_COLUMNS.map((c) => (
      c.header === '전화번호' ? { ...c, value: (r: UnpaidRow) => masked(r.receiverPhone) }
        : c.header === '보호자 전화번호' ? { ...c, value: (r: UnpaidRow) => masked(r.guardianPhone) } : c));
    return streamCsv(reply, `sunap-unpaid-${month}.csv`, columns, rows, (err) => req.log.error({ err: err.message }, 'unpaid export failed'));
  });

  app.get('/classes/:id/month/remind', { schema: { hide: true, params: IdParams, querystring: MonthQ } }, async (req, reply) => {
    const user = userOf(req);
    const month = monthParam(req.query.month, deps.clock.nowMs());
    const m = await months.month(user.tenant.id, req.params.id, month);
    const now = deps.clock.nowMs();
    const at = outsideQuietHours(now);
    const body = remindConfirm({ m, csrf: await csrfToken(req, reply), balance: await deps.invoicing.invoices.balance(user.tenant.id), at: kstIso(at), night: at > now });
    return renderPage(req, reply, { title: '미결제 안내', active: 'classes', body });
  });

  app.post('/classes/:id/month/remind', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf, month: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const month = monthParam(req.body.month, deps.clock.nowMs());
    const now = deps.clock.nowMs();
    const r = await months.remindNow(user.tenant.id, req.params.id, month);
    await deps.audit.record(user, req.ip, 'class.remind', req.params.id, `${month}: ${r.reminders}명, ${r.at}`);
    return seeOther(reply, `/console/classes/${req.params.id}/month?month=${month}&notice=${outsideQuietHours(now) > now ? 'reminded-at-8' : 'reminded'}`);
  });
}
