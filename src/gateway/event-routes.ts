import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../platform/http.js';
import type { GatewayService } from './service.js';

/** The largest notice accepted (Toss's and PortOne's are a few KB). */
export const EVENT_BODY_LIMIT = 256 * 1024;

const Answer = Type.Object({
  received: Type.Boolean({ examples: [true] }),
  outcome: Type.String({ description: 'APPLIED (looked up and applied), IGNORED (not about a payment of this processor or store), DUPLICATE (seen before), REFUSED (failed its verification), FAILED (try again later), UNKNOWN (no such processor or store)', examples: ['APPLIED'] }),
  detail: Type.String({ examples: ['looked up: APPROVED'] }),
});

/**
 * Where processors post their notices (docs/reference.md, "Processor events"): per processor,
 * and per store for a store with its own contract (whose keys verify and look up). The body is
 * taken as raw bytes, as signatures are made over them, and handed with the headers to the
 * processor's adapter. Registered encapsulated: its content-type parser applies here only.
 */
export async function processorEventRoutes(app: App, gw: GatewayService): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: EVENT_BODY_LIMIT }, (_req, body, done) => done(null, body));
  const tags = ['Processors'];
  const handle = async (req: FastifyRequest<{ Params: { processor: string; storeCode?: string } }>, reply: FastifyReply) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const a = await gw.receiveEvent(req.params.processor, req.params.storeCode ?? null, { body, headers });
    return reply.code(a.status).send({ received: a.status === 200, outcome: a.outcome, detail: a.detail });
  };
  const description = 'A processor posts here (register the address in its developer center): a virtual account\'s deposit notice, a status change, a cancel made in its dashboard. The adapter verifies it (a deposit\'s secret, a signature); Sunap then looks the order up at the processor and applies what it holds, never what the body says. Answers 200 when handled or not about one of its payments, 401 when the verification failed, 404 for an unknown processor or store, 500 when it must be sent again later. A notice seen before answers as it did.';
  app.post('/processor-events/:processor', {
    schema: { tags, summary: 'A processor\'s notice (operator\'s contract)', description, params: Type.Object({ processor: Type.String({ maxLength: 40, examples: ['toss'] }) }), response: { 200: Answer, 401: Answer, 404: Answer, 500: Answer } },
  }, handle);
  app.post('/processor-events/:processor/:storeCode', {
    schema: { tags, summary: 'A processor\'s notice for one store with its own contract', description, params: Type.Object({ processor: Type.String({ maxLength: 40, examples: ['toss'] }), storeCode: Type.String({ maxLength: 64, examples: ['SD9F8E7D6C5B'] }) }), response: { 200: Answer, 401: Answer, 404: Answer, 500: Answer } },
  }, handle);
}
