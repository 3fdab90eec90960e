import type { Insertable, Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import type { SendTable } from '../db/schema.js';
import type { Clock } from '../platform/clock.js';
import { newId } from '../platform/crypto.js';
import { queueSends } from './creation.js';
import { reserveCost, type Costs } from './points.js';
import * as repo from './repository.js';
import type { Account, Invoice } from './repository.js';
import type { SendRunner } from './sends.js';
import { billSummary } from './views.js';

/** How long a resend's job waits before it stands in for an inline send that did not finish. */
export const RESEND_FALLBACK_MS = 60_000;

export interface ResendSummary {
  uniqueId: string;
  status: string | null;
  sendCount: number | null;
  lastSentAt: string | null;
  resendResult: 'SUCCESS' | 'FAILED' | 'SKIPPED';
  reason: string | null;
}

type Entry = { given: string; inv?: Invoice; skip?: string; sendId?: string };

/** Why an invoice cannot be resent, or undefined when it can (docs/reference.md, "Invoices"). */
export function resendRefusal(inv: Invoice | undefined, seen: Set<number>): string | undefined {
  if (!inv) return 'not found';
  if (seen.has(inv.id)) return 'listed more than once in this request';
  if (inv.deleted_at !== null) return 'deleted';
  if (inv.status === 'DONE') return 'already paid';
  if (inv.status === 'CANCELED') return 'cancelled';
  if (Number(inv.send_count) === 0) {
    return inv.send_status === 'WAITING' ? 'not sent yet: the first send is in progress' : 'not sent yet: the first send failed';
  }
  return undefined;
}

/**
 * Resends already-sent unpaid invoices with the same link and stored channel. The points of
 * every resendable one are taken in one transaction (or none: -21) together with their send
 * rows and fallback jobs; the sends then run here so the answer carries their result.
 */
export async function resend(
  db: Kysely<Database>,
  deps: { clock: Clock; costs: Costs; runner: SendRunner; log: Logger },
  account: Account,
  billIds: (string | number)[],
): Promise<ResendSummary[]> {
  const entries: Entry[] = [];
  const seen = new Set<number>();
  for (const raw of billIds) {
    const given = String(raw);
    const inv = await repo.findInvoice(db, account.id, given, { withDeleted: true });
    entries.push({ given, inv, skip: resendRefusal(inv, seen) });
    if (inv) seen.add(inv.id);
  }
  const now = deps.clock.nowMs();
  await db.transaction().execute(async (trx) => {
    const sends: Insertable<SendTable>[] = [];
    // Invoice rows are locked in id order, then the wallet (as a send's settlement does): two
    // resends of overlapping lists, or a resend and a settlement, wait for each other instead
    // of deadlocking on PostgreSQL.
    const byId = [...entries].sort((x, y) => (x.inv?.id ?? 0) - (y.inv?.id ?? 0));
    for (const e of byId) {
      if (e.skip || !e.inv) continue;
      if (!(await repo.touchPending(trx, account.id, e.inv.id, now))) {
        e.skip = 'no longer payable';
        continue;
      }
      if (await repo.hasOpenSend(trx, account.id, e.inv.id)) {
        e.skip = 'a send of this invoice is already in progress';
        continue;
      }
      e.sendId = newId();
      sends.push({
        id: e.sendId, invoice_id: e.inv.id, account_id: account.id, send_type: 'RESEND', status: 'WAITING',
        channel_requested: e.inv.send_channel, channel_used: null, receiver_phone: e.inv.guardian_phone ?? e.inv.receiver_phone,
        cost_reserved: reserveCost(e.inv.send_channel, deps.costs), cost_settled: null,
        provider_message_id: null, delivery_status: null, error_message: null, sent_at: null, created_at: now,
      });
    }
    if (sends.length > 0) await queueSends(trx, account.id, sends, now, now + RESEND_FALLBACK_MS);
  });
  for (const e of entries) {
    if (!e.sendId) continue;
    try {
      await deps.runner.run(e.sendId);
    } catch (err) {
      // Its job runs it again shortly; the answer reports what is known now.
      deps.log.warn({ send: e.sendId, err: (err as Error).message }, 'inline resend did not finish');
    }
  }
  const out: ResendSummary[] = [];
  for (const e of entries) {
    // Read again: the answer shows each invoice as it is now, also one skipped because it changed
    // after the look-up above (paid meanwhile: 'no longer payable', with its status DONE).
    const inv = e.inv ? (await repo.findInvoice(db, account.id, e.inv.id, { withDeleted: true })) ?? e.inv : e.inv;
    let result: ResendSummary['resendResult'] = 'SKIPPED';
    let reason: string | null = e.skip ?? null;
    if (e.sendId) {
      const s = await repo.findSend(db, e.sendId);
      if (s?.status === 'SUCCESS') result = 'SUCCESS';
      else {
        result = 'FAILED';
        reason = s?.error_message ?? 'the send did not complete; it will be retried';
      }
    }
    const sum = inv ? billSummary(inv, now) : null;
    out.push({
      uniqueId: inv?.unique_id ?? e.given, status: sum?.status ?? null, sendCount: sum?.sendCount ?? null,
      lastSentAt: sum?.lastSentAt ?? null, resendResult: result, reason,
    });
  }
  return out;
}
