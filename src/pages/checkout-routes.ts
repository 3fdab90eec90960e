import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { APPROVED_MSG, returnUrlFor, type GatewayService, type ReturnResult } from '../gateway/index.js';
import type { App } from '../platform/http.js';
import { PAY_METHODS, type PayMethod } from '../ports/checkout.js';
import { field } from './card-form.js';
import { renderScriptWindow } from './checkout-page.js';
import { checkoutCsp, pageHeaders } from './html.js';
import { formTargets, pageLink, type PagePaths, type PageContext } from './payment-page.js';

/**
 * The checkout's routes beside the payment page (docs/reference.md, "Payment page"):
 * - POST `{page}/begin` (a method chosen): one order, then the processor's window (a redirect to a
 *   page without script, or the live processor's script page);
 * - GET `{page}/return/success|fail` (the window sent the browser back): confirm once, then the
 *   receipt or RETURN_URL, the account page, or the methods again with the reason in Korean;
 * - POST `{page}/close-account` (pay another way while an account is open);
 * - POST `{page}/sandbox-deposit` (sandbox only: the bank deposits).
 * A reload, the back button or a second return of the same order confirms nothing again.
 */
export interface CheckoutRouteDeps {
  gateway: GatewayService;
  paths: PagePaths;
  sandbox: boolean;
  page: (reply: FastifyReply, status: number, body: string, targets?: string[]) => FastifyReply;
  notFound: (reply: FastifyReply) => FastifyReply;
  showPayment: (reply: FastifyReply, ctx: PageContext, tid: string, token: string, over?: { alert?: string; notice?: string; status?: number }) => Promise<FastifyReply>;
}

export const WINDOW_CLOSED = '결제를 취소했습니다. 다른 결제수단을 고르거나 다시 시도해 주세요.';

export function checkoutRoutes(app: App, d: CheckoutRouteDeps): void {
  const { gateway, paths } = d;
  const see = (reply: FastifyReply, location: string, targets: string[] = []) => reply.code(303).headers(pageHeaders(targets)).header('location', location).send();

  /** The link's payment from a form post (tid, token), or a 404 page. */
  const fromForm = async (body: unknown) => {
    const tid = field(body, 'tid');
    const token = field(body, 'token');
    const found = await gateway.paymentForPage(tid, token);
    return found ? { found, tid, token, ctx: { ...found, sandbox: d.sandbox } as PageContext } : null;
  };

  app.post(paths.begin, { schema: { hide: true } }, async (req, reply) => {
    const f = await fromForm(req.body);
    if (!f) return d.notFound(reply);
    const back = pageLink(paths.page, f.tid, f.token);
    const method = field(req.body, 'method');
    if (!(PAY_METHODS as readonly string[]).includes(method)) return d.showPayment(reply, f.ctx, f.tid, f.token, { alert: '결제수단을 다시 선택해 주세요.', status: 400 });
    const r = await gateway.beginCheckout(f.found.payment.id, method as PayMethod);
    switch (r.outcome) {
      case 'WINDOW':
        if (r.window.kind === 'redirect') return see(reply, r.window.url);
        {
          const nonce = randomBytes(18).toString('base64url');
          const csp = checkoutCsp(nonce, r.window.hosts, formTargets(f.found.payment));
          return reply.code(200).headers(pageHeaders([], csp)).send(renderScriptWindow(f.ctx, r.window, nonce, back));
        }
      case 'STATE':
        return see(reply, back);
      case 'REFUSED':
        return d.showPayment(reply, { ...f.ctx, payment: r.payment }, f.tid, f.token, { alert: r.message, status: 409 });
    }
  });

  // Whatever the processor appends (and repeats) comes in the query: only single strings are read.
  const ReturnQuery = Type.Record(Type.String(), Type.Unknown());
  app.get(`${paths.returns}/:outcome`, { schema: { hide: true, params: Type.Object({ outcome: Type.String({ maxLength: 10 }) }), querystring: ReturnQuery } }, async (req, reply) => {
    const q: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') q[k] = v;
    const outcome = req.params.outcome;
    const found = await gateway.paymentForPage(q.tid, q.token);
    if (!found || (outcome !== 'success' && outcome !== 'fail') || !q.order) return d.notFound(reply);
    const { tid, token, order, ...processorParams } = q;
    const back = pageLink(paths.page, tid!, token!);
    const r = await gateway.returnFromWindow(found.payment.id, order, outcome, processorParams);
    return answerReturn(reply, r, { ...found, sandbox: d.sandbox }, tid!, token!, back);
  });

  const answerReturn = async (reply: FastifyReply, r: ReturnResult, ctx: PageContext, tid: string, token: string, back: string) => {
    switch (r.outcome) {
      case 'APPROVED': {
        const to = returnUrlFor(r.payment, '0000', APPROVED_MSG);
        return see(reply, to ?? back, formTargets(r.payment));
      }
      case 'ISSUED':
      case 'CLOSED':
      case 'STATE':
      case 'UNKNOWN':
        return see(reply, back);
      case 'DECLINED':
        return d.showPayment(reply, { ...ctx, payment: r.payment }, tid, token, { alert: r.message === '결제를 취소했습니다' ? WINDOW_CLOSED : `결제가 승인되지 않았습니다: ${r.message}. 다른 결제수단으로 다시 시도해 주세요.` });
      case 'PENDING':
        return d.showPayment(reply, { ...ctx, payment: r.payment }, tid, token, {
          notice: `${r.message}. 두 번 청구되지 않습니다. 1분쯤 뒤에 결제 링크를 다시 열어 결과를 확인해 주세요.`, status: 202,
        });
      case 'BUSY':
        return d.showPayment(reply, { ...ctx, payment: r.payment }, tid, token, { alert: '이 결제는 지금 다른 창에서 처리 중입니다. 잠시 후 다시 시도해 주세요.', status: 409 });
      case 'SEEN': {
        // A reload of a return already handled: the payment as it stands, and why that order did not pay.
        if (r.payment.state !== 'STORE_REQUEST' || r.payment.vbank_account) return see(reply, back);
        const ended = r.attempt.status === 'DECLINED' || r.attempt.status === 'ABANDONED' ? r.attempt.message : null;
        if (ended === '결제를 취소했습니다') return d.showPayment(reply, { ...ctx, payment: r.payment }, tid, token, { alert: WINDOW_CLOSED });
        return d.showPayment(reply, { ...ctx, payment: r.payment }, tid, token, ended ? { alert: `지난 결제 시도는 결제되지 않았습니다: ${ended}.` } : {});
      }
    }
  };

  app.post(paths.closeAccount, { schema: { hide: true } }, async (req, reply) => {
    const f = await fromForm(req.body);
    if (!f) return d.notFound(reply);
    const r = await gateway.closeAccount(f.found.payment.id);
    if (r.outcome === 'FAILED') return d.showPayment(reply, { ...f.ctx, payment: r.payment }, f.tid, f.token, { alert: r.message, status: 409 });
    return see(reply, pageLink(paths.page, f.tid, f.token));
  });

  if (d.sandbox) {
    app.post(paths.sandboxDeposit, { schema: { hide: true } }, async (req, reply) => {
      const f = await fromForm(req.body);
      if (!f) return d.notFound(reply);
      await gateway.sandboxDeposit(f.found.payment);
      return see(reply, pageLink(paths.page, f.tid, f.token));
    });
  }
}
