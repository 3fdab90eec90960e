import type { FastifyInstance } from 'fastify';
import type { MessagingProvider } from '../ports/messaging.js';
import { SandboxMessaging } from '../ports/sandbox-messaging.js';
import { AuthService } from './accounts.js';
import { invoicingRoutes } from './routes.js';
import { SEND_JOB, SendRunner } from './sends.js';
import { InvoiceService } from './service.js';

/**
 * Invoicing server: accounts and tokens, points, invoices, sends (routes under /app/v1).
 * Live mode refuses to start without a real messaging provider (config.ts), so the sandbox
 * adapter is the one provider this build has.
 */
export async function invoicingPlugin(app: FastifyInstance, opts: { messaging?: MessagingProvider } = {}): Promise<void> {
  const { store, clock, box, gateway, worker, config, log } = app.sunap;
  const messaging = opts.messaging ?? new SandboxMessaging(store.db, clock);
  const runner = new SendRunner(store.db, { gateway, messaging, clock, costs: config.costs, log, timeoutMs: config.outboundTimeoutMs });
  const invoices = new InvoiceService(store.db, {
    gateway, messaging, runner, clock, box, costs: config.costs, log, wake: () => worker.wake(),
  });
  worker.register(SEND_JOB, runner.handler());
  gateway.addListener(invoices.listener());
  invoicingRoutes(app, new AuthService(store.db, clock), invoices);
}
