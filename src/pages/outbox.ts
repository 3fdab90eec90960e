import { Type, type Static } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { AppError } from '../platform/errors.js';
import type { App } from '../platform/http.js';
import { kstSpaced } from '../platform/kst.js';
import { safeHref } from '../platform/urls.js';
import { listSandboxMessages, normalizePhone, OUTBOX_MAX_LIMIT, type OutboxMessage } from '../ports/sandbox-repository.js';
import { renderErrorPage } from './error-page.js';
import { html, layout, pageHeaders } from './html.js';
import { CHANNEL_LABEL, DELIVERY_LABEL } from './labels.js';

const Query = Type.Object({
  phone: Type.Optional(Type.String({ maxLength: 40, description: 'Recipient number; digits are compared, so 010-1234-5678 works too' })),
  limit: Type.Optional(Type.String({ pattern: '^\\d{1,3}$', 'x-reason': `must be a number from 1 to ${OUTBOX_MAX_LIMIT}`, description: `How many, newest first (default 100, at most ${OUTBOX_MAX_LIMIT})` })),
});
type QueryT = Static<typeof Query>;

const MessageSchema = Type.Object({
  channel: Type.String({ description: 'ALIMTALK or SMS: the channel that carried it' }),
  to: Type.String(),
  text: Type.String(),
  link: Type.Union([Type.String(), Type.Null()]),
  deliveryStatus: Type.String({ description: 'ACCEPTED, DELIVERED or FAILED' }),
  sentAt: Type.String({ description: 'ISO-8601 UTC' }),
});

function lines(text: string) {
  return text.split(/\r?\n/).map((l, i) => (i === 0 ? l : html`<br>${l}`));
}

export function renderOutbox(messages: OutboxMessage[], phone: string): string {
  const list = messages.length === 0
    ? html`<p class="notice">${phone ? '이 번호로 보낸 메시지가 없습니다.' : '아직 보낸 메시지가 없습니다.'}</p>`
    : messages.map((m) => {
      const href = safeHref(m.link);
      return html`<article class="card message">
<dl class="facts">
<dt>채널</dt><dd class="channel">${CHANNEL_LABEL[m.channel]} (${m.channel})</dd>
<dt>받는 번호</dt><dd class="to">${m.to}</dd>
<dt>보낸 시각</dt><dd><time datetime="${new Date(m.sentAtMs).toISOString()}">${kstSpaced(m.sentAtMs)} KST</time></dd>
<dt>전달 상태</dt><dd class="delivery">${DELIVERY_LABEL[m.deliveryStatus]}</dd>
</dl>
<p class="text">${lines(m.text)}</p>
${href ? html`<p><a class="btn secondary" href="${href}">결제 페이지 열기</a></p>` : ''}
</article>
`;
    });
  const body = html`
<h1>샌드박스 메시지함</h1>
<p class="sandbox">샌드박스 메시징 제공자가 받은 알림톡과 문자입니다. 실제로 발송되지 않습니다.</p>
<form method="get" action="/sandbox/outbox" class="card">
<div class="field">
<label for="phone">받는 번호</label>
<input id="phone" name="phone" type="tel" inputmode="numeric" autocomplete="off" value="${phone}" maxlength="40">
</div>
<button type="submit" class="btn">찾기</button>
${phone ? html`<p class="notice"><a href="/sandbox/outbox">전체 보기</a></p>` : ''}
</form>
${list}`;
  return layout('샌드박스 메시지함', body);
}

/** The outbox is a page: its errors are pages too, and a bad query says which field. */
function outboxPageError(err: FastifyError & { validationMessage?: string }, req: FastifyRequest, reply: FastifyReply) {
  // Refused by the sandbox guard (src/platform/sandbox-guard.ts): a foreign host or caller.
  if (err instanceof AppError && err.httpStatus === 403) {
    return reply.code(403).headers(pageHeaders()).send(renderErrorPage(403, { title: '샌드박스 메시지함', message: '이 주소에서는 샌드박스 메시지함을 볼 수 없습니다.' }));
  }
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? 400 : 500;
  if (status === 500) req.log.error({ err }, 'outbox page failed');
  const message = status === 400 ? `검색 조건이 올바르지 않습니다 (${err.validationMessage ?? 'query: is invalid'}).` : undefined;
  return reply.code(status).headers(pageHeaders()).send(renderErrorPage(status, { title: '샌드박스 메시지함', message }));
}

/** The sandbox outbox (docs/reference.md, "Sandbox"): the messages the sandbox provider accepted, as JSON and as a page. */
export function sandboxOutboxRoutes(app: App, db: Kysely<Database>): void {
  const tags = ['Sandbox'];
  const read = (q: QueryT) => listSandboxMessages(db, { phone: q.phone, limit: q.limit ? Number(q.limit) : undefined });

  app.get('/sandbox/messages', {
    schema: {
      tags, summary: 'Messages the sandbox messaging provider accepted, newest first',
      querystring: Query,
      response: { 200: Type.Object({ messages: Type.Array(MessageSchema) }) },
    },
  }, async (req) => {
    const messages = await read(req.query);
    return {
      messages: messages.map((m) => ({
        channel: m.channel, to: m.to, text: m.text, link: m.link, deliveryStatus: m.deliveryStatus,
        sentAt: new Date(m.sentAtMs).toISOString(),
      })),
    };
  });

  app.get('/sandbox/outbox', {
    errorHandler: outboxPageError,
    schema: { tags, summary: 'The sandbox outbox as a page for people (HTML), filtered by phone', querystring: Query },
  }, async (req, reply) => {
    const q = req.query;
    const messages = await read(q);
    const phone = q.phone?.trim() ? normalizePhone(q.phone) || q.phone.trim() : '';
    return reply.headers(pageHeaders()).send(renderOutbox(messages, phone));
  });
}
