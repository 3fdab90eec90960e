import type { InvoiceSendStatus, InvoiceStatus, LedgerKind, SendChannel, WebhookEventStatus } from '../invoicing/index.js';
import type { PaymentState } from '../gateway/index.js';
import type { DeliveryStatus, MessageChannel } from '../ports/messaging.js';

/**
 * The words every page uses for a state, keyed on the state unions: a new state does not
 * compile until it has its words here.
 */
export const PAYMENT_STATE_LABEL: Record<PaymentState, string> = {
  STORE_REQUEST: '결제 대기',
  APPROVE_COMPLETE: '결제 완료',
  CANCEL_COMPLETE: '결제 취소',
  CANCEL_FAIL: '취소 처리 중',
  STORE_DELETE: '결제 요청 종료',
};

export const INVOICE_STATUS_LABEL: Record<InvoiceStatus, string> = { PENDING: '결제 대기', DONE: '결제 완료', CANCELED: '결제 취소' };

/** Badge tone of each invoice status ('' is neutral). */
export const INVOICE_STATUS_TONE: Record<InvoiceStatus, '' | 'ok' | 'warn'> = { PENDING: 'warn', DONE: 'ok', CANCELED: '' };

export const CHANNEL_LABEL: Record<MessageChannel, string> = { ALIMTALK: '알림톡', SMS: '문자' };

export const DELIVERY_LABEL: Record<DeliveryStatus, string> = { ACCEPTED: '접수', DELIVERED: '전달됨', FAILED: '전달 실패' };

export const INVOICE_SEND_STATUS_LABEL: Record<InvoiceSendStatus, string> = { WAITING: '발송 대기', SENT: '발송됨', FAILED: '발송 실패' };

export const SEND_CHANNEL_LABEL: Record<SendChannel, string> = { ALIMTALK: '알림톡', SMS: '문자', ALIMTALK_THEN_SMS: '알림톡 (실패 시 문자)' };

export const WEBHOOK_STATUS_LABEL: Record<WebhookEventStatus, string> = { PENDING: '전달 중', DELIVERED: '전달됨', ABANDONED: '전달 포기' };

export const LEDGER_KIND_LABEL: Record<LedgerKind, string> = { GRANT: '지급', RESERVE: '발송 차감', REFUND: '환급', RECHARGE: '충전' };
