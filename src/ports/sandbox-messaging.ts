import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { newId } from '../platform/crypto.js';
import type { DeliveryStatus, MessageRequest, MessagingProvider, SendOutcome } from './messaging.js';

/**
 * Stands in for the messaging provider (decisions §5 magic numbers):
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
    const seen = await this.byKey(req.idempotencyKey);
    if (seen) return { accepted: true, messageId: seen };
    if (req.to.endsWith('0000')) return { accepted: false, error: `수신할 수 없는 번호입니다 (${req.channel})` };
    const fault = req.to.endsWith('7777') ? 'error' : req.to.endsWith('5555') ? 'silent' : null;
    if (fault && (await this.firstFault(req))) {
      if (fault === 'error') throw new Error('sandbox messaging provider error (503); try again');
      await this.accept(req);
      // Accepted, but the answer is lost: the caller's timeout decides.
      return new Promise<SendOutcome>(() => {});
    }
    if (req.to.endsWith('9999') && req.channel === 'ALIMTALK') {
      return { accepted: false, error: '알림톡을 받을 수 없는 번호입니다' };
    }
    return { accepted: true, messageId: await this.accept(req) };
  }

  private async accept(req: MessageRequest): Promise<string> {
    await this.db.insertInto('sandbox_messages').values({
      id: newId(), idempotency_key: req.idempotencyKey, channel: req.channel, to_phone: req.to, text: req.text, link: req.link,
      delivery_status: 'ACCEPTED', sent_at: this.clock.nowMs(),
    }).onConflict((oc) => oc.column('idempotency_key').doNothing()).execute();
    // Two concurrent sends with one key: whichever row landed first is the answer for both.
    return (await this.byKey(req.idempotencyKey))!;
  }

  /** True for the first request of this message only (recorded in the database, so on any instance). */
  private async firstFault(req: MessageRequest): Promise<boolean> {
    const rows = await this.db.insertInto('sandbox_messages').values({
      id: newId(), idempotency_key: `fault:${req.idempotencyKey}`, channel: req.channel, to_phone: req.to, text: '', link: null,
      delivery_status: 'FAULT', sent_at: this.clock.nowMs(),
    }).onConflict((oc) => oc.column('idempotency_key').doNothing()).returning('id').execute();
    return rows.length === 1;
  }

  async status(messageId: string): Promise<DeliveryStatus> {
    const m = await this.db.selectFrom('sandbox_messages').select(['channel', 'to_phone', 'delivery_status'])
      .where('id', '=', messageId).executeTakeFirst();
    if (!m) return 'FAILED';
    if (m.delivery_status !== 'ACCEPTED') return m.delivery_status as DeliveryStatus;
    const final: DeliveryStatus = m.channel === 'ALIMTALK' && m.to_phone.endsWith('8888') ? 'FAILED' : 'DELIVERED';
    await this.db.updateTable('sandbox_messages').set({ delivery_status: final })
      .where('id', '=', messageId).where('delivery_status', '=', 'ACCEPTED').execute();
    return final;
  }

  private async byKey(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('sandbox_messages').select('id').where('idempotency_key', '=', key).executeTakeFirst();
    return row?.id;
  }
}
