import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CreateBillBody, type BillItem, type TemplateView } from '../../invoicing/index.js';
import { randomToken } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { checker } from '../../platform/validation.js';
import { Csrf, digits, field, Str, wholeNumber } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { parseItems, parseRecipients, type RecipientRow } from '../recipients.js';
import type { ConsoleUser } from '../sessions.js';
import { bulkForm, bulkPreview, singleForm, type CommonValues, type SingleValues } from '../views/invoice-create.js';

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

/** `이름:가격[:수량]; ...` of the single form (the CSV's 항목 format). */
function itemsOf(text: string | undefined): BillItem[] | undefined | { error: string } {
  if (!text?.trim()) return undefined;
  const r = parseItems(text);
  return 'error' in r ? r : r.items;
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

  const single = async (req: FastifyRequest, reply: FastifyReply, values: SingleValues, error?: string, status = 200) => {
    const user = userOf(req);
    const body = singleForm({ csrf: await csrfToken(req, reply), templates: await templates(user), values, error, costs: deps.costs, balance: await inv.invoices.balance(user.tenant.id) });
    return renderPage(req, reply, { title: '청구서 보내기', active: 'invoices', body }, status);
  };

  app.get('/invoices/new', { config: { consoleRole: 'manager' }, schema: { hide: true, querystring: Type.Object({ template: Str(64) }) } }, async (req, reply) =>
    single(req, reply, { requestId: `console-${randomToken(12)}`, template: req.query.template }));

  const SingleBody = Type.Object({
    ...Csrf, name: Str(30), phone: Str(20), guardianPhone: Str(20), amount: Str(20), items: Str(2000), reason: Str(60), description: Str(200),
    sendChannel: Str(20), template: Str(64), requestId: Str(64), webhookUrl: Str(500), dueDate: Str(10),
  });
  app.post('/invoices/new', { config: { consoleRole: 'manager' }, schema: { hide: true, body: SingleBody } }, async (req, reply) => {
    const user = userOf(req);
    const b = req.body;
    const values: SingleValues = { ...b, requestId: b.requestId && /^[A-Za-z0-9_-]{8,64}$/.test(b.requestId) ? b.requestId : `console-${randomToken(12)}` };
    const amount = b.amount?.trim() ? wholeNumber(b.amount) : undefined;
    if (b.amount?.trim() && amount === undefined) return single(req, reply, values, '금액은 숫자로 적어 주세요.', 400);
    const items = itemsOf(b.items);
    if (items && 'error' in items) return single(req, reply, values, items.error, 400);
    const guardian = digits(b.guardianPhone);
    const body = {
      ...commonBody(b), requestId: values.requestId, ...(amount !== undefined ? { amount } : {}), ...(items ? { items } : {}),
      members: [{ studentName: b.name?.trim() ?? '', studentPhone: digits(b.phone), ...(guardian ? { guardianPhone: guardian } : {}) }],
    };
    try {
      // The form's requestId makes a double submit create one invoice, as the API's requestId does.
      await create(req, user, body, `1명: ${b.name ?? ''}`);
    } catch (err) {
      if (err instanceof AppError && err.httpStatus < 500 && err.kind !== 'NOT_FOUND') return single(req, reply, values, err.message, err.httpStatus);
      throw err;
    }
    return seeOther(reply, '/console/invoices?notice=created');
  });

  // ---- many, from a CSV -----------------------------------------------------------------------

  app.get('/invoices/bulk', { config: { consoleRole: 'manager' }, schema: { hide: true } }, async (req, reply) => {
    const user = userOf(req);
    return renderPage(req, reply, { title: 'CSV로 보내기', active: 'invoices', body: bulkForm({ csrf: await csrfToken(req, reply), templates: await templates(user), values: {} }) });
  });

  const preview = async (req: FastifyRequest, reply: FastifyReply, values: CommonValues, csv: string, error?: string) => {
    const user = userOf(req);
    const tpl = values.template ? (await templates(user)).find((t) => t.id === values.template) : undefined;
    if (values.template && !tpl) throw new AppError('NOT_FOUND', 'template: no such template');
    const parsed = parseRecipients(csv, { templateAmount: tpl?.amount ?? null });
    if (parsed.error) {
      const body = bulkForm({ csrf: await csrfToken(req, reply), templates: await templates(user), values: { ...values, csv }, error: parsed.error });
      return { done: await renderPage(req, reply, { title: 'CSV로 보내기', active: 'invoices', body }, 400) };
    }
    const perMessage = costOf(values.sendChannel, tpl);
    return { rows: parsed.rows, tpl, perMessage, cost: perMessage * parsed.rows.length, show: async (status = 200, err = error) => {
      const body = bulkPreview({
        csrf: await csrfToken(req, reply), rows: parsed.rows, values, csv, templateAmount: tpl?.amount ?? null, cost: perMessage * parsed.rows.length, perMessage,
        balance: await inv.invoices.balance(user.tenant.id), error: err,
      });
      return renderPage(req, reply, { title: 'CSV 미리 보기', active: 'invoices', body }, status);
    } };
  };

  const valuesOf = (body: unknown): CommonValues => ({
    reason: field(body, 'reason'), description: field(body, 'description'), sendChannel: field(body, 'sendChannel'), template: field(body, 'template'),
    webhookUrl: field(body, 'webhookUrl'), dueDate: field(body, 'dueDate'),
  });

  // Multipart (a file) or urlencoded (pasted text); the body is read field by field, checked as text.
  app.post('/invoices/bulk/preview', { config: { consoleRole: 'manager' }, bodyLimit: 4 * 1024 * 1024, schema: { hide: true } }, async (req, reply) => {
    const file = field(req.body, 'file');
    const csv = file?.trim() ? file : field(req.body, 'csv') ?? '';
    const p = await preview(req, reply, valuesOf(req.body), csv);
    return 'done' in p ? p.done : p.show();
  });

  app.post('/invoices/bulk', {
    config: { consoleRole: 'manager' }, bodyLimit: 4 * 1024 * 1024,
    schema: { hide: true, body: Type.Object({ ...Csrf, csv: Str(3_000_000), reason: Str(60), description: Str(200), sendChannel: Str(20), template: Str(64), webhookUrl: Str(500), dueDate: Str(10) }) },
  }, async (req, reply) => {
    const user = userOf(req);
    const values = valuesOf(req.body);
    const p = await preview(req, reply, values, req.body.csv ?? '');
    if ('done' in p) return p.done;
    if (p.rows.some((r) => r.errors.length > 0)) return p.show(400);
    const amountOf = (r: RecipientRow) => r.amount ?? p.tpl?.amount ?? 0;
    const itemsOfRow = (r: RecipientRow) => r.items ?? (r.amount === null && p.tpl?.items.length ? p.tpl.items : undefined);
    const body = {
      ...commonBody(values), templateType: 'INDIVIDUAL',
      members: p.rows.map((r) => ({ studentName: r.name, studentPhone: r.phone, ...(r.guardianPhone ? { guardianPhone: r.guardianPhone } : {}) })),
      recipientItems: p.rows.map((r) => {
        const items = itemsOfRow(r);
        return { studentName: r.name, studentPhone: r.phone, amount: amountOf(r), ...(items ? { items } : {}) };
      }),
    };
    try {
      await create(req, user, body, `${p.rows.length}명`);
    } catch (err) {
      if (err instanceof AppError && err.httpStatus < 500 && err.kind !== 'NOT_FOUND') return p.show(err.httpStatus, err.message);
      throw err;
    }
    return seeOther(reply, '/console/invoices?notice=created');
  });
}
