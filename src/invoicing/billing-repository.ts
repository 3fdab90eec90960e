import { type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../db/index.js';
import type { ClassMemberTable, ClassTable } from '../db/schema-billing.js';

/**
 * SQL of billing that runs itself (migration 0013): classes and their members. Every function
 * takes the team's account id and filters by it: another team's class reads as missing.
 */
type Db = Kysely<Database> | Transaction<Database>;

export type ClassRow = Selectable<ClassTable>;
export type ClassMemberRow = Selectable<ClassMemberTable>;

export async function insertClass(db: Db, row: Insertable<ClassTable>): Promise<void> {
  await db.insertInto('classes').values(row).execute();
}

export async function findClass(db: Db, accountId: string, id: string): Promise<ClassRow | undefined> {
  return db.selectFrom('classes').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

/** The team's classes with their member counts, newest first; archived ones only when asked. */
export async function listClasses(db: Db, accountId: string, opts: { archived: boolean }) {
  return db.selectFrom('classes')
    .select(['classes.id', 'classes.name', 'classes.memo', 'classes.archived_at', 'classes.created_at', 'classes.updated_at'])
    .select((eb) => eb.selectFrom('class_members').select(eb.fn.countAll<number>().as('n')).whereRef('class_members.class_id', '=', 'classes.id').as('members'))
    .where('classes.account_id', '=', accountId)
    .where('classes.archived_at', opts.archived ? 'is not' : 'is', null)
    .orderBy('classes.created_at', 'desc').orderBy('classes.id', 'desc').execute();
}

export async function countClasses(db: Db, accountId: string): Promise<number> {
  const r = await db.selectFrom('classes').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function updateClass(db: Db, accountId: string, id: string, set: Partial<Pick<ClassRow, 'name' | 'memo' | 'archived_at' | 'updated_at'>>): Promise<boolean> {
  const r = await db.updateTable('classes').set(set).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function membersOf(db: Db, accountId: string, classId: string): Promise<ClassMemberRow[]> {
  return db.selectFrom('class_members').selectAll().where('account_id', '=', accountId).where('class_id', '=', classId)
    .orderBy('position').orderBy('id').execute();
}

export async function countMembers(db: Db, accountId: string, classId: string): Promise<number> {
  const r = await db.selectFrom('class_members').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId).where('class_id', '=', classId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The next position at the end of the class's list. */
export async function nextPosition(db: Db, classId: string): Promise<number> {
  const r = await db.selectFrom('class_members').select((eb) => eb.fn.max('position').as('p')).where('class_id', '=', classId).executeTakeFirst();
  return r?.p === null || r?.p === undefined ? 0 : Number(r.p) + 1;
}

export async function insertMembers(db: Db, rows: Insertable<ClassMemberTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('class_members').values(rows.slice(i, i + 200)).execute();
}

export async function deleteMembers(db: Db, accountId: string, classId: string): Promise<void> {
  await db.deleteFrom('class_members').where('account_id', '=', accountId).where('class_id', '=', classId).execute();
}

export async function deleteMember(db: Db, accountId: string, classId: string, memberId: string): Promise<boolean> {
  const r = await db.deleteFrom('class_members').where('account_id', '=', accountId).where('class_id', '=', classId).where('id', '=', memberId).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

export async function touchClass(db: Db, accountId: string, id: string, now: number): Promise<void> {
  await db.updateTable('classes').set({ updated_at: now }).where('account_id', '=', accountId).where('id', '=', id).execute();
}

