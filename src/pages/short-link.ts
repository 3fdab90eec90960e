import { Type } from '@sinclair/typebox';
import type { GatewayService } from '../gateway/index.js';
import { PUBLIC_RATE_LIMIT } from '../invoicing/index.js';
import type { App } from '../platform/http.js';
import { pageErrorHandler, renderErrorPage, sendErrorPage } from './error-page.js';

/** The path of short links under SUNAP_PUBLIC_URL (`/s`), without a trailing slash. */
export function shortLinkBase(shortLinkUrl: string): string {
  return new URL(shortLinkUrl).pathname.replace(/\/+$/, '');
}

const NOT_FOUND = { title: '결제 링크를 찾을 수 없습니다', message: '문자에 있는 주소를 다시 확인해 주세요.' };

/**
 * GET `/s/<code>`: the short payment link of an SMS (docs/invoicing.md, "SMS or LMS") redirects
 * (302) to its payment's page. An unknown code and a malformed one answer the same 404 page, so
 * an answer tells nothing but "this code opens nothing"; the route shares the public pages'
 * per-address limit, and the code is kept out of the request log (src/platform/logging.ts).
 */
export function shortLinkRoutes(app: App, deps: { gateway: GatewayService; shortLinkUrl: string }): void {
  app.get(`${shortLinkBase(deps.shortLinkUrl)}/:code`, {
    config: { rateLimit: PUBLIC_RATE_LIMIT },
    errorHandler: pageErrorHandler({ clientStatus: () => 404, render: (status) => renderErrorPage(status, status === 404 ? NOT_FOUND : {}) }),
    schema: {
      tags: ['Pages'],
      summary: 'Short payment link (an SMS\'s): redirects to the payment page',
      description: 'A random 12-character code ([0-9A-Za-z]) made when the invoice\'s first message goes out. 302 to the payment page; an unknown code 404 (HTML). Limited to 60 calls a minute per client address.',
      params: Type.Object({ code: Type.String() }),
    },
  }, async (req, reply) => {
    const target = await deps.gateway.resolveShortLink(req.params.code);
    if (!target) return sendErrorPage(reply, 404, NOT_FOUND);
    // The target carries the page token: never cached, never sent on as a referrer.
    return reply.code(302).header('location', target).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
  });
}
