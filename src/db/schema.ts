import type { Generated } from 'kysely';
// Type-only imports of files that import nothing: the state unions each domain owns.
import type { AttemptKind, AttemptStatus, OrderType, PayPath, PaymentState } from '../gateway/payment-state.js';
import type {
  AccountRole, InvoiceSendStatus, InvoiceStatus, LedgerKind, RechargeStatus, SendChannel, SendStatus, SendType, TemplateType, TokenKind, WebhookEventName,
  WebhookEventStatus,
} from '../invoicing/invoice-state.js';
import type { DeliveryStatus, MessageChannel } from '../ports/messaging.js';
import type { PayMethod, ProcessorId } from '../ports/checkout.js';
import type { ProcessorEventTable, SandboxCheckoutTable, StoreProcessorKeyTable, StoreProcessorTable } from './schema-checkout.js';
import type { ClassMemberTable, ClassTable, InvoiceReminderTable, ScheduleRunTable, ScheduleTable } from './schema-billing.js';
import type { AuditLogTable, ConsoleInviteTable, ConsolePasswordResetTable, ConsoleSessionTable } from './schema-console.js';
import type { DeliveryTable, JobTable, OutboundAttemptTable, WebhookEndpointTable } from './schema-jobs.js';

export type { ProcessorEventOutcome, ProcessorEventTable, SandboxCheckoutTable, StoreProcessorKeyTable, StoreProcessorTable } from './schema-checkout.js';
export type { AuditLogTable, ConsoleInviteTable, ConsolePasswordResetTable, ConsoleSessionTable } from './schema-console.js';
export type { DeliveryTable, JobTable, OutboundAttemptTable, WebhookEndpointTable } from './schema-jobs.js';

/**
 * Table types shared by both engines. Times are epoch milliseconds (bigint), amounts are
 * whole won (bigint), flags are 0/1 integers, structured values are JSON text: one shape
 * that SQLite and PostgreSQL store the same way.
 */
export interface PlatformTable {
  code: string;
  name: string;
  created_at: number;
}

export interface PlatformKeyTable {
  id: string;
  platform_code: string;
  key_sealed: string;
  /** null while the key is current; set when rotated out (end of its grace period). */
  retired_at: number | null;
  created_at: number;
}

export interface StoreTable {
  code: string;
  platform_code: string;
  name: string;
  ceo_name: string;
  biz_reg_num: string;
  tel: string;
  cat_enabled: number;
  created_at: number;
}

export interface PaymentTable {
  id: string;
  platform_code: string;
  store_code: string;
  trans_seqno: string;
  state: PaymentState;
  amount: number;
  supply_amount: number;
  tax_charge: number;
  tax_free_amount: number;
  mobile_no: string;
  pay_user_name: string;
  request_reason: string;
  info_message: string | null;
  confirm_url: string | null;
  return_display_yn: 'Y' | 'N';
  return_url: string | null;
  temp_value: string | null;
  user_id: string | null;
  order_type: OrderType;
  items_json: string | null;
  pay_path: PayPath;
  approval_number: string | null;
  approval_at: number | null;
  installment_month: string | null;
  issuer_name: string | null;
  accepter_name: string | null;
  method_name: string | null;
  card_bin: string | null;
  card_last4: string | null;
  /** The processor's key of the approval (migration 0006), to cancel it by. */
  processor_ref: string | null;
  cancel_at: number | null;
  cancel_reason: string;
  cancel_amount: number;
  created_at: number;
  updated_at: number;
  /** 0010: the processor that took the payment (or issued its virtual account); cancels and look-ups go there. */
  processor: ProcessorId | null;
  /** 0010: the order id that processor knows the payment by (the attempt that took it). */
  processor_order: string | null;
  /** 0010: CARD, EASY_PAY, TRANSFER, VIRTUAL_ACCOUNT or MOBILE_PHONE. */
  method: PayMethod | null;
  /** 0010: the virtual account (standard bank code, bank name, number, holder, due); '' and null when none is open. */
  vbank_code: string;
  vbank_name: string;
  vbank_account: string;
  vbank_holder: string;
  vbank_due_at: number | null;
  /** 0010: the account's secret that the processor's deposit notice must carry, sealed. */
  vbank_secret_sealed: string | null;
}

export interface PaymentAttemptTable {
  id: string;
  payment_id: string;
  kind: AttemptKind;
  status: AttemptStatus;
  card_bin: string | null;
  card_last4: string | null;
  issuer_name: string | null;
  installment_month: string | null;
  message: string | null;
  created_at: number;
  closed_at: number | null;
  /** 0010: the processor the attempt went to, and the method chosen in its window. */
  processor: ProcessorId | null;
  method: PayMethod | null;
  /** 0010: the processor's key the window returned with (Toss paymentKey), kept to confirm again after a crash. */
  processor_ref: string | null;
  /** 0010: a cancel's refund account (personal data), sealed, only while the attempt is open. */
  refund_sealed: string | null;
  /** 0012: the process that opened or claimed the attempt (host/pid/random, src/platform/instance.ts); null before 0012. */
  owner: string | null;
}

export interface SettingTable {
  key: string;
  value: string;
}

export interface AccountTable {
  id: string;
  email: string;
  password_hash: string;
  store_code: string;
  invoicing_enabled: number;
  created_at: number;
  /** owner, manager or viewer (src/invoicing/team.ts). */
  role: Generated<AccountRole>;
  /** The account whose invoices, wallet and templates this one works on (itself for a team's first owner). */
  tenant_id: string | null;
}

export interface AuthTokenTable {
  id: string;
  account_id: string;
  family_id: string;
  kind: TokenKind;
  token_hash: string;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
  created_at: number;
}

/** Sign-in throttles (migration 0008): one row per email or client address. */
export interface SignInThrottleTable {
  key: string;
  attempts: number;
  window_started_at: number;
  last_attempt_at: number;
  next_allowed_at: number;
}

export interface WalletTable {
  account_id: string;
  balance: number;
  updated_at: number;
}

export interface LedgerTable {
  id: Generated<number>;
  account_id: string;
  delta: number;
  kind: LedgerKind;
  ref: string | null;
  memo: string | null;
  created_at: number;
  /** The send (creation, resend, reminder) whose RESERVE rows these are (migration 0018); null otherwise. */
  batch: string | null;
}

export interface InvoiceTable {
  id: Generated<number>;
  unique_id: string;
  account_id: string;
  store_code: string;
  trans_seqno: string;
  payment_id: string | null;
  status: InvoiceStatus;
  send_status: InvoiceSendStatus;
  deleted_at: number | null;
  request_id: string | null;
  request_hash: string | null;
  template_type: TemplateType;
  receiver_name: string;
  receiver_phone: string;
  guardian_phone: string | null;
  amount: number;
  reason: string;
  description: string | null;
  items_json: string | null;
  send_channel: SendChannel;
  webhook_url: string | null;
  webhook_secret_sealed: string | null;
  bill_template_id: string | null;
  related_subject: string | null;
  etc: string | null;
  student_birth_date: string | null;
  classroom_id: string | null;
  send_count: number;
  first_sent_at: number | null;
  last_sent_at: number | null;
  done_at: number | null;
  canceled_at: number | null;
  created_at: number;
  updated_at: number;
  /** 0013: the due date (yyyy-MM-dd, KST), the class and schedule run that billed it, its reminder rule. */
  due_date: string | null;
  class_id: string | null;
  schedule_run_id: string | null;
  remind_before_days: number | null;
  remind_after_days: number | null;
  remind_limit: number | null;
  /** 0018: the VAT-exempt part of the amount, 0..amount (0 = all taxed); the payment carries it. */
  tax_free_amount: Generated<number>;
}

/**
 * Live (not deleted) invoices per account: the invoice list's totalCount without a month.
 * Changed only in the transactions that insert or soft-delete invoices; no row reads as 0.
 */
export interface InvoiceCountTable {
  account_id: string;
  live_invoices: number;
}

export interface SendTable {
  id: string;
  invoice_id: number;
  account_id: string;
  send_type: SendType;
  status: SendStatus;
  channel_requested: SendChannel;
  channel_used: MessageChannel | null;
  receiver_phone: string;
  cost_reserved: number;
  cost_settled: number | null;
  provider_message_id: string | null;
  delivery_status: DeliveryStatus | null;
  error_message: string | null;
  sent_at: number | null;
  created_at: number;
}

export interface WebhookEventTable {
  id: Generated<number>;
  invoice_id: number;
  account_id: string;
  event: WebhookEventName;
  url: string;
  body: string;
  status: WebhookEventStatus;
  attempts: number;
  created_at: number;
  updated_at: number;
}

export interface SandboxMessageTable {
  id: string;
  idempotency_key: string;
  channel: MessageChannel;
  to_phone: string;
  text: string;
  link: string | null;
  /** FAULT rows remember a provider fault the sandbox played once (never listed). */
  delivery_status: DeliveryStatus | 'FAULT';
  sent_at: number;
}

export interface SandboxCardChargeTable {
  idempotency_key: string;
  outcome: string;
  created_at: number;
}

export interface BillTemplateTable {
  id: string;
  account_id: string;
  name: string;
  reason: string;
  description: string | null;
  amount: number | null;
  items_json: string | null;
  send_channel: SendChannel | null;
  created_at: number;
  updated_at: number;
  /** 0013: "due N days after sending". */
  due_days: number | null;
}

export interface RechargeTable {
  id: string;
  account_id: string;
  points: number;
  /** Won charged to the card (0 for a sandbox recharge, credited at once). */
  amount: number;
  store_code: string | null;
  payment_id: string | null;
  status: RechargeStatus;
  created_at: number;
  credited_at: number | null;
}

/** A short payment link (migration 0017): a random code that redirects to one payment's page. */
export interface ShortLinkTable {
  code: string;
  store_code: string;
  payment_id: string;
  created_at: number;
}

export interface Database {
  platforms: PlatformTable;
  platform_keys: PlatformKeyTable;
  stores: StoreTable;
  payments: PaymentTable;
  payment_attempts: PaymentAttemptTable;
  jobs: JobTable;
  outbound_attempts: OutboundAttemptTable;
  deliveries: DeliveryTable;
  webhook_endpoints: WebhookEndpointTable;
  settings: SettingTable;
  accounts: AccountTable;
  auth_tokens: AuthTokenTable;
  sign_in_throttles: SignInThrottleTable;
  wallets: WalletTable;
  ledger: LedgerTable;
  invoices: InvoiceTable;
  invoice_counts: InvoiceCountTable;
  sends: SendTable;
  webhook_events: WebhookEventTable;
  sandbox_messages: SandboxMessageTable;
  sandbox_card_charges: SandboxCardChargeTable;
  console_sessions: ConsoleSessionTable;
  console_invites: ConsoleInviteTable;
  console_password_resets: ConsolePasswordResetTable;
  audit_log: AuditLogTable;
  bill_templates: BillTemplateTable;
  recharges: RechargeTable;
  store_processors: StoreProcessorTable;
  store_processor_keys: StoreProcessorKeyTable;
  processor_events: ProcessorEventTable;
  sandbox_checkouts: SandboxCheckoutTable;
  classes: ClassTable;
  class_members: ClassMemberTable;
  schedules: ScheduleTable;
  schedule_runs: ScheduleRunTable;
  invoice_reminders: InvoiceReminderTable;
  short_links: ShortLinkTable;
}
