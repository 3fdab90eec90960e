/**
 * Job and delivery states (src/jobs/README.md). A job is PENDING until a run succeeds (DONE)
 * or its last attempt fails (DEAD). This file imports nothing, so the table types
 * (src/db/schema.ts) can use it.
 */
export const JOB_STATUSES = ['PENDING', 'DONE', 'DEAD'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What an outbound attempt delivered: a CONFIRM_URL callback or an invoice webhook. */
export const OUTBOUND_TARGETS = ['CALLBACK', 'WEBHOOK'] as const;
export type OutboundTarget = (typeof OUTBOUND_TARGETS)[number];
