import type { FastifyInstance } from 'fastify';

/** Invoicing server: accounts and tokens, points, invoices, sends (routes under /app/v1). */
export async function invoicingPlugin(_app: FastifyInstance): Promise<void> {}
