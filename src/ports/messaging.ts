/**
 * The messaging provider behind one small port (docs/reference.md, "Sandbox"). `send` hands one message to
 * the provider; the idempotency key is our send id, so asking twice with the same key must
 * return the first answer and never deliver a second message. `accepted` is the provider's
 * acceptance, not proof of delivery: `status` reports delivery later (refresh-status).
 */
export const MESSAGE_CHANNELS = ['ALIMTALK', 'SMS'] as const;
export type MessageChannel = (typeof MESSAGE_CHANNELS)[number];
/**
 * An SMS holds at most this many bytes in EUC-KR; a longer text goes as LMS (docs/invoicing.md,
 * "SMS or LMS").
 */
export const SMS_MAX_BYTES = 90;

/**
 * A text's length in EUC-KR, which is how carriers count: ASCII is one byte, Hangul and other
 * characters two (a character EUC-KR lacks counts two as well: only the SMS/LMS choice
 * depends on it).
 */
export function eucKrBytes(text: string): number {
  let n = 0;
  for (const ch of text) n += ch.codePointAt(0)! < 0x80 ? 1 : 2;
  return n;
}

export const DELIVERY_STATUSES = ['ACCEPTED', 'DELIVERED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface MessageRequest {
  idempotencyKey: string;
  channel: MessageChannel;
  /** Digits only. */
  to: string;
  text: string;
  link: string;
  /**
   * ALIMTALK only, for a provider with `providerFallback`: the provider itself carries the
   * message by SMS or LMS when ALIMTALK cannot reach the recipient.
   */
  smsFallback?: boolean;
  /** The variables of the approved ALIMTALK template (`#{name}` → value); `text` is that template filled. */
  variables?: Record<string, string>;
  /**
   * An earlier attempt under this key may have reached the provider (its answer was lost): an
   * adapter whose provider has no idempotency looks the message up before sending again.
   */
  retry?: boolean;
}

export type SendOutcome =
  | {
    accepted: true; messageId: string;
    /**
     * The channel that carries it when known at acceptance (absent: the requested one). null:
     * the provider reports it with the delivery, and the points are settled then.
     */
    channel?: MessageChannel | null;
  }
  | { accepted: false; error: string };

/** What the provider says of an accepted message. */
export interface DeliveryReport {
  delivery: DeliveryStatus;
  /** The channel that carried (or tried to carry) it, when the provider says. */
  channel?: MessageChannel;
}

export interface MessagingProvider {
  /**
   * true: an ALIMTALK_THEN_SMS send is one message with `smsFallback`, and the provider falls
   * back to SMS by itself; absent: the caller sends the SMS as a second message.
   */
  readonly providerFallback?: boolean;
  send(req: MessageRequest): Promise<SendOutcome>;
  /** Delivery state of an accepted message; an unknown id reads as FAILED. */
  status(messageId: string): Promise<DeliveryReport>;
  /** Proves the credentials with a call that sends nothing (`sunap doctor`). Absent: nothing to prove. */
  checkCredentials?(): Promise<{ ok: boolean; detail: string }>;
}
