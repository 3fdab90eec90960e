import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CreateBillBody, type BillItem, type TemplateView } from '../../invoicing/index.js';
import { randomToken } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { checker } from '../../platform/validation.js';
import { decodeCsv, type CsvEncoding } from '../csv-upload.js';
import { fieldErrorsOf, koreanProblem, type FieldErrors } from '../field-errors.js';
import { Csrf, digits, field, fileBytes, Str, wholeNumber } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { parseRecipients, type RecipientRow } from '../recipients.js';
import type { ConsoleUser } from '../sessions.js';
import { bulkForm, bulkPreview, FIRST_ITEM_ROWS, MAX_ITEM_ROWS, rowsSum, singleForm, type CommonValues, type ItemRowValues, type SingleValues } from '../views/invoice-create.js';
import { won } from '../../platform/format.js';

const createCheck = checker(CreateBillBody);
const CHANNELS = ['ALIMTALK', 'SMS', 'ALIMTALK_THEN_SMS'] as const;

/** The parts of a creation request both forms share; empty fields stay out, so a template can fill them. */
function commonBody(v: CommonValues): Partial<CreateBillBody> {
  const out: Partial<CreateBillBody> = {};
  if (v.reason?.trim()) out.reason = v.reason.trim();
  if (v.description?.trim()) out.description = v.description.trim();
  const channel = CHANNELS.find((c) => c === v.sendChannel);
  if (channel) out.sendChannel = channel;
  if (v.template) out.billTemplateId = v.template;
  if (v.webhookUrl?.trim()) out.webhookUrl = v.webhookUrl.trim();
  if (v.dueDate?.trim()) out.dueDate = v.dueDate.trim();
  return out;
}

/** The limits of the shared fields, said in Korean before the API's English would be (src/invoicing/schemas.ts). */
export const SHARED_LIMITS = { reason: 60, description: 200, webhookUrl: 500 } as const;

/** Every problem of the shared fields at once, beside each field; what the API checks later is asked too, this is what a person fixes first. */
function sharedProblems(v: CommonValues, tpl: TemplateView | undefined): FieldErrors {
  const e: FieldErrors = {};
  const reason = v.reason?.trim() ?? '';
  if (!reason && !tpl) e.reason = '청구 사유를 적어 주세요 (알림에 보입니다). 템플릿을 고르면 템플릿의 사유를 씁니다.';
  if (reason.length > SHARED_LIMITS.reason) e.reason = `청구 사유는 ${SHARED_LIMITS.reason}자까지 적을 수 있습니다 (지금 ${reason.length}자).`;
  const description = v.description?.trim() ?? '';
  if (description.length > SHARED_LIMITS.description) e.description = `안내 문구는 ${SHARED_LIMITS.description}자까지 적을 수 있습니다 (지금 ${description.length}자).`;
  const url = v.webhookUrl?.trim() ?? '';
  if (url.length > SHARED_LIMITS.webhookUrl) e.webhookUrl = `웹훅 주소는 ${SHARED_LIMITS.webhookUrl}자까지입니다.`;
  else if (url && !/^https?:\/\//.test(url)) e.webhookUrl = '웹훅 주소는 https://로 시작해야 합니다.';
  if (v.sendChannel && !CHANNELS.some((c) => c === v.sendChannel)) e.sendChannel = '발송 방법을 목록에서 골라 주세요.';
  return e;
}

const emptyRows = (n: number): ItemRowValues[] => Array.from({ length: n }, () => ({ name: '', price: '' }));

/** The item rows as posted (itemRows of them, at most MAX_ITEM_ROWS), values as typed. */
function rowsOf(b: Record<string, string | undefined>): ItemRowValues[] {
  const n = Math.min(Math.max(Number(/^\d{1,2}$/.test(b.itemRows ?? '') ? b.itemRows : FIRST_ITEM_ROWS), 1), MAX_ITEM_ROWS);
  return Array.from({ length: n }, (_, i) => ({ name: b[`itemName${i}`] ?? '', price: b[`itemPrice${i}`] ?? '' }));
}

/** The filled rows as the API's items (a row with neither name nor price is skipped); problems beside each input. */
function rowItems(rows: ItemRowValues[], errors: FieldErrors): BillItem[] | undefined {
  const items: BillItem[] = [];
  rows.forEach((r, i) => {
    const name = r.name.trim();
    if (!name && !r.price.trim()) return;
    const price = wholeNumber(r.price);
    if (!name) errors[`itemName${i}`] = `${i + 1}번 품목명을 적어 주세요.`;
    else if (name.length > 20) errors[`itemName${i}`] = `품목명은 20자까지 적을 수 있습니다 (지금 ${name.length}자).`;
    if (price === undefined || price < 100 || price > 2_147_483_647) errors[`itemPrice${i}`] = `${i + 1}번 금액은 100원 이상의 숫자로 적어 주세요.`;
    else items.push({ name, price });
  });
  return items.length ? items : undefined;
}

/** The tax-free part the 과세 구분 asks for: 0 (과세), the amount (전액 면세), or the typed part, 0..amount (일부 면세). */
function taxFreeOf(b: { taxMode?: string; taxFreeAmount?: string }, amount: number | undefined, errors: FieldErrors): number {
  if (b.taxMode === 'TAX_FREE') return amount ?? 0;
  if (b.taxMode !== 'PART') return 0;
  const typed = b.taxFreeAmount?.trim() ? wholeNumber(b.taxFreeAmount) : undefined;
  if (typed === undefined) {
    errors.taxFreeAmount = b.taxFreeAmount?.trim() ? '면세 금액은 숫자로 적어 주세요 (예: 100,000).' : '일부 면세를 고르셨습니다. 면세 금액을 적어 주세요.';
    return 0;
  }
  if (amount !== undefined && typed > amount) {
    errors.taxFreeAmount = `면세 금액(${won(typed)})은 청구 금액(${won(amount)})보다 클 수 없습니다.`;
    return 0;
  }
  return typed;
}

/** Creating invoices from the console (docs/console.md, "Sending"): one recipient, or many from a CSV with a preview. */
export function invoiceCreateRoutes(app: App, deps: ConsoleDeps): void {
  const inv = deps.invoicing;
  const templates = (u: ConsoleUser) => inv.templates.list(u.tenant.id);
  const costOf = (channel: string | undefined, tpl: TemplateView | undefined) => {
    const c = CHANNELS.find((x) => x === channel) ?? tpl?.sendChannel ?? 'ALIMTALK';
    return c === 'ALIMTALK' ? deps.costs.ALIMTALK : deps.costs.SMS;
  };
  const create = async (req: FastifyRequest, user: ConsoleUser, body: unknown, detail: string) => {
    if (!createCheck.check(body)) throw new AppError('VALIDATION', createCheck.firstError(body) ?? 'body: is invalid');
    await inv.invoices.create(user.tenant, body);
    await deps.audit.record(user, req.ip, 'invoice.create', null, detail);
  };

  // ---- one recipient ------------------------------------------------------------------------

  const single = async (req: FastifyRequest, reply: FastifyReply, values: SingleValues, errors: FieldErrors = {}, status = 200) => {
    const user = userOf(req);
    const body = singleForm({
      csrf: await csrfToken(req, reply), templates: await templates(user), values, errors, costs: deps.costs, balance: await inv.invoices.balance(user.tenant.id),
      itemsSum: rowsSum(values.itemRows, wholeNumber),
    });
    return renderPage(req, reply, { title: '청구서 보내기', active: 'invoices', body }, status);
  };

  app.get('/invoices/new', { schema: { hide: true, querystring: Type.Object({ template: Str(64) }) } }, async (req, reply) =>
    single(req, reply, { requestId: `console-${randomToken(12)}`, template: req.query.template, itemRows: emptyRows(FIRST_ITEM_ROWS) }));

  // Generous limits: a value longer than its field allows comes back beside the field in Korean, never as a bare error page.
  const SingleBody = Type.Object({
    ...Csrf, name: Str(10_000), phone: Str(10_000), guardianPhone: Str(10_000), amount: Str(10_000), reason: Str(10_000), description: Str(10_000),
    sendChannel: Str(100), template: Str(200), requestId: Str(200), webhookUrl: Str(10_000), dueDate: Str(100),
    op: Str(20), itemRows: Str(10), taxMode: Str(20), taxFreeAmount: Str(10_000),
    ...Object.fromEntries(Array.from({ length: MAX_ITEM_ROWS }, (_, i) => [[`itemName${i}`, Str(10_000)], [`itemPrice${i}`, Str(10_000)]]).flat()),
  });
  app.post('/invoices/new', { schema: { hide: true, body: SingleBody } }, async (req, reply) => {
    const user = userOf(req);
    const b = req.body as Static<typeof SingleBody> & Record<string, string | undefined>;
    const values: SingleValues = {
      ...b, itemRows: rowsOf(b), requestId: b.requestId && /^[A-Za-z0-9_-]{8,64}$/.test(b.requestId) ? b.requestId : `console-${randomToken(12)}`,
    };
    // 품목 추가 and 삭제 only change the rows: the form comes back with everything typed, nothing sent.
    if (b.op === 'add') return single(req, reply, { ...values, itemRows: [...values.itemRows, ...emptyRows(1)].slice(0, MAX_ITEM_ROWS) });
    const del = /^del:(\d{1,2})$/.exec(b.op ?? '');
    if (del) {
      const rows = values.itemRows.filter((_, i) => i !== Number(del[1]));
      return single(req, reply, { ...values, itemRows: rows.length ? rows : emptyRows(1) });
    }
    const tpl = b.template ? (await templates(user)).find((t) => t.id === b.template) : undefined;
    const errors = sharedProblems(b, tpl);
    if (b.template && !tpl) errors.template = '고른 템플릿이 없습니다. 다시 골라 주세요.';
    const name = b.name?.trim() ?? '';
    if (!name) errors.name = '받는 분 이름을 적어 주세요.';
    else if (name.length > 30) errors.name = `이름은 30자까지 적을 수 있습니다 (지금 ${name.length}자).`;
    const phoneDigits = digits(b.phone);
    if (!/^\d{10,11}$/.test(phoneDigits)) errors.phone = phoneDigits ? '전화번호는 10~11자리 숫자여야 합니다 (예: 010-1234-5678).' : '전화번호를 적어 주세요.';
    const guardian = digits(b.guardianPhone);
    if (guardian && !/^\d{10,11}$/.test(guardian)) errors.guardianPhone = '보호자 전화번호는 10~11자리 숫자여야 합니다.';
    const items = rowItems(values.itemRows, errors);
    // A row with a problem makes the sum meaningless: its own problem is said, not the sum's.
    const rowsOk = !Object.keys(errors).some((k) => k.startsWith('item'));
    const typed = b.amount?.trim() ? wholeNumber(b.amount) : undefined;
    const itemsSum = rowsOk ? items?.reduce((s, it) => s + it.price, 0) : undefined;
    let amount = typed;
    if (b.amount?.trim() && (typed === undefined || typed < 100 || typed > 2_147_483_647)) errors.amount = '금액은 100원 이상의 숫자로 적어 주세요 (예: 128,000).';
    else if (!b.amount?.trim() && itemsSum !== undefined) amount = itemsSum;
    else if (!b.amount?.trim() && !tpl?.amount) errors.amount = '금액을 적어 주세요 (금액이 있는 템플릿을 고르거나 항목을 적으면 비워 둘 수 있습니다).';
    if (!errors.amount && itemsSum !== undefined && amount !== undefined && amount !== itemsSum) {
      errors.amount = `금액(${won(amount)})이 항목 합계(${won(itemsSum)})와 다릅니다. 금액이나 항목을 고쳐 주세요.`;
    }
    const taxFreeAmount = taxFreeOf(b, amount ?? tpl?.amount ?? undefined, errors);
    if (Object.keys(errors).length > 0) return single(req, reply, values, errors, 400);
    const body = {
      ...commonBody(b), requestId: values.requestId, ...(amount !== undefined ? { amount } : {}), ...(items ? { items } : {}),
      ...(taxFreeAmount ? { taxFreeAmount } : {}),
      members: [{ studentName: name, studentPhone: phoneDigits, ...(guardian ? { guardianPhone: guardian } : {}) }],
    };
    try {
      // The form's requestId makes a double submit create one invoice, as the API's requestId does.
      await create(req, user, body, `1명: ${name}`);
    } catch (err) {
      return single(req, reply, values, fieldErrorsOf(err), err instanceof AppError ? err.httpStatus : 400);
    }
    return seeOther(reply, '/console/invoices?notice=created');
  });

  // ---- many, from a CSV -----------------------------------------------------------------------

  const bulkPage = async (req: FastifyRequest, reply: FastifyReply, values: CommonValues & { csv?: string }, errors: FieldErrors = {}, status = 200) => {
    const body = bulkForm({ csrf: await csrfToken(req, reply), templates: await templates(userOf(req)), values, errors });
    return renderPage(req, reply, { title: 'CSV로 보내기', active: 'invoices', body }, status);
  };

  app.get('/invoices/bulk', { schema: { hide: true } }, async (req, reply) => bulkPage(req, reply, {}));

  /** The creation request a send of these rows makes (the preview checks exactly this). */
  const sendBody = (values: CommonValues, rows: RecipientRow[], tpl: TemplateView | undefined) => {
    const amountOf = (r: RecipientRow) => r.amount ?? tpl?.amount ?? 0;
    const itemsOfRow = (r: RecipientRow) => r.items ?? (r.amount === null && tpl?.items.length ? tpl.items : undefined);
    return {
      ...commonBody(values), templateType: 'INDIVIDUAL',
      members: rows.map((r) => ({ studentName: r.name, studentPhone: r.phone, ...(r.guardianPhone ? { guardianPhone: r.guardianPhone } : {}) })),
      recipientItems: rows.map((r) => {
        const items = itemsOfRow(r);
        return { studentName: r.name, studentPhone: r.phone, amount: amountOf(r), ...(items ? { items } : {}), ...(r.taxFree ? { taxFreeAmount: r.taxFree } : {}) };
      }),
    };
  };

  /**
   * Reads the rows (a file in any encoding Korean offices save, or pasted text), checks every
   * shared field and then the whole send as creation would check it, writing nothing. A
   * problem of the form (a field, the file) brings the form back filled, with each problem
   * beside its field; problems of rows are the preview's.
   */
  const preview = async (req: FastifyRequest, reply: FastifyReply, values: CommonValues, source: { bytes?: Buffer; text: string }) => {
    const user = userOf(req);
    const all = await templates(user);
    const tpl = values.template ? all.find((t) => t.id === values.template) : undefined;
    const errors: FieldErrors = sharedProblems(values, tpl);
    if (values.template && !tpl) errors.template = '고른 템플릿이 없습니다. 다시 골라 주세요.';
    let csv = source.text;
    let encoding: CsvEncoding | null = null;
    if (source.bytes) {
      const decoded = await decodeCsv(source.bytes);
      if ('error' in decoded) errors.file = decoded.error;
      else ({ text: csv, encoding } = decoded);
    }
    const parsed = errors.file ? { rows: [] as RecipientRow[] } : await parseRecipients(csv, { templateAmount: tpl?.amount ?? null });
    if (parsed.error) errors[source.bytes ? 'file' : 'csv'] = parsed.error;
    const good = () => parsed.rows.filter((r) => r.errors.length === 0);
    if (Object.keys(errors).length === 0 && good().length > 0) {
      // What the send would refuse, asked now: a row's problem goes to its row, a shared one beside its field.
      const rows = good();
      const body = sendBody(values, rows, tpl);
      try {
        const schemaProblem = createCheck.firstError(body);
        if (schemaProblem) throw new AppError('VALIDATION', schemaProblem);
        await inv.invoices.check(user.tenant, body as CreateBillBody);
      } catch (err) {
        const found = fieldErrorsOf(err);
        const p = err instanceof AppError ? koreanProblem(err.message) : undefined;
        const row = p && /^(members|recipientItems)\[(\d+)\]/.exec(p.path);
        if (row) rows[Number(row[2])]!.errors.push(p.message);
        else Object.assign(errors, found);
      }
    }
    if (Object.keys(errors).length > 0) return { done: await bulkPage(req, reply, { ...values, csv }, errors, 400) };
    const perMessage = costOf(values.sendChannel, tpl);
    const sendable = good();
    const cost = perMessage * sendable.length;
    return { rows: parsed.rows, sendable, tpl, perMessage, cost, show: async (status = 200, error?: string) => {
      const body = bulkPreview({
        csrf: await csrfToken(req, reply), rows: parsed.rows, values, csv, encoding, templateAmount: tpl?.amount ?? null, cost, perMessage,
        balance: await inv.invoices.balance(user.tenant.id), error,
      });
      return renderPage(req, reply, { title: 'CSV 미리 보기', active: 'invoices', body }, status);
    } };
  };

  const valuesOf = (body: unknown): CommonValues => ({
    reason: field(body, 'reason'), description: field(body, 'description'), sendChannel: field(body, 'sendChannel'), template: field(body, 'template'),
    webhookUrl: field(body, 'webhookUrl'), dueDate: field(body, 'dueDate'),
  });

  // Multipart (a file) or urlencoded (pasted text). The multipart limits (src/console/index.ts)
  // stop a file at CSV_LIMITS.bytes while it streams in; decoding and parsing go a slice per turn.
  app.post('/invoices/bulk/preview', { bodyLimit: 4 * 1024 * 1024, schema: { hide: true } }, async (req, reply) => {
    const bytes = fileBytes(req.body, 'file');
    const p = await preview(req, reply, valuesOf(req.body), bytes && bytes.length > 0 ? { bytes, text: '' } : { text: field(req.body, 'csv') ?? '' });
    return 'done' in p ? p.done : p.show();
  });

  app.post('/invoices/bulk', {
    bodyLimit: 4 * 1024 * 1024,
    schema: { hide: true, body: Type.Object({ ...Csrf, csv: Str(3_000_000), reason: Str(10_000), description: Str(10_000), sendChannel: Str(100), template: Str(200), webhookUrl: Str(10_000), dueDate: Str(100) }) },
  }, async (req, reply) => {
    const user = userOf(req);
    const values = valuesOf(req.body);
    const p = await preview(req, reply, values, { text: req.body.csv ?? '' });
    if ('done' in p) return p.done;
    if (p.rows.some((r) => r.errors.length > 0) || p.sendable.length === 0) return p.show(400);
    try {
      await create(req, user, sendBody(values, p.sendable, p.tpl), `${p.sendable.length}명`);
    } catch (err) {
      const e = fieldErrorsOf(err);
      return p.show(err instanceof AppError ? err.httpStatus : 400, Object.values(e).join(' '));
    }
    return seeOther(reply, '/console/invoices?notice=created');
  });
}
