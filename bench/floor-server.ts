// The stack's floor: Fastify 5 with Sunap's security headers (worked out once, as
// src/platform/security-headers.ts does, with the options src/app.ts gives it) answering the
// same pre-serialized searchPayment answer as the ceiling, with no body parsing, database,
// signing, logging or metrics. What any route of a production Sunap costs before its own
// work, so searchPayment cannot go above it. Run as a child process by bench/run.ts
// (BENCH_FLOOR_PORT, BENCH_CEILING_BODY = a file with the body); BENCHMARKS.md, "The floor".
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { securityHeaders } from '../src/platform/security-headers.js';

const body = readFileSync(process.env.BENCH_CEILING_BODY!);
const headers = securityHeaders({ contentSecurityPolicy: false, frameguard: { action: 'deny' }, referrerPolicy: { policy: 'no-referrer' }, hsts: false });
const app = Fastify({ logger: false });
app.addHook('onRequest', (_req, reply, done) => {
  reply.headers(headers);
  done();
});
app.get('/ready', async () => ({ ok: true }));
// The body is not parsed (the ceiling does not parse it either): Fastify's JSON parser is
// part of the reference's and Sunap's cost, not of the floor's.
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', (_req, payload, done) => {
  payload.resume();
  payload.on('end', () => done(null, undefined));
});
app.post('/api/searchPayment', (_req, reply) => {
  void reply.type('application/json; charset=utf-8').send(body);
});
await app.listen({ port: Number(process.env.BENCH_FLOOR_PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
