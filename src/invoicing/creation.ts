import { randomBytes } from 'node:crypto';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { InvoiceTable, SendTable } from '../db/schema.js';
import { enqueue } from '../jobs/define.js';
import type { Clock } from '../platform/clock.js';
import { newId, sha256Hex, type SecretBox } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
import { urlProblem, type HttpPolicy } from '../platform/urls.js';
import type { SendChannel } from './invoice-state.js';
import { netItems } from './items.js';
import { reserve, reserveCost, type Costs } from './points.js';
import * as repo from './repository.js';
import type { Account } from './repository.js';
import type { CreateBillBody } from './schemas.js';
import { SEND_JOB } from './sends.js';
import { applyTemplate } from './templates.js';
import { dueDateProblem } from './due.js';
import { planReminders } from './reminders.js';
import { storeLines, type StoredLine } from '../gateway/index.js';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** 'INV' + 24 base32 characters (120 random bits): unguessable, well within TRANS_SEQNO's 64. */
export function newTransSeqNo(): string {
  const bytes = randomBytes(15);
  let bits = 0;
  let value = 0;
  let out = 'INV';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** JSON with object keys sorted: two requests with the same content hash the same. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The stored fingerprint of a creation request: the request as sent, defaults spelled out so
 * omitting one is the same content. With a billTemplateId it covers the template's id, not the
 * template's values (docs/reference.md, "Templates"): a retry is recognized as the same request
 * even when the template was edited or deleted meanwhile, and the invoice already made stands.
 * An absent sendChannel then means "the template's", so its default is not spelled out.
 */
export function requestHash(body: CreateBillBody): string {
  const templated = body.billTemplateId !== undefined;
  return sha256Hex(canonicalJson({
    ...body, templateType: body.templateType ?? 'SAME', sendChannel: body.sendChannel ?? (templated ? undefined : 'ALIMTALK'),
    billTemplateId: templated ? String(body.billTemplateId) : undefined,
  }));
}

interface Recipient {
  name: string;
  phone: string;
  guardianPhone: string | null;
  birthDate: string | null;
  classroomId: string | null;
  amount: number;
  items: StoredLine[] | null;
  reason: string;
  description: string | null;
  taxFreeAmount: number;
}

const validation = (msg: string) => new AppError('VALIDATION', msg);

/** The tax-free part: 0 when absent, never more than the amount (docs/invoicing.md, "Tax-free amounts"). */
function taxFree(value: number | undefined, amount: number, path: string): number {
  if (value === undefined) return 0;
  if (value > amount) throw validation(`${path}: must be at most the amount (${amount})`);
  return value;
}

/** One recipient per member: SAME shares the amount and items; INDIVIDUAL pairs each member with its entry. */
export function recipients(body: CreateBillBody): Recipient[] {
  const base = (m: CreateBillBody['members'][number]) => ({
    name: m.studentName, phone: m.studentPhone, guardianPhone: m.guardianPhone ?? null,
    birthDate: m.studentBirthDate ?? null, classroomId: m.classroomId === undefined ? null : String(m.classroomId),
  });
  const nets = (items: CreateBillBody['items'], amount: number, path: string): StoredLine[] | null => {
    if (!items) return null;
    const r = netItems(items, amount, path);
    if ('error' in r) throw validation(r.error);
    return r;
  };
  if ((body.templateType ?? 'SAME') === 'SAME') {
    if (body.reason === undefined) throw validation('reason: is required');
    if (body.amount === undefined) throw validation('amount: is required');
    const items = nets(body.items, body.amount, 'items');
    const reason = body.reason;
    const taxFreeAmount = taxFree(body.taxFreeAmount, body.amount, 'taxFreeAmount');
    return body.members.map((m) => ({ ...base(m), amount: body.amount!, items, reason, description: body.description ?? null, taxFreeAmount }));
  }
  const entries = body.recipientItems;
  if (!entries) throw validation('recipientItems: is required when templateType is INDIVIDUAL');
  if (entries.length !== body.members.length) throw validation('recipientItems: must have exactly one entry per member');
  return body.members.map((m, i) => {
    const matches = entries.flatMap((e, j) => (e.studentName === m.studentName && e.studentPhone === m.studentPhone ? [j] : []));
    if (matches.length !== 1) {
      throw validation(`recipientItems: members[${i}] needs exactly one entry with the same studentName and studentPhone`);
    }
    const j = matches[0]!;
    const e = entries[j]!;
    const reason = e.reason ?? body.reason;
    if (reason === undefined) throw validation(`reason: is required (or recipientItems[${j}].reason)`);
    return {
      ...base(m), amount: e.amount, items: nets(e.items, e.amount, `recipientItems[${j}].items`),
      reason, description: e.description ?? body.description ?? null,
      taxFreeAmount: taxFree(e.taxFreeAmount, e.amount, `recipientItems[${j}].taxFreeAmount`),
    };
  });
}

export interface CreationDeps {
  clock: Clock;
  box: SecretBox;
  costs: Costs;
  /** What webhookUrl may be. */
  webhookUrlPolicy: HttpPolicy;
}

/** Send rows and their jobs (and their points, through reserve), in the caller's transaction. */
export async function queueSends(trx: Transaction<Database>, accountId: string, sends: Insertable<SendTable>[], now: number, runAt: number): Promise<void> {
  await repo.insertSends(trx, sends);
  await reserve(trx, accountId, sends, now);
  for (const s of sends) await enqueue(trx, SEND_JOB, { sendId: s.id }, { runAt, uniqueKey: `send:${s.id}`, now });
}

/**
 * Every check creation makes before it writes (the template applied, webhookUrl, the
 * recipients), writing nothing: creation runs it first, and the console's CSV preview runs it
 * so that it never offers a send that would then be refused.
 */
export async function checkInvoices(db: Kysely<Database>, deps: Pick<CreationDeps, 'webhookUrlPolicy' | 'clock'>, account: Account, sent: CreateBillBody): Promise<{ body: CreateBillBody; list: Recipient[] }> {
  if (sent.dueDate !== undefined) {
    const problem = dueDateProblem(sent.dueDate, deps.clock.nowMs());
    if (problem) throw validation(problem);
  }
  const body = await applyTemplate(db, account.id, sent, deps.clock.nowMs());
  if (body.webhookSecret !== undefined && body.webhookUrl === undefined) {
    throw validation('webhookSecret: may only be given together with webhookUrl');
  }
  const urlIssue = body.webhookUrl !== undefined ? urlProblem(body.webhookUrl, deps.webhookUrlPolicy) : null;
  if (urlIssue) throw validation(`webhookUrl: ${urlIssue}`);
  if (body.requestId !== undefined && body.members.length > 1) {
    throw new AppError('IDEMPOTENCY_MULTI', 'requestId: idempotent sending supports one recipient only');
  }
  if (body.reminders !== undefined) {
    if (body.dueDate === undefined) throw validation('reminders: need a due date (dueDate, or a template with "due N days after sending")');
    if (body.reminders.beforeDays === undefined && body.reminders.afterDays === undefined) throw validation('reminders: give beforeDays, afterDays or both');
  }
  return { body, list: recipients(body) };
}

/**
 * Creates the invoices of one request in one transaction: the invoices (PENDING, WAITING) and
 * the account's live-invoice count, the points of every recipient (or none: -21), one send row
 * and one send job per invoice. A requestId is unique per account in the database; a
 * concurrent or later repeat lands on that index and is compared by hash. True when something
 * new was created (false for a repeat of the same request).
 */
export async function createInvoices(db: Kysely<Database>, deps: CreationDeps, account: Account, sent: CreateBillBody): Promise<boolean> {
  const hash = requestHash(sent);
  // A repeat of a request already made answers as done before its template is looked at again.
  if (sent.requestId !== undefined && sent.members.length === 1 && (await sameRequest(db, account.id, sent.requestId, hash))) return false;
  const { body, list } = await checkInvoices(db, deps, account, sent);

  const channel: SendChannel = body.sendChannel ?? 'ALIMTALK';
  const cost = reserveCost(channel, deps.costs);
  const now = deps.clock.nowMs();
  const sealed = body.webhookSecret !== undefined ? deps.box.seal(body.webhookSecret) : null;
  const rows: Insertable<InvoiceTable>[] = list.map((r) => ({
    unique_id: newId(), account_id: account.id, store_code: account.store_code, trans_seqno: newTransSeqNo(),
    payment_id: null, status: 'PENDING', send_status: 'WAITING', deleted_at: null,
    request_id: body.requestId ?? null, request_hash: body.requestId !== undefined ? hash : null,
    template_type: body.templateType ?? 'SAME', receiver_name: r.name, receiver_phone: r.phone, guardian_phone: r.guardianPhone,
    amount: r.amount, tax_free_amount: r.taxFreeAmount, reason: r.reason, description: r.description, items_json: storeLines(r.items ?? []),
    send_channel: channel, webhook_url: body.webhookUrl ?? null, webhook_secret_sealed: sealed,
    bill_template_id: body.billTemplateId === undefined ? null : String(body.billTemplateId),
    related_subject: body.relatedSubject ?? null, etc: body.etc ?? null,
    student_birth_date: r.birthDate, classroom_id: r.classroomId, due_date: body.dueDate ?? null,
    remind_before_days: body.reminders?.beforeDays ?? null, remind_after_days: body.reminders?.afterDays ?? null, remind_limit: body.reminders?.times ?? null,
    send_count: 0, first_sent_at: null, last_sent_at: null, done_at: null, canceled_at: null, created_at: now, updated_at: now,
  }));
  try {
    await db.transaction().execute(async (trx) => {
      const ids = await repo.insertInvoices(trx, account.id, rows);
      const sends: Insertable<SendTable>[] = rows.map((row, i) => ({
        id: newId(), invoice_id: ids.get(row.unique_id)!, account_id: account.id, send_type: 'INITIAL', status: 'WAITING',
        channel_requested: channel, channel_used: null, receiver_phone: list[i]!.guardianPhone ?? list[i]!.phone,
        cost_reserved: cost, cost_settled: null, provider_message_id: null, delivery_status: null, error_message: null,
        sent_at: null, created_at: now,
      }));
      await queueSends(trx, account.id, sends, now, now);
      await planReminders(trx, rows, ids, now);
    });
  } catch (err) {
    if (body.requestId !== undefined && isUniqueViolation(err) && (await sameRequest(db, account.id, body.requestId, hash))) return false;
    throw err;
  }
  return true;
}

/** True when this requestId already made an invoice from the same content; -22 when from other content. */
async function sameRequest(db: Kysely<Database>, accountId: string, requestId: string, hash: string): Promise<boolean> {
  const existing = await repo.findInvoiceByRequestId(db, accountId, requestId);
  if (!existing) return false;
  if (existing.request_hash !== hash) {
    throw new AppError('IDEMPOTENCY_CONFLICT', 'requestId: a different invoice cannot be sent with the same requestId');
  }
  return true;
}
