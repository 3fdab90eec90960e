import { Type, type Static } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { kstSpaced } from '../platform/clock.js';
import { listSandboxMessages, normalizePhone, OUTBOX_MAX_LIMIT, type OutboxMessage } from '../ports/sandbox-outbox.js';
import { html, layout, pageHeaders } from './html.js';

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

const CHANNEL_LABEL: Record<string, string> = { ALIMTALK: '알림톡', SMS: '문자' };
const DELIVERY_LABEL: Record<string, string> = { ACCEPTED: '접수', DELIVERED: '전달됨', FAILED: '전달 실패' };

function safeHref(link: string | null): string | null {
  if (!link) return null;
  try {
    const u = new URL(link);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}

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
<dt>채널</dt><dd class="channel">${CHANNEL_LABEL[m.channel] ?? m.channel} (${m.channel})</dd>
<dt>받는 번호</dt><dd class="to">${m.to}</dd>
<dt>보낸 시각</dt><dd><time datetime="${new Date(m.sentAtMs).toISOString()}">${kstSpaced(m.sentAtMs)} KST</time></dd>
<dt>전달 상태</dt><dd class="delivery">${DELIVERY_LABEL[m.deliveryStatus] ?? m.deliveryStatus}</dd>
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

/** The outbox is a page: its errors are pages too (the root handler answers JSON). */
function outboxPageError(err: FastifyError & { validationMessage?: string }, req: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? 400 : 500;
  if (status === 500) req.log.error({ err }, 'outbox page failed');
  const text = status === 400 ? `검색 조건이 올바르지 않습니다 (${err.validationMessage ?? 'query: is invalid'}).` : '일시적인 오류입니다. 잠시 후 다시 시도해 주세요.';
  return reply.code(status).headers(pageHeaders()).send(layout('샌드박스 메시지함', html`<h1>샌드박스 메시지함</h1>
<section class="card state"><p>${text}</p><p><a href="/sandbox/outbox">전체 보기</a></p></section>`));
}

/** The sandbox outbox (decisions §6): the messages the sandbox provider accepted, as JSON and as a page. */
export function sandboxOutboxRoutes(app: FastifyInstance): void {
  const tags = ['Sandbox'];
  const read = (q: QueryT) => listSandboxMessages(app.sunap.store.db, { phone: q.phone, limit: q.limit ? Number(q.limit) : undefined });

  app.get('/sandbox/messages', {
    schema: {
      tags, summary: 'Messages the sandbox messaging provider accepted, newest first',
      querystring: Query,
      response: { 200: Type.Object({ messages: Type.Array(MessageSchema) }) },
    },
  }, async (req) => {
    const messages = await read(req.query as QueryT);
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
    const q = req.query as QueryT;
    const messages = await read(q);
    const phone = q.phone?.trim() ? normalizePhone(q.phone) || q.phone.trim() : '';
    return reply.headers(pageHeaders()).send(renderOutbox(messages, phone));
  });
}
