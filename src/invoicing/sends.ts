import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import { GatewayCodes, GatewayError } from '../platform/errors.js';
import type { Clock } from '../platform/clock.js';
import { defineJob, enqueue, type JobDefinition } from '../jobs/define.js';
import type { MessageChannel, MessagingProvider, SendOutcome } from '../ports/messaging.js';
import type { GatewayService, Payment, Store } from '../gateway/index.js';
import { DELIVERY_FIRST_CHECK_MS, DELIVERY_JOB } from './delivery.js';
import { fillTemplate, gatewayItems, INVOICE_TEMPLATE, invoiceLines, invoiceVariables, smsText } from './items.js';
import { refund, settledCost, type Costs } from './points.js';
import * as repo from './repository.js';
import type { Invoice, Send } from './repository.js';

/**
 * The send job (src/jobs/README.md): attempts at once, then 10 s, 1 min, 5 min and 30 min
 * after each failure. A provider's refusal is final at once; an unexpected error is retried,
 * and after the last attempt the send is settled FAILED and its points return.
 */
export const SEND_BACKOFF_SECONDS = [10, 60, 300, 1800] as const;

export interface SendPayload {
  sendId: string;
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
 * One send of one invoice: issue the gateway payment if missing → mark the send ACCEPTING
 * (committed) → the provider call with the send id as idempotency key → one transaction: the
 * history row's result, the points settlement and the invoice's send status. Safe to run twice,
 * and concurrently: the provider answers a repeated key with its first answer, and only one
 * settlement passes its compare-and-set.
 */
/** One attempt of a send: the runner decides; the last attempt settles an unexpected error as FAILED. */
export const SEND_JOB: JobDefinition<SendPayload, SendRunner> = defineJob({
  kind: 'invoicing.send',
  backoffSeconds: SEND_BACKOFF_SECONDS,
  run: ({ sendId }: SendPayload, runner: SendRunner, ctx) => runner.run(sendId, ctx.final),
});

export class SendRunner {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: {
      gateway: GatewayService; messaging: MessagingProvider; clock: Clock; costs: Costs; log: Logger;
      /** Time limit of one provider call (SUNAP_OUTBOUND_TIMEOUT_MS); running out is an error, retried under the same key. */
      timeoutMs: number;
      /** ALIMTALK carries the short payment link too (the approved template allows it); SMS always does. */
      alimtalkShortLink?: boolean;
    },
  ) {}

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
    const store = await this.deps.gateway.findStore(invoice.store_code);
    if (!store) throw new Error(`store ${invoice.store_code} of invoice ${invoice.id} is missing`);
    const payment = await this.ensurePayment(invoice, store);
    if (typeof payment === 'string') {
      await this.settle(send, null, { accepted: false, error: payment });
      return;
    }
    // ACCEPTING already: an earlier attempt may have reached the provider before its answer was lost.
    const retry = send.status === 'ACCEPTING';
    if (!(await repo.transitionSend(this.db, send.id, 'accepting'))) return;

    // SMS carries the short link (an SMS holds 90 bytes; the page link alone is about 100), and
    // so does ALIMTALK when its approved template allows it (docs/invoicing.md, "SMS or LMS").
    const fullLink = this.deps.gateway.redirectUrl(payment);
    const shortLink = await this.deps.gateway.shortUrl(payment);
    const message = (channel: MessageChannel) => {
      const link = channel === 'SMS' || this.deps.alimtalkShortLink ? shortLink : fullLink;
      const variables = invoiceVariables({
        businessName: store.name, receiverName: invoice.receiver_name, reason: invoice.reason, amount: Number(invoice.amount),
        items: invoiceLines(invoice), description: invoice.description, link, dueDate: invoice.due_date,
      });
      return { link, variables, text: channel === 'SMS' ? smsText(variables) : fillTemplate(INVOICE_TEMPLATE, variables) };
    };
    // ALIMTALK_THEN_SMS: the provider's own fallback when it has one (one message; it knows at
    // delivery whether ALIMTALK reached the recipient), otherwise an SMS of ours after a refusal.
    const providerFallback = send.channel_requested === 'ALIMTALK_THEN_SMS' && this.deps.messaging.providerFallback === true;
    const channels: MessageChannel[] = send.channel_requested === 'ALIMTALK_THEN_SMS' && !providerFallback ? ['ALIMTALK', 'SMS']
      : [send.channel_requested === 'SMS' ? 'SMS' : 'ALIMTALK'];
    let used: MessageChannel | null = channels[0]!;
    let outcome: SendOutcome = { accepted: false, error: 'not sent' };
    for (const [i, channel] of channels.entries()) {
      used = channel;
      // The first channel uses the send id itself; a fallback is another message, so another key.
      const idempotencyKey = i === 0 ? send.id : `${send.id}:${channel}`;
      const { link, variables, text } = message(channel);
      outcome = await within(this.deps.messaging.send({
        idempotencyKey, channel, to: send.receiver_phone, text, link, retry,
        ...(channel === 'ALIMTALK' ? { variables } : {}), ...(providerFallback ? { smsFallback: true } : {}),
      }), this.deps.timeoutMs, `the messaging provider did not answer within ${this.deps.timeoutMs} ms (${channel})`);
      if (outcome.accepted) {
        if (outcome.channel !== undefined) used = outcome.channel;
        break;
      }
    }
    await this.settle(send, used, outcome);
  }

  /** The invoice's gateway payment, created once (in the account's store); a string is a permanent failure. */
  private async ensurePayment(invoice: Invoice, store: Store): Promise<Payment | string> {
    for (let i = 0; i < 3; i++) {
      if (invoice.payment_id) {
        const p = await this.deps.gateway.findById(invoice.payment_id);
        if (!p) throw new Error(`payment ${invoice.payment_id} of invoice ${invoice.id} is missing`);
        return p;
      }
      const lines = invoiceLines(invoice);
      try {
        return await this.db.transaction().execute(async (trx) => {
          const p = await this.deps.gateway.createPayment(store, {
            transSeqNo: invoice.trans_seqno, amount: Number(invoice.amount),
            mobileNo: invoice.guardian_phone ?? invoice.receiver_phone, payUserName: invoice.receiver_name,
            requestReason: invoice.reason, infoMessage: invoice.description,
            items: lines.length ? gatewayItems(lines) : undefined,
            ...(Number(invoice.tax_free_amount) > 0 ? { taxFreeAmount: Number(invoice.tax_free_amount) } : {}),
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
   * channel carried it, everything on failure; once per send), and the invoice's send status
   * and counters. Nothing happens when another run settled the send first. An accepted message
   * whose channel the provider tells only with its delivery (`used` null) keeps its points
   * reserved (`cost_settled` null) and gets the delivery job that settles them (delivery.ts).
   */
  private async settle(send: Send, used: MessageChannel | null, outcome: SendOutcome): Promise<void> {
    const now = this.deps.clock.nowMs();
    const reserved = Number(send.cost_reserved);
    const awaitsReport = outcome.accepted && used === null;
    const cost = outcome.accepted ? settledCost(reserved, used, this.deps.costs) : 0;
    await this.db.transaction().execute(async (trx) => {
      const settled = await repo.transitionSend(trx, send.id, outcome.accepted ? 'succeeded' : 'failed', {
        channel_used: awaitsReport ? null : used ?? (send.channel_requested === 'SMS' ? 'SMS' : 'ALIMTALK'),
        cost_settled: awaitsReport ? null : cost,
        provider_message_id: outcome.accepted ? outcome.messageId : null,
        delivery_status: outcome.accepted ? 'ACCEPTED' : null,
        error_message: outcome.accepted ? null : outcome.error.slice(0, 500),
        sent_at: now,
      });
      if (!settled) return;
      // The invoice before the wallet: every transaction that takes both locks them in this
      // order (creation, resend), so concurrent ones wait instead of deadlocking on PostgreSQL.
      if (outcome.accepted) await repo.recordSentMessage(trx, send.account_id, send.invoice_id, now);
      // A failed resend leaves the invoice as it was: it has been sent before.
      else if (send.send_type === 'INITIAL') await repo.recordFirstSendFailed(trx, send.account_id, send.invoice_id, now);
      if (awaitsReport) {
        await enqueue(trx, DELIVERY_JOB, { sendId: send.id }, { runAt: now + DELIVERY_FIRST_CHECK_MS, uniqueKey: `delivery:${send.id}`, now });
        return;
      }
      await refund(trx, send, reserved - cost, outcome.accepted ? `${used} carried it` : 'send failed', now);
    });
  }
}
