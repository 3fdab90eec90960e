import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppCodes } from '../platform/errors.js';
import { html, layout, pageHeaders } from './html.js';

/** What each kind of problem tells a person, in Korean. */
const TEXT: Record<'notFound' | 'badRequest' | 'tooMany' | 'internal', { title: string; message: string }> = {
  notFound: { title: '페이지를 찾을 수 없습니다', message: '주소를 다시 확인해 주세요.' },
  badRequest: { title: '요청을 처리할 수 없습니다', message: '받은 링크를 다시 열어 주세요.' },
  tooMany: { title: '요청이 너무 많습니다', message: '잠시 후 다시 시도해 주세요.' },
  internal: { title: '일시적인 오류', message: '일시적인 문제로 요청을 처리하지 못했습니다. 잠시 후 다시 시도해 주세요.' },
};

/** The one error page of every customer page: a title, what happened, and what to do. */
export function renderErrorPage(status: number, over: { title?: string; message?: string } = {}): string {
  const base = status === 404 ? TEXT.notFound : status === 429 ? TEXT.tooMany : status >= 500 ? TEXT.internal : TEXT.badRequest;
  const title = over.title ?? base.title;
  return layout(title, html`<header class="merchant"><h1>${title}</h1></header>
<section class="card state" aria-label="안내"><p>${over.message ?? base.message}</p></section>
<footer class="foot">Sunap 안전결제</footer>`);
}

/** Answers with the error page: the status, the page headers, the page. */
export function sendErrorPage(reply: FastifyReply, status: number, over: { title?: string; message?: string } = {}) {
  return reply.code(status).headers(pageHeaders()).send(renderErrorPage(status, over));
}

/**
 * An error handler for routes that answer pages: a rate limit is 429, any other client problem
 * is `clientStatus` (pages answer bad links as not found), anything else 500 and a log line
 * without the request body (card data could be in it).
 */
export function pageErrorHandler(opts: { clientStatus?: (status: number) => number; render?: (status: number) => string } = {}) {
  const render = opts.render ?? ((status: number) => renderErrorPage(status));
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 429) {
      req.resultCode = String(AppCodes.TOO_MANY.code);
      return sendErrorPage(reply, 429);
    }
    if (status === 500) req.log.error({ err: { type: err.name, message: err.message, stack: err.stack } }, 'page failed');
    else req.log.info({ status, code: err.code }, 'page request refused');
    const shown = status === 500 ? 500 : (opts.clientStatus?.(status) ?? status);
    return reply.code(shown).headers(pageHeaders()).send(render(shown));
  };
}
