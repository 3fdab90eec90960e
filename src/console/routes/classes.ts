import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can, maskPhone } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { decodeCsv } from '../csv-upload.js';
import { Csrf, digits, field, fileBytes, Str, wholeNumber } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { parseRecipients, type RecipientRow } from '../recipients.js';
import { classDetail, classList, classNewForm, type ClassFormValues } from '../views/classes.js';
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

/** A class service refusal in Korean (the rows were checked already; what is left is about the class itself). */
function korean(err: unknown): string {
  if (!(err instanceof AppError) || err.httpStatus >= 500 || err.kind === 'NOT_FOUND') throw err;
  const m = err.message;
  if (/^name: /.test(m)) return '반 이름은 1~40자로 적어 주세요.';
  if (/^memo: /.test(m)) return '메모는 200자까지 적을 수 있습니다.';
  if (/same name and phone/.test(m)) return '이름과 전화번호가 같은 분이 이미 이 반에 있습니다.';
  if (/at most 1000 per class/.test(m)) return '한 반에는 1,000명까지 넣을 수 있습니다.';
  if (/^classes: at most/.test(m)) return '반은 팀마다 200개까지 만들 수 있습니다.';
  if (/phone: must be 10 to 11 digits/.test(m)) return '전화번호는 10~11자리 숫자여야 합니다 (예: 010-1234-5678).';
  if (/amount: /.test(m)) return '금액은 100원 이상의 숫자여야 합니다.';
  return `입력한 값이 올바르지 않습니다 (${m}).`;
}

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

  const newForm = async (req: FastifyRequest, reply: FastifyReply, values: ClassFormValues, error?: string, rows?: RecipientRow[], status = 200) =>
    renderPage(req, reply, { title: '새 반', active: 'classes', body: classNewForm({ csrf: await csrfToken(req, reply), values, error, rows }) }, status);

  app.get('/classes/new', { schema: { hide: true } }, async (req, reply) => newForm(req, reply, {}));

  app.post('/classes', { bodyLimit: 4 * 1024 * 1024, schema: { hide: true } }, async (req, reply) => {
    const user = userOf(req);
    const values = { name: field(req.body, 'name')?.trim() ?? '', memo: field(req.body, 'memo')?.trim() ?? '', csv: field(req.body, 'csv') ?? '' };
    const csv = await csvRows(req.body);
    if (csv && 'error' in csv) return newForm(req, reply, values, csv.error, undefined, 400);
    if (csv && csv.rows.some((r) => r.errors.length > 0)) return newForm(req, reply, values, undefined, csv.rows, 400);
    let id: string;
    try {
      id = (await svc.create(user.tenant.id, { name: values.name, ...(values.memo ? { memo: values.memo } : {}), members: csv ? membersOf(csv.rows) : [] })).class.id;
    } catch (err) {
      return newForm(req, reply, values, korean(err), undefined, 400);
    }
    await deps.audit.record(user, req.ip, 'class.create', id, `${values.name} (${csv?.rows.length ?? 0}명)`);
    return seeOther(reply, `/console/classes/${id}?notice=created`);
  });

  const show = async (req: FastifyRequest, reply: FastifyReply, id: string, extra: { error?: string; rows?: RecipientRow[]; notice?: string; status?: number } = {}) => {
    const user = userOf(req);
    const { class: c, members } = await svc.get(user.tenant.id, id);
    const body = classDetail({
      c, members, csrf: await csrfToken(req, reply), canEdit: can(user.member, 'class.edit'), error: extra.error, rows: extra.rows,
      monthHref: `/console/classes/${c.id}/month?month=${kstMonth(deps.clock.nowMs())}`,
    });
    return renderPage(req, reply, { title: c.name, active: 'classes', body, notice: extra.notice }, extra.status ?? 200);
  };

  app.get('/classes/:id', { schema: { hide: true, params: IdParams, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) =>
    show(req, reply, req.params.id, { notice: NOTICES[req.query.notice ?? ''] }));

  app.post('/classes/:id', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf, name: Str(10_000), memo: Str(10_000) }) } }, async (req, reply) => {
    const user = userOf(req);
    try {
      await svc.update(user.tenant.id, req.params.id, { name: req.body.name?.trim() ?? '', ...(req.body.memo?.trim() ? { memo: req.body.memo.trim() } : {}) });
    } catch (err) {
      return show(req, reply, req.params.id, { error: korean(err), status: 400 });
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
    schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf, name: Str(10_000), phone: Str(10_000), guardianPhone: Str(10_000), amount: Str(10_000) }) },
  }, async (req, reply) => {
    const user = userOf(req);
    const b = req.body;
    const name = b.name?.trim() ?? '';
    const phone = digits(b.phone);
    const guardian = digits(b.guardianPhone);
    const amount = b.amount?.trim() ? wholeNumber(b.amount) : undefined;
    const problems: string[] = [];
    if (!name || name.length > 30) problems.push('이름은 1~30자로 적어 주세요.');
    if (!/^\d{10,11}$/.test(phone)) problems.push('전화번호는 10~11자리 숫자여야 합니다 (예: 010-1234-5678).');
    if (guardian && !/^\d{10,11}$/.test(guardian)) problems.push('보호자 전화번호는 10~11자리 숫자여야 합니다.');
    if (b.amount?.trim() && (amount === undefined || amount < 100)) problems.push('금액은 100원 이상의 숫자여야 합니다.');
    if (problems.length) return show(req, reply, req.params.id, { error: problems.join(' '), status: 400 });
    try {
      await svc.addMembers(user.tenant.id, req.params.id, [{ name, phone, ...(guardian ? { guardianPhone: guardian } : {}), ...(amount !== undefined ? { amount } : {}) }]);
    } catch (err) {
      return show(req, reply, req.params.id, { error: korean(err), status: 400 });
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
    if (!csv) return show(req, reply, req.params.id, { error: 'CSV 파일을 고르거나 내용을 붙여넣어 주세요.', status: 400 });
    if ('error' in csv) return show(req, reply, req.params.id, { error: csv.error, status: 400 });
    if (csv.rows.some((r) => r.errors.length > 0)) return show(req, reply, req.params.id, { rows: csv.rows, status: 400 });
    const replace = field(req.body, 'mode') === 'replace';
    try {
      if (replace) await svc.replaceMembers(user.tenant.id, req.params.id, membersOf(csv.rows));
      else await svc.addMembers(user.tenant.id, req.params.id, membersOf(csv.rows));
    } catch (err) {
      return show(req, reply, req.params.id, { error: korean(err), status: 400 });
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
