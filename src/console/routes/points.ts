import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can, RECHARGE_LIMITS } from '../../invoicing/index.js';
import { AppError } from '../../platform/errors.js';
import type { App } from '../../platform/http.js';
import { Csrf, Str, wholeNumber } from '../forms.js';
import { csrfToken, renderPage, seeOther, userOf, type ConsoleDeps } from '../http.js';
import { pointsBody } from '../views/points.js';

const PAGE = 50;

/** Points (docs/console.md, "Points"): balance, the ledger linked to invoices, recharges. */
export function pointsRoutes(app: App, deps: ConsoleDeps): void {
  const inv = deps.invoicing;
  const show = async (req: FastifyRequest, reply: FastifyReply, q: { before?: string; notice?: string }, error?: string, status = 200) => {
    const user = userOf(req);
    const before = q.before && /^\d{1,15}$/.test(q.before) ? Number(q.before) : undefined;
    const page = await inv.console.ledger(user.tenant.id, before, PAGE);
    const notice = { credited: '포인트를 충전했습니다.', paid: '결제가 끝나면 바로 충전됩니다. 잠시 후 새로 고쳐 주세요.' }[q.notice ?? ''];
    const body = pointsBody({
      balance: await inv.invoices.balance(user.tenant.id), costs: deps.costs, lines: page.lines, recharges: await inv.recharges.recent(user.tenant.id),
      nextHref: page.next ? `/console/points?before=${page.next}` : null, firstHref: before ? '/console/points' : null,
      mode: inv.recharges.mode(), canRecharge: can(user.member, 'points.recharge'), csrf: await csrfToken(req, reply), limits: RECHARGE_LIMITS, error,
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

  app.post('/points/recharge', { schema: { hide: true, body: Type.Object({ ...Csrf, points: Str(20) }) } }, async (req, reply) => {
    const user = userOf(req);
    const points = wholeNumber(req.body.points);
    if (points === undefined) return show(req, reply, {}, '충전할 포인트를 숫자로 적어 주세요.', 400);
    try {
      const r = await inv.recharges.start(user.tenant, points);
      await deps.audit.record(user, req.ip, 'points.recharge', r.recharge.id, `${points}P ${r.kind === 'PAY' ? '카드 결제 시작' : '충전'}`);
      if (r.kind === 'PAY') return seeOther(reply, r.paymentUrl);
      return seeOther(reply, '/console/points?notice=credited');
    } catch (err) {
      if (err instanceof AppError && err.kind === 'VALIDATION') return show(req, reply, {}, `${RECHARGE_LIMITS.min.toLocaleString('ko-KR')}P에서 ${RECHARGE_LIMITS.max.toLocaleString('ko-KR')}P 사이로 적어 주세요.`, 400);
      throw err;
    }
  });
}
