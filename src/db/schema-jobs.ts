import type { Generated } from 'kysely';
// A type-only import of a file that imports nothing: the jobs' and deliveries' unions.
import type { AttemptTrigger, DeliveryKind, DeliveryState, JobStatus, OutboundTarget } from '../jobs/job-state.js';

/** The durable jobs, their outbound attempts and a store's webhook deliveries (0001, 0009), beside src/db/schema.ts. */

export interface JobTable {
  id: string;
  kind: string;
  payload: string;
  status: JobStatus;
  run_at: number;
  lease_until: number | null;
  lease_owner: string | null;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  /** Deduplicates jobs that must exist once (e.g. one callback per payment approval). */
  unique_key: string | null;
  created_at: number;
  updated_at: number;
  /** The store the job works for (0009): the claim limits running jobs per store. */
  store_code: Generated<string | null>;
}

export interface OutboundAttemptTable {
  id: Generated<number>;
  job_id: string;
  target: OutboundTarget;
  ref_id: string;
  attempt_no: number;
  url: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: number;
  /** 0009: the delivery the attempt belongs to (null for attempts made before deliveries existed). */
  delivery_id: string | null;
  trigger: Generated<AttemptTrigger>;
  /** The receiver's answer, cut to 2 KB. */
  response_body: string | null;
}

/** A store's webhook endpoint (0009). */
export interface WebhookEndpointTable {
  id: string;
  store_code: string;
  url: string;
  /** JSON array of event names. */
  events: string;
  secret_sealed: string;
  old_secret_sealed: string | null;
  old_secret_until: number | null;
  enabled: number;
  disabled_reason: string | null;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

/** A callback or webhook a store is owed (0009): the request as sent and its status. */
export interface DeliveryTable {
  id: string;
  store_code: string;
  kind: DeliveryKind;
  number: string;
  ref_id: string;
  trans_seqno: string | null;
  bill_id: string | null;
  event: string | null;
  endpoint_id: string | null;
  url: string;
  /** JSON object of the headers sent, secrets (signatures) left out. */
  request_headers: string;
  body: string;
  status: DeliveryState;
  attempts: number;
  last_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}
