// Type-only imports of a file that imports nothing: the checkout's unions.
import type { CheckoutProcessorId, PayMethod, PayWay } from '../ports/checkout.js';

/** The checkout's tables (migration 0010), beside src/db/schema.ts. */

/** A store's own processor settings (0010); without a row the operator's configuration applies. */
export interface StoreProcessorTable {
  store_code: string;
  processor: CheckoutProcessorId;
  way: PayWay;
  /** JSON array of PayMethod. */
  methods: string;
  updated_at: number;
}

/** A store's keys for one processor (0010): public parts as JSON, secrets sealed. */
export interface StoreProcessorKeyTable {
  store_code: string;
  processor: CheckoutProcessorId;
  public_keys: string;
  secrets_sealed: string;
  updated_at: number;
}

export type ProcessorEventOutcome = 'RECEIVED' | 'APPLIED' | 'IGNORED' | 'REFUSED' | 'FAILED';

/** A processor's notice (0010), once per (processor, event_key). */
export interface ProcessorEventTable {
  id: string;
  processor: string;
  store_code: string | null;
  event_key: string;
  event_type: string;
  order_id: string | null;
  payment_id: string | null;
  outcome: ProcessorEventOutcome;
  detail: string;
  received_at: number;
  updated_at: number;
}

/** The sandbox's window orders (0010), as a processor keeps them. */
export interface SandboxCheckoutTable {
  order_id: string;
  payment_key: string;
  state: string;
  method: PayMethod;
  amount: number;
  detail: string;
  created_at: number;
  updated_at: number;
}

