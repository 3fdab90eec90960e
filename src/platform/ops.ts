import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';

/** Operations: liveness, readiness (database reachable), Prometheus metrics. */
export function opsRoutes(app: FastifyInstance): void {
  const tags = ['Operations'];
  app.get('/healthz', { schema: { tags, summary: 'Liveness: the process answers' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags, summary: 'Readiness: the database answers' } }, async (_req, reply) => {
    try {
      await sql`select 1`.execute(app.sunap.store.db);
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    }
  });
  app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics', hide: true } }, async (_req, reply) => {
    const { registry } = app.sunap.metrics;
    const body = await registry.metrics();
    return reply.type(registry.contentType).send(body);
  });
}

const ClockState = Type.Object({ now: Type.String({ description: 'ISO-8601 UTC' }), offsetSeconds: Type.Number() });

/** The movable sandbox clock (decisions §6, §8): stored in the database, shared by every instance. */
export function sandboxClockRoutes(app: FastifyInstance): void {
  const tags = ['Sandbox'];
  const state = () => ({ now: app.sunap.clock.now().toISOString(), offsetSeconds: app.sunap.clock.offset() });
  app.get('/sandbox/clock', { schema: { tags, summary: 'The service clock', response: { 200: ClockState } } }, async () => {
    await app.sunap.clock.refresh();
    return state();
  });
  app.post('/sandbox/clock', {
    schema: {
      tags, summary: 'Move the service clock forward; due retries and expiries happen at once',
      body: Type.Object({ advanceSeconds: Type.Integer({ minimum: 0, maximum: 10 * 365 * 86400 }) }),
      response: { 200: ClockState },
    },
  }, async (req) => {
    await app.sunap.clock.advance((req.body as { advanceSeconds: number }).advanceSeconds);
    app.sunap.worker.wake();
    return state();
  });
}
