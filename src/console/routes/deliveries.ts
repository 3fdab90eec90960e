import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINT_EVENTS, type EndpointEvent } from '../../gateway/index.js';
import { can, FAILING_WINDOW_MS, type RecoverResult } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { kstIso } from '../../platform/kst.js';
import { fieldErrorsOf, hasErrors, textProblems, type FieldErrors } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { deliveriesBody, deliveryBody, endpointsBody, type EndpointValues } from '../views/deliveries.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const LIST_SIZE = 100;
const NOTICES: Record<string, string> = {
  redelivered: '다시 보내기를 예약했습니다. 잠시 후 시도 기록에 나타납니다.',
  enabled: '엔드포인트를 켰습니다.',
  disabled: '엔드포인트를 껐습니다.',
  test: '테스트 이벤트를 보냈습니다.',
};

/**
 * Callbacks and webhooks (docs/console.md, "Callbacks and webhooks"): the delivery log (failed
 * first), one delivery with its attempts, "send again" and recovery, the store's webhook
 * endpoints. Everyone reads; managers and owners act.
 */
export function deliveryRoutes(app: App, deps: ConsoleDeps): void {
  const log = deps.invoicing.deliveries;
  const endpoints = deps.invoicing.endpoints;
  const canWrite = (req: FastifyRequest) => can(userOf(req).member, 'delivery.redeliver');

  const showList = async (req: FastifyRequest, reply: FastifyReply, q: { status?: string; kind?: string; notice?: string }, error?: string, httpStatus = 200, recovered?: RecoverResult) => {
    const user = userOf(req);
    const status = (['pending', 'delivered', 'failed'] as const).find((s) => s === q.status);
    const kind = (['callback', 'webhook'] as const).find((k) => k === q.kind);
    const filter = { ...(status ? { status } : {}), ...(kind ? { kind } : {}) };
    // "실패" is the one definition of failing (failed, or retrying after a failure): what the
    // overview counts and recovery re-queues.
    const { deliveries } = await log.list(user.store.code, { ...(status === 'failed' ? { failing: true } : filter), ...(kind ? { kind } : {}), size: String(LIST_SIZE), failedFirst: true });
    // Recovery's default: the overview's window (the last 7 days), as the datetime-local field writes it (KST).
    const recoverSince = kstIso(deps.clock.nowMs() - FAILING_WINDOW_MS).slice(0, 16);
    const body = deliveriesBody({ rows: deliveries, filter, canWrite: canWrite(req), csrf: await csrfToken(req, reply), recoverSince, error, recovered });
    return renderPage(req, reply, { title: '콜백·웹훅', active: 'deliveries', body, notice: NOTICES[q.notice ?? ''] }, httpStatus);
  };

  const showEndpoints = async (req: FastifyRequest, reply: FastifyReply, extra: { secret?: { id: string; value: string }; values?: EndpointValues; errors?: FieldErrors; notice?: string } = {}, status = 200) => {
    const user = userOf(req);
    const body = endpointsBody({ endpoints: await endpoints.list(user.store.code), canWrite: canWrite(req), csrf: await csrfToken(req, reply), events: ENDPOINT_EVENTS, ...extra });
    return renderPage(req, reply, { title: '웹훅 엔드포인트', active: 'deliveries', body, notice: extra.notice }, status);
  };

  app.get('/deliveries', { schema: { hide: true, querystring: Type.Object({ status: Str(20), kind: Str(20), notice: Str(30) }) } }, async (req, reply) => showList(req, reply, req.query));

  app.post('/deliveries/recover', { schema: { hide: true, body: Type.Object({ ...Csrf, since: Str(40) }) } }, async (req, reply) => {
    const user = userOf(req);
    try {
      const r = await log.recover(user.store.code, req.body.since ?? '');
      await deps.audit.record(user, req.ip, 'delivery.recover', req.body.since ?? '', String(r.requeued));
      // The answer itself says what was re-queued and which were skipped and why (a second
      // press re-queues nothing twice: what is already on its way is skipped).
      return showList(req, reply, { status: 'failed' }, undefined, 200, r);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'VALIDATION') return showList(req, reply, {}, '복구할 시작 시각을 확인해 주세요.', 400);
      throw err;
    }
  });

  app.get('/deliveries/endpoints', { schema: { hide: true, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) =>
    showEndpoints(req, reply, { notice: NOTICES[req.query.notice ?? ''] }));

  app.post('/deliveries/endpoints', {
    bodyLimit: FORM_BODY_LIMIT,
    schema: { hide: true, body: Type.Object({ ...Csrf, url: Text(), events: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Array(Type.String({ maxLength: 10_000 }), { maxItems: 50 })])) }) },
  }, async (req, reply) => {
    const user = userOf(req);
    const url = (req.body.url ?? '').trim();
    const events = [req.body.events ?? []].flat().filter((e): e is EndpointEvent => (ENDPOINT_EVENTS as readonly string[]).includes(e));
    const values = { url: req.body.url, events };
    // Both fields at once, beside each.
    const errors = textProblems(req.body, { url: { label: '주소', max: 500, required: true } });
    if (!errors.url && !/^https:\/\/[^\s]+$/.test(url)) errors.url = '주소는 https://로 시작해야 합니다 (예: https://academy.example.com/hooks/sunap).';
    if (events.length === 0) errors.events = '받을 이벤트를 하나 이상 골라 주세요.';
    if (hasErrors(errors)) return showEndpoints(req, reply, { values, errors }, 400);
    try {
      const ep = await endpoints.create(user.store.code, { url, events });
      await deps.audit.record(user, req.ip, 'endpoint.create', ep.id, url);
      return showEndpoints(req, reply, { secret: { id: ep.id, value: ep.secret }, notice: '엔드포인트를 등록했습니다.' });
    } catch (err) {
      return showEndpoints(req, reply, { values, errors: fieldErrorsOf(err) }, 400);
    }
  });

  app.post('/deliveries/endpoints/:id/rotate', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const ep = await endpoints.rotate(user.store.code, req.params.id);
    await deps.audit.record(user, req.ip, 'endpoint.rotate', ep.id);
    return showEndpoints(req, reply, { secret: { id: ep.id, value: ep.secret }, notice: '시크릿을 교체했습니다. 24시간 동안 두 시크릿으로 서명합니다.' });
  });

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    app.post(`/deliveries/endpoints/:id/${action}`, { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
      const user = userOf(req);
      await endpoints.update(user.store.code, req.params.id, { enabled });
      await deps.audit.record(user, req.ip, enabled ? 'endpoint.enable' : 'endpoint.disable', req.params.id);
      return seeOther(reply, `/console/deliveries/endpoints?notice=${action}d`);
    });
  }

  app.post('/deliveries/endpoints/:id/test', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const { deliveryId } = await endpoints.sendTest(user.store.code, req.params.id);
    await deps.audit.record(user, req.ip, 'endpoint.test', req.params.id);
    return seeOther(reply, `/console/deliveries/${deliveryId}?notice=test`);
  });

  app.get('/deliveries/:id', { schema: { hide: true, params: IdParams, querystring: Type.Object({ notice: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    if (!/^dlv_[0-9a-f]{32}$/.test(req.params.id)) throw new AppError('NOT_FOUND', 'delivery: not found');
    const d = await log.detail(user.store.code, req.params.id);
    return renderPage(req, reply, { title: '전송 기록', active: 'deliveries', body: deliveryBody({ d, canWrite: canWrite(req), csrf: await csrfToken(req, reply) }), notice: NOTICES[req.query.notice ?? ''] });
  });

  app.post('/deliveries/:id/redeliver', { schema: { hide: true, params: IdParams, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    if (!/^dlv_[0-9a-f]{32}$/.test(req.params.id)) throw new AppError('NOT_FOUND', 'delivery: not found');
    const d = await log.redeliver(user.store.code, req.params.id);
    await deps.audit.record(user, req.ip, 'delivery.redeliver', d.id, d.number);
    return seeOther(reply, `/console/deliveries/${d.id}?notice=redelivered`);
  });
}
