import type { Payment } from '../gateway/index.js';
import { kstIso, kstIsoOrNull as t, kstSpaced } from '../platform/kst.js';
import { isOverdue } from './due.js';
import { invoiceLines, itemView } from './items.js';
import type { Invoice, InvoiceSummaryRow, Send } from './repository.js';

/** Response shapes (docs/reference.md, "Invoices"): KST yyyy-MM-dd'T'HH:mm:ss, never the webhook secret. */

/** `nowMs`: the service clock, which says whether the invoice is overdue. */
export function billSummary(inv: InvoiceSummaryRow, nowMs: number) {
  return {
    id: Number(inv.id),
    uniqueId: inv.unique_id,
    paymentId: inv.trans_seqno,
    transSeqNo: inv.trans_seqno,
    status: inv.status,
    sendStatus: inv.send_status,
    templateType: inv.template_type,
    receiver: { name: inv.receiver_name, phone: inv.receiver_phone },
    guardianPhone: inv.guardian_phone,
    amount: Number(inv.amount),
    reason: inv.reason,
    createDateTime: kstIso(inv.created_at),
    doneDateTime: t(inv.done_at),
    canceledDateTime: t(inv.canceled_at),
    firstSentAt: t(inv.first_sent_at),
    lastSentAt: t(inv.last_sent_at),
    sendCount: Number(inv.send_count),
    sendChannel: inv.send_channel,
    requestId: inv.request_id,
    dueDate: inv.due_date,
    overdue: isOverdue(inv, nowMs),
  };
}

export function billDetail(inv: Invoice, payment: Payment | undefined, sends: Send[], nowMs: number) {
  const paid = payment && payment.approval_at !== null;
  return {
    bill: {
      ...billSummary(inv, nowMs),
      description: inv.description,
      items: invoiceLines(inv).map(itemView),
      taxFreeAmount: Number(inv.tax_free_amount),
      webhookUrl: inv.webhook_url,
      billTemplateId: inv.bill_template_id,
      relatedSubject: inv.related_subject,
      etc: inv.etc,
      studentBirthDate: inv.student_birth_date,
      classroomId: inv.classroom_id,
      classId: inv.class_id,
    },
    payment: paid ? {
      acceptNumber: payment.approval_number ?? '',
      // A card's company, a transfer's bank, or the bank of the virtual account paid into.
      payCompany: payment.issuer_name ?? (payment.method === 'VIRTUAL_ACCOUNT' ? payment.vbank_name : ''),
      installmentMonth: Number(payment.installment_month ?? '0'),
      paymentDateTime: kstSpaced(payment.approval_at!),
      cancelDateTime: payment.cancel_at !== null ? kstSpaced(payment.cancel_at) : null,
    } : null,
    sendInfo: { firstSentAt: t(inv.first_sent_at), lastSentAt: t(inv.last_sent_at), sendCount: Number(inv.send_count) },
    sendHistories: sends.map((s) => ({
      sendType: s.send_type,
      sendResult: s.status === 'SUCCESS' || s.status === 'FAILED' ? s.status : 'WAITING',
      sendChannel: s.channel_used ?? s.channel_requested,
      sentAt: t(s.sent_at),
      receiverPhone: s.receiver_phone,
      errorMessage: s.error_message,
      deliveryStatus: s.delivery_status,
    })),
  };
}
