/**
 * The messaging provider behind one small port (decisions §5). `send` hands one message to
 * the provider; the idempotency key is our send id, so asking twice with the same key must
 * return the first answer and never deliver a second message. `accepted` is the provider's
 * acceptance, not proof of delivery: `status` reports delivery later (refresh-status).
 */
export type MessageChannel = 'ALIMTALK' | 'SMS';
export type DeliveryStatus = 'ACCEPTED' | 'DELIVERED' | 'FAILED';

export interface MessageRequest {
  idempotencyKey: string;
  channel: MessageChannel;
  /** Digits only. */
  to: string;
  text: string;
  link: string;
}

export type SendOutcome =
  | { accepted: true; messageId: string }
  | { accepted: false; error: string };

export interface MessagingProvider {
  send(req: MessageRequest): Promise<SendOutcome>;
  /** Delivery state of an accepted message; an unknown id reads as FAILED. */
  status(messageId: string): Promise<DeliveryStatus>;
}
