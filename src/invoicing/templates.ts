import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { randomToken } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import { checker } from '../platform/validation.js';
import { dueAfter } from './due.js';
import { netItems } from './items.js';
import * as repo from './console-repository.js';
import type { BillTemplate } from './console-repository.js';
import { TemplateBody, type BillItem, type CreateBillBody } from './schemas.js';

/**
 * Invoice templates (docs/reference.md, "Templates"): saved in the console, used by the API's
 * billTemplateId. A template belongs to one team (its tenant account); another team's id reads
 * as unknown.
 */
export const MAX_TEMPLATES = 200;

const check = checker(TemplateBody);
const validation = (msg: string) => new AppError('VALIDATION', msg);

/** What a template holds, as the console shows it and the API applies it. */
export interface TemplateView {
  id: string;
  name: string;
  reason: string;
  description: string | null;
  amount: number | null;
  items: BillItem[];
  sendChannel: BillTemplate['send_channel'];
  /** Due N days after sending (null: no due date). */
  dueDays: number | null;
  createdAt: number;
  updatedAt: number;
}

export function templateView(t: BillTemplate): TemplateView {
  return {
    id: t.id, name: t.name, reason: t.reason, description: t.description, amount: t.amount === null ? null : Number(t.amount),
    items: t.items_json ? (JSON.parse(t.items_json) as BillItem[]) : [], sendChannel: t.send_channel,
    dueDays: t.due_days === null || t.due_days === undefined ? null : Number(t.due_days),
    createdAt: Number(t.created_at), updatedAt: Number(t.updated_at),
  };
}

/** `field: reason` for a bad template, or the checked body. Items need the amount they add up to. */
function validate(body: unknown): TemplateBody {
  const err = check.firstError(body);
  if (err) throw validation(err);
  const b = body as TemplateBody;
  if (b.items) {
    if (b.amount === undefined) throw validation('amount: is required when the template has items');
    const r = netItems(b.items, b.amount, 'items');
    if ('error' in r) throw validation(r.error);
  }
  return b;
}

/** A new template id: short, unguessable, and plainly a template's (`tpl_...`). */
const newTemplateId = () => `tpl_${randomToken(9)}`;

export class TemplateService {
  constructor(private readonly db: Kysely<Database>, private readonly clock: Clock) {}

  async list(accountId: string): Promise<TemplateView[]> {
    return (await repo.listTemplates(this.db, accountId)).map(templateView);
  }

  async get(accountId: string, id: string): Promise<TemplateView> {
    const t = await repo.findTemplate(this.db, accountId, id);
    if (!t) throw new AppError('NOT_FOUND', 'id: no such template');
    return templateView(t);
  }

  async create(accountId: string, body: unknown): Promise<TemplateView> {
    const b = validate(body);
    if ((await repo.countTemplates(this.db, accountId)) >= MAX_TEMPLATES) throw validation(`templates: at most ${MAX_TEMPLATES} per team; delete one first`);
    const now = this.clock.nowMs();
    const row = {
      id: newTemplateId(), account_id: accountId, name: b.name, reason: b.reason, description: b.description ?? null,
      amount: b.amount ?? null, items_json: b.items ? JSON.stringify(b.items) : null, send_channel: b.sendChannel ?? null, created_at: now, updated_at: now,
      due_days: b.dueDays ?? null,
    };
    await repo.insertTemplate(this.db, row);
    return templateView(row);
  }

  async update(accountId: string, id: string, body: unknown): Promise<TemplateView> {
    const b = validate(body);
    const now = this.clock.nowMs();
    const changed = await repo.updateTemplate(this.db, accountId, id, {
      name: b.name, reason: b.reason, description: b.description ?? null, amount: b.amount ?? null,
      items_json: b.items ? JSON.stringify(b.items) : null, send_channel: b.sendChannel ?? null, updated_at: now,
      due_days: b.dueDays ?? null,
    });
    if (!changed) throw new AppError('NOT_FOUND', 'id: no such template');
    return this.get(accountId, id);
  }

  async remove(accountId: string, id: string): Promise<void> {
    if (!(await repo.deleteTemplate(this.db, accountId, id))) throw new AppError('NOT_FOUND', 'id: no such template');
  }
}

/**
 * The request with its template applied: the template fills what the request leaves out, and
 * what the request gives wins. The amount and the items go together (items must add up to
 * their amount): a request that gives either uses neither of the template's. An INDIVIDUAL
 * request takes its amounts from recipientItems, never from the template. A template's "due N
 * days after sending" gives the due date when the request has none. An unknown id, or
 * another team's, is -20 `billTemplateId: ...`.
 */
export async function applyTemplate(db: Kysely<Database>, accountId: string, body: CreateBillBody, nowMs: number): Promise<CreateBillBody> {
  if (body.billTemplateId === undefined) return body;
  const t = await repo.findTemplate(db, accountId, String(body.billTemplateId));
  if (!t) throw validation(`billTemplateId: no template ${String(body.billTemplateId)} in this account; create it in the console (Templates)`);
  const v = templateView(t);
  const out: CreateBillBody = { ...body };
  out.reason ??= v.reason;
  if (out.description === undefined && v.description !== null) out.description = v.description;
  if (out.sendChannel === undefined && v.sendChannel !== null) out.sendChannel = v.sendChannel;
  // "Due N days after sending": sending starts now.
  if (out.dueDate === undefined && v.dueDays !== null) out.dueDate = dueAfter(v.dueDays, nowMs);
  const individual = (body.templateType ?? 'SAME') === 'INDIVIDUAL';
  if (!individual && body.amount === undefined && body.items === undefined && v.amount !== null) {
    out.amount = v.amount;
    if (v.items.length > 0) out.items = v.items;
  }
  return out;
}
