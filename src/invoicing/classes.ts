import { Type, type Static } from '@sinclair/typebox';
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { ClassMemberTable } from '../db/schema-billing.js';
import type { Clock } from '../platform/clock.js';
import { randomToken } from '../platform/crypto.js';
import { AppError, isUniqueViolation } from '../platform/errors.js';
import { checker } from '../platform/validation.js';
import * as repo from './billing-repository.js';
import type { ClassMemberRow, ClassRow } from './billing-repository.js';
import { netItems } from './items.js';
import { BillItem, Items } from './schemas.js';

/**
 * Classes (docs/invoicing.md, "Classes"): a named list of recipients of one team, billed by a
 * schedule or by hand. A team has many; the same person may be in several (a row in each).
 * Archiving hides a class and stops its schedules from billing it; it can be brought back.
 */
export const MAX_CLASSES = 200;
/** As many as one send may carry. */
export const MAX_CLASS_MEMBERS = 1000;

export const ClassMemberBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 30, examples: ['김하늘'] }),
  phone: Type.String({ pattern: '^\\d{10,11}$', 'x-reason': 'must be 10 to 11 digits', examples: ['01012345678'] }),
  guardianPhone: Type.Optional(Type.String({ pattern: '^\\d{10,11}$', 'x-reason': 'must be 10 to 11 digits', description: 'When present, the messages go to this number', examples: ['01098765432'] })),
  amount: Type.Optional(Type.Integer({ minimum: 100, maximum: 2_147_483_647, 'x-reason': 'must be a whole number of won from 100 to 2147483647', description: "This member's amount; absent: the template's" })),
  items: Type.Optional(Items),
  memo: Type.Optional(Type.String({ maxLength: 100 })),
});
export type ClassMemberBody = Static<typeof ClassMemberBody>;

export const ClassBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 40, examples: ['초등 피아노 A반'] }),
  memo: Type.Optional(Type.String({ maxLength: 200, examples: ['월·수·금 4시'] })),
  members: Type.Optional(Type.Array(ClassMemberBody, { maxItems: MAX_CLASS_MEMBERS, description: 'The recipients (replaces them all on PUT .../members)' })),
});
export type ClassBody = Static<typeof ClassBody>;
export const ClassMembersBody = Type.Object({ members: Type.Array(ClassMemberBody, { maxItems: MAX_CLASS_MEMBERS }) });

const checkClass = checker(ClassBody);
const checkMember = checker(ClassMemberBody);
const validation = (msg: string) => new AppError('VALIDATION', msg);
const notFound = () => new AppError('NOT_FOUND', 'id: no such class');

export interface ClassMemberView {
  id: string;
  name: string;
  phone: string;
  guardianPhone: string | null;
  amount: number | null;
  items: BillItem[];
  memo: string | null;
}

export interface ClassView {
  id: string;
  name: string;
  memo: string | null;
  archived: boolean;
  memberCount: number;
  createdAt: number;
  updatedAt: number;
}

export function memberView(m: ClassMemberRow): ClassMemberView {
  return {
    id: m.id, name: m.name, phone: m.phone, guardianPhone: m.guardian_phone, amount: m.amount === null ? null : Number(m.amount),
    items: m.items_json ? (JSON.parse(m.items_json) as BillItem[]) : [], memo: m.memo,
  };
}

function classView(c: Pick<ClassRow, 'id' | 'name' | 'memo' | 'archived_at' | 'created_at' | 'updated_at'>, members: number): ClassView {
  return { id: c.id, name: c.name, memo: c.memo, archived: c.archived_at !== null, memberCount: members, createdAt: Number(c.created_at), updatedAt: Number(c.updated_at) };
}

/**
 * The members' problems, named by path (`members[2].phone: ...`): each checked by the schema,
 * items adding up to the member's amount, and one person (name and phone) once per class.
 */
export function checkMembers(members: unknown[], path = 'members'): ClassMemberBody[] {
  if (members.length > MAX_CLASS_MEMBERS) throw validation(`${path}: at most ${MAX_CLASS_MEMBERS} per class`);
  const seen = new Map<string, number>();
  return members.map((m, i) => {
    const err = checkMember.firstError(m);
    if (err) throw validation(`${path}[${i}].${err}`);
    const b = m as ClassMemberBody;
    if (b.items) {
      if (b.amount === undefined) throw validation(`${path}[${i}].amount: is required when the member has items`);
      const r = netItems(b.items, b.amount, `${path}[${i}].items`);
      if ('error' in r) throw validation(r.error);
    }
    const key = `${b.name}\u0000${b.phone}`;
    if (seen.has(key)) throw validation(`${path}[${i}]: the same name and phone as ${path}[${seen.get(key)}]; a person is in a class once`);
    seen.set(key, i);
    return b;
  });
}

/** A new class id: short, unguessable, plainly a class's (`cls_...`). */
const newClassId = () => `cls_${randomToken(9)}`;
const newMemberId = () => `mbr_${randomToken(9)}`;

export class ClassService {
  constructor(private readonly db: Kysely<Database>, private readonly clock: Clock) {}

  async list(accountId: string, opts: { archived?: boolean } = {}): Promise<ClassView[]> {
    return (await repo.listClasses(this.db, accountId, { archived: opts.archived === true })).map((c) => classView(c, Number(c.members ?? 0)));
  }

  async get(accountId: string, id: string): Promise<{ class: ClassView; members: ClassMemberView[] }> {
    const c = await repo.findClass(this.db, accountId, id);
    if (!c) throw notFound();
    const members = await repo.membersOf(this.db, accountId, id);
    return { class: classView(c, members.length), members: members.map(memberView) };
  }

  /** The class row (schedules and the month view read it); another team's reads as missing. */
  async row(accountId: string, id: string): Promise<ClassRow> {
    const c = await repo.findClass(this.db, accountId, id);
    if (!c) throw notFound();
    return c;
  }

  async create(accountId: string, body: unknown): Promise<{ class: ClassView; members: ClassMemberView[] }> {
    const err = checkClass.firstError(body);
    if (err) throw validation(err);
    const b = body as ClassBody;
    const members = checkMembers(b.members ?? []);
    if ((await repo.countClasses(this.db, accountId)) >= MAX_CLASSES) throw validation(`classes: at most ${MAX_CLASSES} per team; archive is not enough, a class stays counted`);
    const now = this.clock.nowMs();
    const id = newClassId();
    await this.db.transaction().execute(async (trx) => {
      await repo.insertClass(trx, { id, account_id: accountId, name: b.name, memo: b.memo ?? null, archived_at: null, created_at: now, updated_at: now });
      await repo.insertMembers(trx, this.rows(accountId, id, members, 0, now));
    });
    return this.get(accountId, id);
  }

  async update(accountId: string, id: string, body: unknown): Promise<ClassView> {
    const err = checkClass.firstError(body);
    if (err) throw validation(err);
    const b = body as ClassBody;
    if (!(await repo.updateClass(this.db, accountId, id, { name: b.name, memo: b.memo ?? null, updated_at: this.clock.nowMs() }))) throw notFound();
    return (await this.get(accountId, id)).class;
  }

  /** Archived: hidden from the list, and its schedules bill nothing (their runs say so). */
  async setArchived(accountId: string, id: string, archived: boolean): Promise<ClassView> {
    const now = this.clock.nowMs();
    if (!(await repo.updateClass(this.db, accountId, id, { archived_at: archived ? now : null, updated_at: now }))) throw notFound();
    return (await this.get(accountId, id)).class;
  }

  /** Replaces every member at once (a CSV import, or the API's PUT): all or nothing. */
  async replaceMembers(accountId: string, id: string, members: unknown[]): Promise<ClassMemberView[]> {
    const checked = checkMembers(members);
    await this.row(accountId, id);
    const now = this.clock.nowMs();
    await this.db.transaction().execute(async (trx) => {
      await repo.deleteMembers(trx, accountId, id);
      await repo.insertMembers(trx, this.rows(accountId, id, checked, 0, now));
      await repo.touchClass(trx, accountId, id, now);
    });
    return (await this.get(accountId, id)).members;
  }

  /** Adds members at the end; a person already in the class is refused (`members[i]: ...`). */
  async addMembers(accountId: string, id: string, members: unknown[]): Promise<ClassMemberView[]> {
    const checked = checkMembers(members);
    await this.row(accountId, id);
    const now = this.clock.nowMs();
    try {
      await this.db.transaction().execute(async (trx) => {
        const have = await repo.countMembers(trx, accountId, id);
        if (have + checked.length > MAX_CLASS_MEMBERS) throw validation(`members: at most ${MAX_CLASS_MEMBERS} per class (it has ${have})`);
        await repo.insertMembers(trx, this.rows(accountId, id, checked, await repo.nextPosition(trx, id), now));
        await repo.touchClass(trx, accountId, id, now);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw validation('members: someone with the same name and phone is in the class already');
      throw err;
    }
    return (await this.get(accountId, id)).members;
  }

  async removeMember(accountId: string, id: string, memberId: string): Promise<void> {
    await this.row(accountId, id);
    if (!(await repo.deleteMember(this.db, accountId, id, memberId))) throw new AppError('NOT_FOUND', 'memberId: no such member in this class');
    await repo.touchClass(this.db, accountId, id, this.clock.nowMs());
  }

  private rows(accountId: string, classId: string, members: ClassMemberBody[], from: number, now: number): Insertable<ClassMemberTable>[] {
    return members.map((m, i) => ({
      id: newMemberId(), class_id: classId, account_id: accountId, name: m.name, phone: m.phone, guardian_phone: m.guardianPhone ?? null,
      amount: m.amount ?? null, items_json: m.items ? JSON.stringify(m.items) : null, memo: m.memo ?? null, position: from + i, created_at: now, updated_at: now,
    }));
  }
}
