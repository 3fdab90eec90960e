import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { APPROVED_MSG, returnUrlFor, type GatewayService, type Payment } from '../gateway/index.js';
import type { SandboxCheckout } from '../ports/sandbox-checkout.js';
import { renderAccount, renderMethods } from './checkout-page.js';
import { checkoutRoutes } from './checkout-routes.js';
import type { Clock } from '../platform/clock.js';
import type { App } from '../platform/http.js';
import { SUNAP_CSS, SUNAP_CSS_ETAG } from './assets.js';
import { field, parseCardForm } from './card-form.js';
import { pageErrorHandler } from './error-page.js';
import { pageHeaders } from './html.js';
import { PORTONE_LAUNCHER_ETAG, PORTONE_LAUNCHER_JS } from './portone-launcher.js';
import { sandboxWindowRoutes } from './sandbox-window.js';
import { TOSS_LAUNCHER_ETAG, TOSS_LAUNCHER_JS } from './toss-launcher.js';
import {
  formTargets, pageLink, paymentPagePaths, renderNotFound, renderPaymentForm, renderProblem, renderReceipt, renderStatePage,
  type FormState, type PageContext,
} from './payment-page.js';

export interface PaymentPageDeps {
  gateway: GatewayService;
  clock: Clock;
  paymentPageUrl: string;
  sandbox: boolean;
  /** The sandbox processor, whose window these routes serve (sandbox mode only). */
  sandboxWindow: SandboxCheckout | null;
  /** The due date of the invoice a payment is for (null: none), shown with the order. */
  dueDateOf?: (payment: Payment) => Promise<string | null>;
}

/**
 * Payment page (docs/reference.md, "Payment page"): GET `{payment_page_url}?tid&token` shows the form, the receipt or
 * the payment's state; POST `{path}/pay` takes the urlencoded card form. Registered encapsulated
 * (app.register), so the HTML error handler below applies to these routes only.
 *
 * Card data (number, expiry, password digits, birth date) lives only in this request: it goes to
 * gateway.pay and nowhere else. Nothing here logs a request body or a field of it, and the form
 * is never re-rendered with those values.
 */
export async function pageRoutes(app: App, deps: PaymentPageDeps): Promise<void> {
  const { gateway, clock, sandbox } = deps;
  const paths = paymentPagePaths(deps.paymentPageUrl);

  const page = (reply: FastifyReply, status: number, body: string, targets: string[] = []) =>
    reply.code(status).headers(pageHeaders(targets)).send(body);
  const notFound = (reply: FastifyReply) => page(reply, 404, renderNotFound());

  // Body parse failures (wrong content type, too large) and anything unexpected: an HTML page,
  // never the JSON envelope, and never the request body in the log.
  app.setErrorHandler(pageErrorHandler({ render: renderProblem }));

  app.get('/assets/sunap.css', { schema: { hide: true } }, async (req, reply) => {
    // The URL is fixed by layout() (no version in it), so a week plus an ETag rather than "immutable".
    reply.header('cache-control', 'public, max-age=604800').header('etag', SUNAP_CSS_ETAG);
    if (req.headers['if-none-match'] === SUNAP_CSS_ETAG) return reply.code(304).send();
    return reply.type('text/css; charset=utf-8').send(SUNAP_CSS);
  });

  app.get('/assets/checkout/toss.js', { schema: { hide: true } }, async (req, reply) => {
    reply.header('cache-control', 'public, max-age=604800').header('etag', TOSS_LAUNCHER_ETAG);
    if (req.headers['if-none-match'] === TOSS_LAUNCHER_ETAG) return reply.code(304).send();
    return reply.type('text/javascript; charset=utf-8').send(TOSS_LAUNCHER_JS);
  });

  // PortOne's window launcher (src/pages/portone-launcher.ts): the window page loads it with its nonce.
  app.get('/assets/checkout/portone.js', { schema: { hide: true } }, async (req, reply) => {
    reply.header('cache-control', 'public, max-age=604800').header('etag', PORTONE_LAUNCHER_ETAG);
    if (req.headers['if-none-match'] === PORTONE_LAUNCHER_ETAG) return reply.code(304).send();
    return reply.type('text/javascript; charset=utf-8').send(PORTONE_LAUNCHER_JS);
  });

  const formState = (tid: string, token: string, over: Partial<FormState> = {}): FormState => ({ tid, token, action: paths.pay, ...over });

  /**
   * What a GET shows for a payment in any state; also where a post lands when the payment moved
   * on. A waiting payment shows its open virtual account, a key-in store's card form, or the
   * methods the store offers.
   */
  const showPayment = async (reply: FastifyReply, given: PageContext, tid: string, token: string, over: { alert?: string; notice?: string; status?: number } = {}) => {
    const p = given.payment;
    const ctx: PageContext = { ...given, dueDate: given.dueDate ?? (p.state === 'STORE_REQUEST' ? await deps.dueDateOf?.(p) : null) };
    switch (p.state) {
      case 'STORE_REQUEST': {
        if (p.vbank_account) {
          const depositAction = sandbox && p.processor === 'sandbox' ? paths.sandboxDeposit : null;
          return page(reply, over.status ?? 200, renderAccount(ctx, { link: { tid, token }, closeAction: paths.closeAccount, depositAction, alert: over.alert }));
        }
        const way = await gateway.storeWay(p.store_code);
        if (way.way === 'key-in') return page(reply, over.status ?? 200, renderPaymentForm(ctx, formState(tid, token, { alert: over.alert })), formTargets(p));
        return page(reply, over.status ?? 200, renderMethods(ctx, { methods: way.methods, action: paths.begin, link: { tid, token }, alert: over.alert, notice: over.notice }));
      }
      case 'APPROVE_COMPLETE':
        return page(reply, 200, renderReceipt(ctx, returnUrlFor(p, '0000', APPROVED_MSG)));
      case 'CANCEL_COMPLETE':
      case 'CANCEL_FAIL':
      case 'STORE_DELETE':
        return page(reply, 200, renderStatePage({ ...ctx, payment: { ...p, state: p.state } }));
      default: {
        const unknown: never = p.state;
        throw new Error(`no page for payment state ${String(unknown)}`);
      }
    }
  };

  // Anything may arrive in the query (repeated or missing fields): the lookup treats what is not one string as not found.
  const PageQuery = Type.Object({ tid: Type.Optional(Type.Unknown()), token: Type.Optional(Type.Unknown()) });
  app.get(paths.page, { schema: { hide: true, querystring: PageQuery } }, async (req, reply) => {
    const { tid, token } = req.query;
    const found = await gateway.paymentForPage(tid, token);
    if (!found) return notFound(reply);
    return showPayment(reply, { ...found, sandbox }, found.payment.id, String(token));
  });

  app.post(paths.pay, { schema: { hide: true } }, async (req, reply) => {
    const tid = field(req.body, 'tid');
    const token = field(req.body, 'token');
    const found = await gateway.paymentForPage(tid, token);
    if (!found) return notFound(reply);
    const ctx: PageContext = { ...found, sandbox, dueDate: await deps.dueDateOf?.(found.payment) };
    const receipt = pageLink(paths.page, tid, token);
    const again = (status: number, payment: Payment, over: Partial<FormState>) =>
      page(reply, status, renderPaymentForm({ ...ctx, payment }, formState(tid, token, over)), formTargets(payment));

    // A second post for a paid (or closed) payment shows where it stands; it never pays again.
    if (found.payment.state !== 'STORE_REQUEST') return reply.code(303).headers(pageHeaders()).header('location', receipt).send();
    // A store that takes cards through a window never reads a card form: nothing of it is parsed or passed on.
    if ((await gateway.storeWay(found.payment.store_code)).way !== 'key-in') return reply.code(303).headers(pageHeaders()).header('location', receipt).send();

    const form = parseCardForm(req.body, found.payment.amount, clock.nowMs());
    if (!form.ok) return again(400, found.payment, { errors: form.errors, installment: form.installment });

    const r = await gateway.pay(found.payment.id, form.card, form.installment);
    switch (r.outcome) {
      case 'APPROVED': {
        const back = returnUrlFor(r.payment, '0000', APPROVED_MSG);
        // form-action of the page that posted lists RETURN_URL's origin, so this redirect is allowed.
        return reply.code(303).headers(pageHeaders(formTargets(r.payment))).header('location', back ?? receipt).send();
      }
      case 'DECLINED':
      case 'ERROR':
        return again(200, r.payment, { alert: `결제가 승인되지 않았습니다: ${r.message}. 다른 카드로 다시 시도해 주세요.`, installment: form.installment });
      case 'INVALID':
        return again(400, r.payment, { errors: { installment: `할부 기간: ${r.message}` }, installment: '00' });
      case 'PENDING':
        // The attempt stays open until a look-up settles it; paying again meanwhile cannot charge twice.
        return again(202, r.payment, {
          alert: `${r.message}. 카드가 두 번 청구되지 않습니다. 1분쯤 뒤에 결제 링크를 다시 열어 결과를 확인해 주세요.`, installment: form.installment,
        });
      case 'CONFIRMING':
        // This card was not sent: another attempt on the payment is being settled first.
        return again(202, r.payment, {
          alert: `${r.message}. 이 카드로는 결제하지 않았습니다. 잠시 후 결제 링크를 다시 열어 결과를 확인해 주세요.`, installment: form.installment,
        });
      case 'STATE':
        if (r.payment.state === 'STORE_REQUEST') {
          return again(409, r.payment, { alert: '이 결제는 지금 다른 창에서 처리 중입니다. 잠시 후 결제 링크를 다시 열어 확인해 주세요.', installment: form.installment });
        }
        return reply.code(303).headers(pageHeaders()).header('location', receipt).send();
      default: {
        const unknown: never = r;
        throw new Error(`unhandled pay outcome ${(unknown as { outcome: string }).outcome}`);
      }
    }
  });

  checkoutRoutes(app, { gateway, paths, sandbox, page, notFound, showPayment });
  if (deps.sandboxWindow) {
    const formTargetsOf = async (orderId: string) => {
      const a = await gateway.orderOf(orderId);
      const p = a && (await gateway.findById(a.payment_id));
      return p ? formTargets(p) : [];
    };
    sandboxWindowRoutes(app, { sandbox: deps.sandboxWindow, path: paths.sandboxWindow, formTargets: formTargetsOf });
  }
}
