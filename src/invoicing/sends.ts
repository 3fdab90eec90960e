import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import { findStoreByCode } from '../gateway/repository.js';
import type { GatewayService, Payment } from '../gateway/service.js';
import type { JobHandler } from '../jobs/queue.js';
import type { MessageChannel, MessagingProvider, SendOutcome } from '../ports/messaging.js';
import type { Clock } from '../platform/clock.js';
import { GatewayCodes, GatewayError } from '../platform/errors.js';
import { gatewayItems, invoiceMessage, parseItems } from './items.js';
import * as repo from './repository.js';
import type { Invoice, Send } from './repository.js';
import type { SendChannel } from './schemas.js';

export const SEND_JOB = 'invoicing.send';
export const SEND_BACKOFF_SECONDS = [10, 60, 300, 1800];
export const SEND_MAX_ATTEMPTS = SEND_BACKOFF_SECONDS.length + 1;

export type Costs = { ALIMTALK: number; SMS: number };

/** Points reserved per recipient: the configured channel's price; with fallback, the SMS price. */
export function reserveCost(channel: SendChannel, costs: Costs): number {
  return channel === 'ALIMTALK' ? costs.ALIMTALK : costs.SMS;
}

class LostRace extends Error {}

/** `p`, or an error after `ms`: a provider that never answers must not hold the send forever. */
function within<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/**
 * One send of one invoice (design note 6, "Invoice creation" flow): issue the gateway payment
 * if missing → mark the send ACCEPTING (committed) → provider call with the send id as
 * idempotency key → one transaction: the history row's result, the points settlement and the
 * invoice's send status. Safe to run twice, and concurrently: the provider answers a repeated
 * key with its first answer, and only one settlement passes its compare-and-set.
 */
export class SendRunner {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: {
      gateway: GatewayService; messaging: MessagingProvider; clock: Clock; costs: Costs; log: Logger;
      /** Time limit of one provider call (SUNAP_OUTBOUND_TIMEOUT_MS); running out is an error, retried under the same key. */
      timeoutMs: number;
    },
  ) {}

  handler(): JobHandler {
    return {
      backoffSeconds: SEND_BACKOFF_SECONDS,
      run: async (job) => this.run(String(job.data.sendId), job.attempts >= job.max_attempts),
    };
  }

  /** `final`: the last attempt; an unexpected error then settles the send as failed (points returned). */
  async run(sendId: string, final = false): Promise<void> {
    const send = await repo.findSend(this.db, sendId);
    if (!send || (send.status !== 'WAITING' && send.status !== 'ACCEPTING')) return;
    try {
      await this.attempt(send);
    } catch (err) {
      if (!final) throw err;
      this.deps.log.error({ send: send.id, err: (err as Error).message }, 'send gave up after its last attempt');
      await this.settle(send, null, { accepted: false, error: 'internal error; the send was not completed' });
    }
  }

  private async attempt(send: Send): Promise<void> {
    const invoice = await repo.findInvoice(this.db, send.account_id, send.invoice_id, { withDeleted: true });
    if (!invoice) return;
    // An ACCEPTING send may have reached the provider before its process died: it is finished
    // with the provider's answer under its key even if the invoice was paid or deleted since,
    // so an accepted message is never recorded as failed and refunded.
    if (send.status === 'WAITING' && (invoice.deleted_at !== null || invoice.status !== 'PENDING')) {
      await this.settle(send, null, { accepted: false, error: `the invoice is no longer payable (${invoice.deleted_at !== null ? 'deleted' : invoice.status})` });
      return;
    }
    const store = await findStoreByCode(this.db, invoice.store_code);
    if (!store) throw new Error(`store ${invoice.store_code} of invoice ${invoice.id} is missing`);
    const payment = await this.ensurePayment(invoice, store);
    if (typeof payment === 'string') {
      await this.settle(send, null, { accepted: false, error: payment });
      return;
    }
    if (!(await repo.markAccepting(this.db, send.id))) return;

    const link = this.deps.gateway.redirectUrl(payment);
    const text = invoiceMessage({
      businessName: store.name, receiverName: invoice.receiver_name, reason: invoice.reason, amount: Number(invoice.amount),
      items: parseItems(invoice.items_json), description: invoice.description, link,
    });
    const channels: MessageChannel[] = send.channel_requested === 'ALIMTALK_THEN_SMS' ? ['ALIMTALK', 'SMS'] : [send.channel_requested as MessageChannel];
    let used: MessageChannel = channels[0]!;
    let outcome: SendOutcome = { accepted: false, error: 'not sent' };
    for (const [i, channel] of channels.entries()) {
      used = channel;
      // The first channel uses the send id itself; a fallback is another message, so another key.
      const idempotencyKey = i === 0 ? send.id : `${send.id}:${channel}`;
      outcome = await within(this.deps.messaging.send({ idempotencyKey, channel, to: send.receiver_phone, text, link }), this.deps.timeoutMs,
        `the messaging provider did not answer within ${this.deps.timeoutMs} ms (${channel})`);
      if (outcome.accepted) break;
    }
    await this.settle(send, used, outcome);
  }

  /** The invoice's gateway payment, created once (in the account's store); a string is a permanent failure. */
  private async ensurePayment(invoice: Invoice, store: NonNullable<Awaited<ReturnType<typeof findStoreByCode>>>): Promise<Payment | string> {
    for (let i = 0; i < 3; i++) {
      if (invoice.payment_id) {
        const p = await this.deps.gateway.findById(invoice.payment_id);
        if (!p) throw new Error(`payment ${invoice.payment_id} of invoice ${invoice.id} is missing`);
        return p;
      }
      const items = parseItems(invoice.items_json);
      try {
        return await this.db.transaction().execute(async (trx) => {
          const p = await this.deps.gateway.createPayment(store, {
            transSeqNo: invoice.trans_seqno, amount: Number(invoice.amount),
            mobileNo: invoice.guardian_phone ?? invoice.receiver_phone, payUserName: invoice.receiver_name,
            requestReason: invoice.reason, infoMessage: invoice.description,
            items: items.length ? gatewayItems(items) : undefined,
          }, trx);
          if (!(await repo.setPaymentId(trx, invoice.id, p.id, this.deps.clock.nowMs()))) throw new LostRace();
          return p;
        });
      } catch (err) {
        const raced = err instanceof LostRace || (err instanceof GatewayError && err.resultCode === GatewayCodes.DUPLICATE);
        if (!raced) {
          if (err instanceof GatewayError) return `gateway: ${err.message}`;
          throw err;
        }
        // Another run issued it, or the invoice was deleted meanwhile: look again.
        const again = await repo.findInvoice(this.db, invoice.account_id, invoice.id, { withDeleted: true });
        if (!again || again.deleted_at !== null) return 'the invoice was deleted';
        invoice = again;
      }
    }
    throw new Error(`could not issue the payment of invoice ${invoice.id}`);
  }

  /**
   * One transaction: the send's result, the points (the difference refunded when the cheaper
   * channel carried it, everything on failure; once per send by the ledger's unique index),
   * and the invoice's send status and counters.
   */
  private async settle(send: Send, used: MessageChannel | null, outcome: SendOutcome): Promise<void> {
    const now = this.deps.clock.nowMs();
    const reserved = Number(send.cost_reserved);
    const cost = outcome.accepted && used ? Math.min(reserved, this.deps.costs[used]) : 0;
    await this.db.transaction().execute(async (trx) => {
      const settled = await repo.settleSend(trx, send.id, {
        status: outcome.accepted ? 'SUCCESS' : 'FAILED',
        channel_used: used ?? (send.channel_requested === 'SMS' ? 'SMS' : 'ALIMTALK'),
        cost_settled: cost,
        provider_message_id: outcome.accepted ? outcome.messageId : null,
        delivery_status: outcome.accepted ? 'ACCEPTED' : null,
        error_message: outcome.accepted ? null : outcome.error.slice(0, 500),
        sent_at: now,
      });
      if (!settled) return;
      // The invoice before the wallet: every transaction that takes both locks them in this
      // order (creation, resend), so concurrent ones wait instead of deadlocking on PostgreSQL.
      if (outcome.accepted) {
        await trx.updateTable('invoices').set((eb) => ({
          send_status: 'SENT', send_count: eb('send_count', '+', 1),
          first_sent_at: eb.fn.coalesce('first_sent_at', eb.val(now)), last_sent_at: now, updated_at: now,
        })).where('id', '=', send.invoice_id).where('account_id', '=', send.account_id).execute();
      } else if (send.send_type === 'INITIAL') {
        // A failed resend leaves the invoice as it was: it has been sent before.
        await trx.updateTable('invoices').set({ send_status: 'FAILED', updated_at: now })
          .where('id', '=', send.invoice_id).where('account_id', '=', send.account_id).where('send_status', '=', 'WAITING').execute();
      }
      const refund = reserved - cost;
      if (refund > 0) {
        const written = await repo.addLedger(trx, [{
          account_id: send.account_id, delta: refund, kind: 'REFUND', ref: send.id,
          memo: outcome.accepted ? `${used} carried it` : 'send failed', created_at: now,
        }]);
        if (written === 1) await repo.credit(trx, send.account_id, refund, now);
      }
    });
  }
}
