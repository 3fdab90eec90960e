import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can, RECHARGE_LIMITS } from '../../invoicing/index.js';
import type { App } from '../../platform/http.js';
import { fieldErrorsOf, numberField, type FieldErrors } from '../field-errors.js';
import { Csrf, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { pointsBody } from '../views/points.js';

const PAGE = 50;

/** Points (docs/console.md, "Points"): balance, the ledger linked to invoices, recharges. */
export function pointsRoutes(app: App, deps: ConsoleDeps): void {
  const inv = deps.invoicing;
  const show = async (req: FastifyRequest, reply: FastifyReply, q: { before?: string; notice?: string }, form?: { points?: string; errors: FieldErrors }, status = 200) => {
    const user = userOf(req);
    const before = q.before && /^\d{1,15}$/.test(q.before) ? Number(q.before) : undefined;
    const page = await inv.console.ledger(user.tenant.id, before, PAGE);
    const notice = { credited: '포인트를 충전했습니다.', paid: '결제가 끝나면 바로 충전됩니다. 잠시 후 새로 고쳐 주세요.' }[q.notice ?? ''];
    const body = pointsBody({
      balance: await inv.invoices.balance(user.tenant.id), costs: deps.costs, lines: page.lines, recharges: await inv.recharges.recent(user.tenant.id),
      nextHref: page.next ? `/console/points?before=${page.next}` : null, firstHref: before ? '/console/points' : null,
      mode: inv.recharges.mode(), canRecharge: can(user.member, 'points.recharge'), csrf: await csrfToken(req, reply), limits: RECHARGE_LIMITS, points: form?.points, errors: form?.errors,
    });
    return renderPage(req, reply, { title: '포인트', active: 'points', body, notice }, status);
  };

  // `recharge` is the id the payment page brings the merchant back with: the page only shows
  // where the recharge stands; crediting happens with the approval, never here.
  app.get('/points', { schema: { hide: true, querystring: Type.Object({ before: Str(20), notice: Str(20), recharge: Str(64) }) } }, async (req, reply) => {
    const user = userOf(req);
    let notice = req.query.notice;
    if (req.query.recharge) {
      const r = await inv.recharges.find(user.tenant.id, req.query.recharge);
      notice = r?.status === 'CREDITED' ? 'credited' : r ? 'paid' : notice;
    }
    return show(req, reply, { before: req.query.before, notice });
  });

  app.post('/points/recharge', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, body: Type.Object({ ...Csrf, points: Text() }) } }, async (req, reply) => {
    const user = userOf(req);
    const typed = req.body.points;
    const checked = numberField(typed, { label: '충전할 포인트', min: RECHARGE_LIMITS.min, max: RECHARGE_LIMITS.max, unit: 'P', required: true });
    if (checked.error || checked.value === undefined) return show(req, reply, {}, { points: typed, errors: { points: checked.error ?? '' } }, 400);
    const points = checked.value;
    try {
      const r = await inv.recharges.start(user.tenant, points);
      await deps.audit.record(user, req.ip, 'points.recharge', r.recharge.id, `${points}P ${r.kind === 'PAY' ? '카드 결제 시작' : '충전'}`);
      if (r.kind === 'PAY') return seeOther(reply, r.paymentUrl);
      return seeOther(reply, '/console/points?notice=credited');
    } catch (err) {
      return show(req, reply, {}, { points: typed, errors: fieldErrorsOf(err) }, 400);
    }
  });
}
