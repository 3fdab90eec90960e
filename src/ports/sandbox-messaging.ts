import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import type { DeliveryReport, DeliveryStatus, MessageRequest, MessagingProvider, SendOutcome } from './messaging.js';
import { acceptMessage, findMessage, firstFault, messageIdByKey, settleDelivery } from './sandbox-repository.js';

/**
 * Stands in for the messaging provider (docs/reference.md, "Sandbox"):
 * - a number ending in 9999 cannot receive ALIMTALK (SMS works);
 * - one ending in 0000 fails on every channel;
 * - one ending in 8888 is accepted, but its ALIMTALK delivery turns FAILED on status();
 * - every other accepted message turns DELIVERED on status().
 * Provider faults, for trying a client's retries (docs/invoicing.md):
 * - a number ending in 7777: the first request for a message fails with a provider error
 *   (nothing accepted); a retry under the same key is accepted;
 * - one ending in 5555: the first request for a message is accepted but never answered (the
 *   caller's timeout runs out); a retry under the same key gets that first acceptance.
 * Accepted messages are kept in sandbox_messages, the outbox a developer reads at
 * /sandbox/messages. The idempotency key is unique there, so a repeated send returns the
 * first answer and never a second message, across instances too. A fault is remembered there
 * as well (status FAULT under `fault:<key>`, never listed), so it happens once per message on
 * any instance and across restarts.
 */
export class SandboxMessaging implements MessagingProvider {
  constructor(private readonly db: Kysely<Database>, private readonly clock: Clock) {}

  async send(req: MessageRequest): Promise<SendOutcome> {
    const seen = await messageIdByKey(this.db, req.idempotencyKey);
    if (seen) return { accepted: true, messageId: seen };
    if (req.to.endsWith('0000')) return { accepted: false, error: `수신할 수 없는 번호입니다 (${req.channel})` };
    const fault = req.to.endsWith('7777') ? 'error' : req.to.endsWith('5555') ? 'silent' : null;
    if (fault && (await firstFault(this.db, req, this.clock.nowMs()))) {
      if (fault === 'error') throw new Error('sandbox messaging provider error (503); try again');
      await acceptMessage(this.db, req, this.clock.nowMs());
      // Accepted, but the answer is lost: the caller's timeout decides.
      return new Promise<SendOutcome>(() => {});
    }
    if (req.to.endsWith('9999') && req.channel === 'ALIMTALK') {
      return { accepted: false, error: '알림톡을 받을 수 없는 번호입니다' };
    }
    return { accepted: true, messageId: await acceptMessage(this.db, req, this.clock.nowMs()) };
  }

  async status(messageId: string): Promise<DeliveryReport> {
    const m = await findMessage(this.db, messageId);
    if (!m || m.delivery_status === 'FAULT') return { delivery: 'FAILED' };
    if (m.delivery_status !== 'ACCEPTED') return { delivery: m.delivery_status, channel: m.channel };
    const final: DeliveryStatus = m.channel === 'ALIMTALK' && m.to_phone.endsWith('8888') ? 'FAILED' : 'DELIVERED';
    // Two refreshes at once: one settles it; the rule gives both the same answer.
    await settleDelivery(this.db, messageId, final);
    return { delivery: final, channel: m.channel };
  }
}
