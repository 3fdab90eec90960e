import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { AuditLogTable, ConsoleInviteTable, ConsolePasswordResetTable, ConsoleSessionTable, Database } from '../db/schema.js';

/**
 * SQL of the console's own tables: sessions, invites, the audit log. Sessions are found by
 * the hash of their cookie (the credential); everything else filters by the team's tenant id
 * or the account.
 */
export type Db = Kysely<Database> | Transaction<Database>;
export type SessionRow = Selectable<ConsoleSessionTable>;
export type InviteRow = Selectable<ConsoleInviteTable>;
export type AuditRow = Selectable<AuditLogTable>;
export type ResetRow = Selectable<ConsolePasswordResetTable>;

// ---- sessions -----------------------------------------------------------------------------

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/** A session by the hash of its cookie token: the hash is the credential, so no tenant filter. */
export async function findSession(db: Db, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('console_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function touchSession(db: Db, id: string, now: number, expiresAt: number): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: now, expires_at: expiresAt }).where('id', '=', id).where('revoked_at', 'is', null).execute();
}

/** The account's sessions still valid at `now`, newest first. */
export async function activeSessions(db: Db, accountId: string, now: number): Promise<SessionRow[]> {
  return db.selectFrom('console_sessions').selectAll().where('account_id', '=', accountId).where('revoked_at', 'is', null)
    .where('expires_at', '>', now).orderBy('created_at', 'desc').execute();
}

/** Revokes one of the account's sessions (by its row id, which is the token's hash); false when it was not theirs or already revoked. */
export async function revokeSession(db: Db, accountId: string, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('console_sessions').set({ revoked_at: now }).where('account_id', '=', accountId).where('id', '=', id)
    .where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Revokes every session of the account, except `keep` when given; how many. */
export async function revokeSessions(db: Db, accountId: string, now: number, keep?: string): Promise<number> {
  let q = db.updateTable('console_sessions').set({ revoked_at: now }).where('account_id', '=', accountId).where('revoked_at', 'is', null);
  if (keep) q = q.where('id', '!=', keep);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** A removed member's sessions go with it (they reference the account). */
export async function deleteSessions(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('account_id', '=', accountId).execute();
}

// ---- password resets ------------------------------------------------------------------------

/** A new reset link for the member; the member's earlier open links are revoked in the same transaction. */
export async function insertReset(db: Db, row: ResetRow, now: number): Promise<void> {
  await db.updateTable('console_password_resets').set({ revoked_at: now }).where('account_id', '=', row.account_id)
    .where('used_at', 'is', null).where('revoked_at', 'is', null).execute();
  await db.insertInto('console_password_resets').values(row).execute();
}

/** A reset by the hash of its link's token (the credential). */
export async function findResetByToken(db: Db, tokenHash: string): Promise<ResetRow | undefined> {
  return db.selectFrom('console_password_resets').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Uses a reset once: true for the one caller that found it open and unexpired at `now`. */
export async function useReset(db: Db, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('console_password_resets').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null)
    .where('revoked_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

// ---- invites ------------------------------------------------------------------------------

export async function insertInvite(db: Db, row: InviteRow): Promise<void> {
  await db.insertInto('console_invites').values(row).execute();
}

/** An invite by the hash of its link's token (the credential). */
export async function findInviteByToken(db: Db, tokenHash: string): Promise<InviteRow | undefined> {
  return db.selectFrom('console_invites').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** The team's invites not yet accepted or revoked, newest first. */
export async function openInvites(db: Db, tenantId: string): Promise<InviteRow[]> {
  return db.selectFrom('console_invites').selectAll().where('tenant_id', '=', tenantId).where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null).orderBy('created_at', 'desc').execute();
}

/** Marks the invite used, once: false when it was accepted or revoked meanwhile. */
export async function acceptInvite(db: Db, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('console_invites').set({ accepted_at: now }).where('id', '=', id).where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Undoes an acceptance whose account could not be made, so the link works again. */
export async function reopenInvite(db: Db, id: string): Promise<void> {
  await db.updateTable('console_invites').set({ accepted_at: null }).where('id', '=', id).execute();
}

export async function revokeInvite(db: Db, tenantId: string, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('console_invites').set({ revoked_at: now }).where('tenant_id', '=', tenantId).where('id', '=', id)
    .where('accepted_at', 'is', null).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

// ---- the audit log ------------------------------------------------------------------------

export async function insertAudit(db: Db, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

/**
 * The teams of a store (each tenant account of it: a team's first account, whose tenant is
 * itself), for what the service records in their audit logs by itself.
 */
export async function tenantsOfStore(db: Db, storeCode: string): Promise<string[]> {
  const rows = await db.selectFrom('accounts').select('id').where('store_code', '=', storeCode)
    .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', eb.ref('id'))])).execute();
  return rows.map((r) => r.id);
}

/** A page of the team's audit log, newest first (keyset on id). */
export async function auditPage(db: Db, tenantId: string, beforeId: number | undefined, limit: number): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll().where('tenant_id', '=', tenantId);
  if (beforeId !== undefined) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}
