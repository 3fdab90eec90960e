import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { ping } from '../db/settings.js';
import { MAX_OFFSET_SECONDS, type SharedClock } from './clock.js';
import { AppError } from './errors.js';
import type { App } from './http.js';
import type { Metrics } from './metrics.js';

/** Operations (README, "Operations"): liveness, readiness (the database answers), Prometheus metrics. */
export function opsRoutes(app: App, deps: { db: Kysely<Database>; metrics: Metrics; metricsToken?: string | null }): void {
  const tags = ['Operations'];
  app.get('/healthz', { schema: { tags, summary: 'Liveness: the process answers' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags, summary: 'Readiness: the database answers' } }, async (_req, reply) => {
    try {
      await ping(deps.db);
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    }
  });
  // With SUNAP_METRICS_TOKEN set, only a scraper presenting it as a bearer token reads them
  // (route names, queue depths and payment counts say a lot about a business).
  const expected = deps.metricsToken ? sha256(deps.metricsToken) : null;
  app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics', hide: true } }, async (req, reply) => {
    if (expected) {
      const m = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
      if (!m || !timingSafeEqual(sha256(m[1]!), expected)) {
        return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ message: 'metrics: missing or wrong bearer token (SUNAP_METRICS_TOKEN)' });
      }
    }
    const { registry } = deps.metrics;
    const body = await registry.metrics();
    return reply.type(registry.contentType).send(body);
  });
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

const ClockState = Type.Object({ now: Type.String({ description: 'ISO-8601 UTC' }), offsetSeconds: Type.Number() });

/** The movable sandbox clock (docs/reference.md, "Sandbox"): stored in the database, shared by every instance. */
export function sandboxClockRoutes(app: App, deps: { clock: SharedClock; wake: () => void }): void {
  const tags = ['Sandbox'];
  const { clock } = deps;
  const state = () => ({ now: clock.now().toISOString(), offsetSeconds: clock.offset() });
  app.get('/sandbox/clock', { schema: { tags, summary: 'The service clock', response: { 200: ClockState } } }, async () => {
    await clock.refresh();
    return state();
  });
  app.post('/sandbox/clock', {
    schema: {
      tags, summary: 'Move the service clock forward, or back to real time',
      description: `{"advanceSeconds": N} moves business time (expiries, retries, timestamps) forward; due retries and expiries happen at once. `
        + `The clock stays within ${MAX_OFFSET_SECONDS} seconds (400 days) of real time: beyond, 400 / -20. {"reset": true} puts it back on real time (offset 0). `
        + 'Signed gateway calls are checked against real time either way (TRANS_AT).',
      body: Type.Object({
        advanceSeconds: Type.Optional(Type.Integer({ minimum: 0, description: 'Seconds to move forward', examples: [7200] })),
        reset: Type.Optional(Type.Boolean({ description: 'true: offset back to 0 (applied before advanceSeconds when both are sent)', examples: [true] })),
      }, { examples: [{ advanceSeconds: 7200 }, { reset: true }] }),
      response: { 200: ClockState },
    },
  }, async (req) => {
    const { advanceSeconds, reset } = req.body;
    if (reset !== true && advanceSeconds === undefined) throw new AppError('VALIDATION', 'advanceSeconds: is required (or send {"reset": true})');
    if (reset === true) await clock.reset();
    if (advanceSeconds !== undefined) await clock.advance(advanceSeconds);
    deps.wake();
    return state();
  });
}
