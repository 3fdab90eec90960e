import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/index.js';
import { defineJob, type JobDefinition } from '../jobs/define.js';
import type { DeliveryReport, MessagingProvider } from '../ports/messaging.js';
import type { Clock } from '../platform/clock.js';
import { refund, settledCost, type Costs } from './points.js';
import * as repo from './repository.js';
import type { Send } from './repository.js';

/**
 * Delivery reports (docs/invoicing.md, "Points"). A provider that tells the channel only with
 * the delivery (Solapi's own ALIMTALK → SMS fallback) leaves an accepted send with
 * `cost_settled` null: its points are settled when the report arrives, by refresh-status or
 * by the delivery job below, whichever reads it first: a compare-and-set on `cost_settled IS
 * NULL` lets one of them settle, and the REFUND ledger row is unique per send.
 *
 * The job asks 1 minute after acceptance, then 5 min, 30 min, 2 h, 6 h, 24 h and 48 h later
 * (carriers may report SMS up to three days late). A send still unreported after the last ask
 * keeps what it reserved: the provider may yet deliver it.
 */
export const DELIVERY_FIRST_CHECK_MS = 60_000;
export const DELIVERY_BACKOFF_SECONDS = [300, 1800, 7200, 21_600, 86_400, 172_800] as const;

export interface DeliveryPayload {
  sendId: string;
}

export interface DeliveryDeps {
  db: Kysely<Database>;
  messaging: MessagingProvider;
  clock: Clock;
  costs: Costs;
  log: Logger;
}

class StillOnItsWay extends Error {}

export const DELIVERY_JOB: JobDefinition<DeliveryPayload, DeliveryDeps> = defineJob({
  kind: 'invoicing.delivery',
  backoffSeconds: DELIVERY_BACKOFF_SECONDS,
  run: async ({ sendId }: DeliveryPayload, deps: DeliveryDeps, ctx) => {
    const send = await repo.findSend(deps.db, sendId);
    if (!send || send.status !== 'SUCCESS' || !send.provider_message_id || send.cost_settled !== null) return;
    const report = await deps.messaging.status(send.provider_message_id);
    await applyReport(deps, send, report);
    if (report.delivery !== 'ACCEPTED') return;
    if (ctx.final) {
      deps.log.warn({ send: send.id }, 'no delivery report after the last check; the send keeps its reserved points');
      return;
    }
    // A throw is what schedules the next check.
    throw new StillOnItsWay(`send ${send.id}: the provider has not reported a delivery yet`);
  },
});

/**
 * Records what the provider reported of one accepted send, in one transaction: the delivery
 * status, and for a send still awaiting its settlement the channel that carried it and its
 * points (the price of that channel when delivered, nothing when every channel failed; the
 * rest of the reservation refunded, once).
 */
export async function applyReport(deps: Pick<DeliveryDeps, 'db' | 'clock' | 'costs'>, send: Send, report: DeliveryReport): Promise<void> {
  const now = deps.clock.nowMs();
  await deps.db.transaction().execute(async (trx) => {
    if (send.cost_settled !== null || report.delivery === 'ACCEPTED') {
      if (report.delivery !== send.delivery_status) await repo.setDeliveryStatus(trx, send.account_id, send.id, report.delivery);
      return;
    }
    const reserved = Number(send.cost_reserved);
    const delivered = report.delivery === 'DELIVERED';
    // A delivery without a channel named is charged the dearer channel (never more than reserved).
    const carriedBy = report.channel ?? 'SMS';
    const cost = delivered ? settledCost(reserved, carriedBy, deps.costs) : 0;
    const settled = await repo.settleReportedSend(trx, send.account_id, send.id, {
      delivery_status: report.delivery, cost_settled: cost,
      channel_used: report.channel ?? (send.channel_requested === 'SMS' ? 'SMS' : 'ALIMTALK'),
    });
    if (settled) await refund(trx, send, reserved - cost, delivered ? `${carriedBy} carried it` : 'not delivered on any channel', now);
  });
}
