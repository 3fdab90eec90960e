import type { FastifyInstance } from 'fastify';

/** Webhooks (bill.paid / bill.canceled), the public invoice lookup and the sandbox outbox. */
export async function invoicingWebPlugin(_app: FastifyInstance): Promise<void> {}
