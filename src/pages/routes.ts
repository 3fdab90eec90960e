import type { FastifyInstance } from 'fastify';

/** Payment page and public invoice page: server-rendered, mobile-first, no JavaScript needed. */
export async function pageRoutes(_app: FastifyInstance): Promise<void> {}
