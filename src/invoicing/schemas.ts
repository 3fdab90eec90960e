import { Type, type Static } from '@sinclair/typebox';
import { Envelope, ErrorEnvelope, Nullable as N } from '../platform/schemas.js';
import { DisplayText } from '../platform/validation.js';
import { MAX_DUE_DAYS } from './due.js';
import { ReminderRule } from './reminder-rule.js';
import { INVOICE_SEND_STATUSES, INVOICE_STATUSES, SEND_CHANNELS, TEMPLATE_TYPES } from './invoice-state.js';

export { Envelope, ErrorEnvelope };

/**
 * Invoicing request and response shapes (docs/reference.md, "Invoices" and "Limits"). One
 * schema drives validation (`field: reason`, HTTP 400 / -20), the TypeScript types and /docs.
 * Optional fields accept null as absent: the routes drop nulls before validating.
 */
const MAX_INT = 2_147_483_647;

const Phone = Type.String({ pattern: '^\\d{10,11}$', 'x-reason': 'must be 10 to 11 digits', examples: ['01012345678'] });
const amount = (description?: string) => Type.Integer({
  minimum: 100, maximum: MAX_INT, 'x-reason': 'must be a whole number of won from 100 (the minimum amount is 100 won) to 2147483647', description,
});
const Amount = amount();
const Reason = DisplayText({ minLength: 1, maxLength: 60, description: 'Shown in the notification; 1 to 60 characters', examples: ['11월 수강료'] });
const Description = DisplayText({ maxLength: 200, description: 'Guidance shown in the notification; at most 200 characters', examples: ['매월 10일까지 납부 부탁드립니다'] }, 'lines');

/** An invoice's due date (docs/invoicing.md, "Due dates"); the service checks the calendar and the range. */
const DueDate = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}$', 'x-reason': 'must be a date as yyyy-MM-dd',
  description: 'Optional due date (KST), from today to 365 days ahead; shown in the message and on the pages. Without it, a billTemplateId with "due N days after sending" gives one',
  examples: ['2026-12-10'],
});

/** The VAT-exempt part of an invoice (docs/invoicing.md, "Tax-free amounts"); the service checks it against the amount. */
const TaxFreeAmount = Type.Integer({
  minimum: 0, maximum: MAX_INT, 'x-reason': 'must be a whole number of won from 0 to the amount',
  description: 'The VAT-exempt (면세) part of the amount, from 0 (default: all taxed) to the amount (all tax-free). The payment carries it to the processor\'s window as its taxFreeAmount',
  examples: [128000],
});

export const BillItem = Type.Object({
  name: DisplayText({ minLength: 1, maxLength: 20 }),
  price: Type.Integer({ minimum: 100, maximum: MAX_INT, 'x-reason': 'must be a whole number of won from 100 to 2147483647' }),
  qty: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Default 1' })),
  discountAmount: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT, description: 'Won for AMOUNT, percent for RATE (floored)' })),
  discountUnit: Type.Optional(Type.Union([Type.Literal('AMOUNT'), Type.Literal('RATE')], { description: 'Default AMOUNT' })),
  type: Type.Optional(DisplayText({ maxLength: 20, description: 'Free text' })),
});
export type BillItem = Static<typeof BillItem>;

export const Items = Type.Array(BillItem, { minItems: 1, maxItems: 100, description: 'The net sum of the items must equal the amount' });

const Member = Type.Object({
  studentName: DisplayText({ minLength: 1, maxLength: 30, examples: ['홍길동'] }),
  studentPhone: Phone,
  guardianPhone: Type.Optional(Type.String({ pattern: '^\\d{10,11}$', 'x-reason': 'must be 10 to 11 digits', description: 'When present, the message goes to this number' })),
  studentBirthDate: Type.Optional(Type.String({ maxLength: 20, description: 'Stored, not required' })),
  classroomId: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Integer()], { description: 'Stored, not required' })),
});

const RecipientItem = Type.Object({
  studentName: DisplayText({ minLength: 1, maxLength: 30 }),
  studentPhone: Phone,
  amount: Amount,
  items: Type.Optional(Items),
  reason: Type.Optional(Reason),
  description: Type.Optional(Description),
  taxFreeAmount: Type.Optional(TaxFreeAmount),
});

export const CreateBillBody = Type.Object({
  templateType: Type.Optional(Type.Union(TEMPLATE_TYPES.map((t) => Type.Literal(t)), { description: 'Default SAME' })),
  requestId: Type.Optional(Type.String({
    pattern: '^[A-Za-z0-9_-]{8,64}$', 'x-reason': 'must be 8 to 64 letters, digits, _ or -',
    description: 'Idempotency key: a repeat with the same content creates nothing new; one recipient only',
    examples: ['order-20261122-0001'],
  })),
  reason: Type.Optional(DisplayText({ minLength: 1, maxLength: 60, description: 'Shown in the notification; 1 to 60 characters. Required unless billTemplateId gives it' })),
  description: Type.Optional(Description),
  amount: Type.Optional(amount('Required for SAME (unless billTemplateId gives it); may be omitted for INDIVIDUAL')),
  sendChannel: Type.Optional(Type.Union(SEND_CHANNELS.map((c) => Type.Literal(c)), { description: 'Default ALIMTALK' })),
  // The mode's rule (https only in live; also http:// to this machine in the sandbox) is checked
  // by the service (src/platform/urls.ts, merchantUrlPolicy); the schema only keeps other schemes out.
  webhookUrl: Type.Optional(Type.String({
    maxLength: 500, pattern: '^https?://', 'x-reason': 'must start with https://',
    description: 'https://; in the sandbox also http:// to localhost, 127.0.0.0/8 or [::1] (a receiver on your machine)',
    examples: ['https://academy.example.com/hooks/sunap'],
  })),
  webhookSecret: Type.Optional(Type.String({
    pattern: '^[\\x21-\\x7E]{16,128}$', 'x-reason': 'must be 16 to 128 printable ASCII characters without spaces',
    description: 'Only together with webhookUrl; every delivery then carries X-Service-Signature (and X-CariPay-Signature, the same value)',
  })),
  members: Type.Array(Member, { minItems: 1, maxItems: 1000 }),
  items: Type.Optional(Items),
  taxFreeAmount: Type.Optional(TaxFreeAmount),
  billTemplateId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Integer()], {
    description: 'A template saved in the console: it fills reason, description, amount with items, and sendChannel where the request leaves them out (docs/reference.md, "Templates")',
  })),
  recipientItems: Type.Optional(Type.Array(RecipientItem, { minItems: 1, maxItems: 1000, description: 'INDIVIDUAL: one entry per member, same studentName and studentPhone' })),
  relatedSubject: Type.Optional(DisplayText({ maxLength: 100 })),
  etc: Type.Optional(Type.String({ maxLength: 500 })),
  dueDate: Type.Optional(DueDate),
  reminders: Type.Optional(Type.Object(ReminderRule.properties, {
    description: 'Reminders to the unpaid (docs/reference.md, section 17): needs a due date (dueDate, or the template\'s "due N days after sending")',
  })),
}, {
  examples: [{
    reason: '12월 수강료', description: '매월 10일까지 납부 부탁드립니다', amount: 135000, taxFreeAmount: 120000,
    items: [{ name: '레슨', price: 120000 }, { name: '교재', price: 15000 }],
    members: [{ studentName: '홍길동', studentPhone: '01012345678', guardianPhone: '01098765432' }],
    sendChannel: 'ALIMTALK', dueDate: '2026-12-10',
  }],
});
export type CreateBillBody = Static<typeof CreateBillBody>;

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254, examples: ['owner@example.com'] }),
  password: Type.String({ minLength: 1, maxLength: 200 }),
  loginType: Type.Optional(Type.Literal('EMAIL')),
});
export const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 200 }) });

export const Month = Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', 'x-reason': 'must be yyyy-MM' });
export const ListQuery = Type.Object({
  month: Type.Optional(Month),
  page: Type.Optional(Type.String({ pattern: '^[1-9]\\d{0,8}$', 'x-reason': 'must be a whole number from 1', description: 'From 1 (default 1)' })),
  size: Type.Optional(Type.String({ pattern: '^([1-9]\\d?|100)$', 'x-reason': 'must be a whole number from 1 to 100', description: 'At most 100 (default 10)' })),
  overdue: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], {
    'x-reason': 'must be true or false', description: 'true: only unpaid invoices past their due date; false: all but those',
  })),
});
export const SummaryQuery = Type.Object({ month: Type.Optional(Month) });
export const BillParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'uniqueId (UUID) or numeric id' }) });
export const ResendBody = Type.Object({
  billIds: Type.Array(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer()]), { minItems: 1, maxItems: 100, description: 'uniqueIds (or numeric ids)' }),
});

// ---- responses -------------------------------------------------------------------------

const Time = Type.String({ description: "yyyy-MM-dd'T'HH:mm:ss, KST", examples: ['2026-11-22T14:30:05'] });

export const TokenPair = Type.Object({
  accessToken: Type.String(), refreshToken: Type.String(),
  accessTokenExpiresIn: Type.Integer({ description: 'Seconds (3600)' }),
});

export const PointsView = Type.Object({
  balance: Type.Integer(),
  costs: Type.Object({ ALIMTALK: Type.Integer(), SMS: Type.Integer() }),
});

const billFields = {
  id: Type.Integer(),
  uniqueId: Type.String(),
  paymentId: Type.String({ description: 'Gateway transaction number (TRANS_SEQNO)' }),
  transSeqNo: Type.String(),
  status: Type.Union(INVOICE_STATUSES.map((v) => Type.Literal(v))),
  sendStatus: Type.Union(INVOICE_SEND_STATUSES.map((v) => Type.Literal(v))),
  templateType: Type.Union(TEMPLATE_TYPES.map((v) => Type.Literal(v))),
  receiver: Type.Object({ name: Type.String(), phone: Type.String() }),
  guardianPhone: N(Type.String()),
  amount: Type.Integer(),
  reason: Type.String(),
  createDateTime: Time,
  doneDateTime: N(Time),
  canceledDateTime: N(Time),
  firstSentAt: N(Time),
  lastSentAt: N(Time),
  sendCount: Type.Integer(),
  sendChannel: Type.Union(SEND_CHANNELS.map((v) => Type.Literal(v))),
  requestId: N(Type.String()),
  dueDate: N(Type.String({ description: 'yyyy-MM-dd (KST), or null without one', examples: ['2026-12-10'] })),
  overdue: Type.Boolean({ description: 'Unpaid (PENDING) and past its due date' }),
};
export const BillSummary = Type.Object(billFields);
export const BillList = Type.Object({
  bills: Type.Array(BillSummary), page: Type.Integer(), size: Type.Integer(), totalCount: Type.Integer(),
});

const ItemView = Type.Object({
  name: Type.String(), price: Type.Integer(), qty: Type.Integer(), discountAmount: Type.Integer(),
  discountUnit: Type.String(), type: N(Type.String()), amount: Type.Integer({ description: 'Net of the line' }),
});

export const BillDetail = Type.Object({
  bill: Type.Object({
    ...billFields,
    description: N(Type.String()),
    items: Type.Array(ItemView),
    taxFreeAmount: Type.Integer({ description: 'The VAT-exempt (면세) part of the amount; 0 when all is taxed', examples: [0] }),
    webhookUrl: N(Type.String()),
    billTemplateId: N(Type.String()),
    relatedSubject: N(Type.String()),
    etc: N(Type.String()),
    studentBirthDate: N(Type.String()),
    classroomId: N(Type.String()),
    classId: N(Type.String({ description: 'The class a schedule billed it for' })),
  }),
  payment: N(Type.Object({
    acceptNumber: Type.String(),
    payCompany: Type.String(),
    installmentMonth: Type.Integer(),
    paymentDateTime: Type.String({ description: 'yyyy-MM-dd HH:mm:ss, KST' }),
    cancelDateTime: N(Type.String({ description: 'yyyy-MM-dd HH:mm:ss, KST' })),
  })),
  sendInfo: Type.Object({ firstSentAt: N(Time), lastSentAt: N(Time), sendCount: Type.Integer() }),
  sendHistories: Type.Array(Type.Object({
    sendType: Type.String({ description: 'INITIAL, RESEND, or REMINDER (a reminder to the unpaid)' }),
    sendResult: Type.String({ description: 'SUCCESS, FAILED, or WAITING while in progress' }),
    sendChannel: Type.String({ description: 'The channel actually used' }),
    sentAt: N(Time),
    receiverPhone: Type.String(),
    errorMessage: N(Type.String()),
    deliveryStatus: N(Type.String({ description: 'ACCEPTED, DELIVERED or FAILED (refresh-status updates it)' })),
  })),
});

export const ResendSummary = Type.Object({
  uniqueId: Type.String(),
  status: N(Type.String()),
  sendCount: N(Type.Integer()),
  lastSentAt: N(Time),
  resendResult: Type.String({ description: 'SUCCESS, FAILED or SKIPPED' }),
  reason: N(Type.String()),
});

export const SalesSummary = Type.Object({
  month: Type.String(), paidCount: Type.Integer(), paidAmount: Type.Integer(),
  canceledCount: Type.Integer(), canceledAmount: Type.Integer(), netAmount: Type.Integer(),
});

/** An invoice template as the console saves it (docs/reference.md, "Templates"). */
export const TemplateBody = Type.Object({
  name: DisplayText({ minLength: 1, maxLength: 40 }),
  reason: Reason,
  description: Type.Optional(Description),
  amount: Type.Optional(Amount),
  items: Type.Optional(Items),
  sendChannel: Type.Optional(Type.Union(SEND_CHANNELS.map((c) => Type.Literal(c)))),
  dueDays: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DUE_DAYS, 'x-reason': `must be a whole number of days from 0 to ${MAX_DUE_DAYS}`, description: 'Due N days after sending' })),
});
export type TemplateBody = Static<typeof TemplateBody>;
