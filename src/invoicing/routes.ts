import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { appEnvelope } from '../platform/errors.js';
import { dropNulls, isPlainObject } from '../platform/validation.js';
import type { AuthService } from './accounts.js';
import * as repo from './repository.js';
import type { Account } from './repository.js';
import {
  BillDetail, BillList, BillParams, CreateBillBody, Envelope, ErrorEnvelope, ListQuery, LoginBody, PointsView, RefreshBody,
  ResendBody, ResendSummary, SalesSummary, SummaryQuery, TokenPair,
} from './schemas.js';
import { tooManyRequests } from './public.js';
import type { InvoiceService } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The invoicing account behind x-access-token (set by the auth hook of /app/v1 routes). */
    account?: Account;
  }
}

const tags = ['Invoicing'];
const security = [{ accessToken: [] as string[] }];

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorEnvelope]));

function ok(req: FastifyRequest, data: unknown = null) {
  req.resultCode = '0';
  return appEnvelope(0, 'SUCCESS', data);
}

/**
 * Thin routes (docs/architecture.md): validate with the schema on the route, authorize with
 * the token hook, one service call. Authentication runs first (onRequest), so a request
 * without a valid token learns nothing about validation. SDK-style nulls are dropped before
 * validation (preValidation), so `field: null` reads as absent everywhere.
 */
export function invoicingRoutes(app: FastifyInstance, auth: AuthService, svc: InvoiceService): void {
  const { config } = app.sunap;
  const authed = async (req: FastifyRequest) => {
    req.account = await auth.authenticate(req.headers['x-access-token']);
  };
  const nulls = async (req: FastifyRequest) => {
    if (isPlainObject(req.body)) req.body = dropNulls(req.body);
  };
  const account = (req: FastifyRequest) => req.account!;
  const route = (summary: string, schema: Record<string, unknown>, opts: { public?: boolean; description?: string } = {}): RouteShorthandOptions => ({
    onRequest: opts.public ? undefined : authed,
    preValidation: nulls,
    schema: { tags, summary, description: opts.description, ...(opts.public ? {} : { security }), ...schema },
  });

  // ---- auth ------------------------------------------------------------------------------------

  // Besides the per-email throttle (AuthService), one address may try only so many logins a
  // minute, whatever the emails: spraying passwords over many accounts is slowed too. The
  // counters live in process memory, so each instance allows this much.
  const loginLimit = config.loginRateLimit > 0
    ? { config: { rateLimit: { max: config.loginRateLimit, timeWindow: 60_000, errorResponseBuilder: tooManyRequests } } }
    : {};
  app.post('/app/v1/auth/login', {
    ...route('Log in with email and password', {
      body: LoginBody, response: { 200: Envelope(TokenPair), ...errors(400, 401, 403, 429) },
    }, {
      public: true,
      description: `Access token valid 1 hour (accessTokenExpiresIn 3600), refresh token 30 days. Wrong email or password: 401 / -3. After 5 failures for one email, further tries wait a lockout that doubles from 30 seconds (429 / -29). ${config.loginRateLimit > 0 ? `At most ${config.loginRateLimit} tries a minute per client address (429 / -29).` : ''}`.trim(),
    }),
    ...loginLimit,
  }, async (req) => {
    const b = req.body as Static<typeof LoginBody>;
    return ok(req, await auth.login(b.email, b.password));
  });

  app.post('/app/v1/auth/refresh', route('Exchange a refresh token for a new pair', {
    body: RefreshBody, response: { 200: Envelope(TokenPair), ...errors(400, 401, 403) },
  }, {
    public: true,
    description: 'A refresh token works once. Reusing a rotated one revokes its whole family (every access and refresh token issued from the same login). Unknown, expired or used: 401 / -3.',
  }), async (req) => ok(req, await auth.refresh((req.body as Static<typeof RefreshBody>).refreshToken)));

  // ---- points ----------------------------------------------------------------------------------

  app.get('/app/v1/points/me', route('Send-point balance and the price of one message per channel', {
    response: { 200: Envelope(PointsView), ...errors(401, 403) },
  }), async (req) => ok(req, { balance: await repo.balance(app.sunap.store.db, account(req).id), costs: { ...config.costs } }));

  // ---- invoices --------------------------------------------------------------------------------

  app.post('/app/v1/sales/bill', route('Create invoices and send them', {
    body: CreateBillBody, response: { 200: Envelope(Type.Null()), ...errors(400, 401, 403, 409) },
  }, {
    description: 'Acceptance only (result_data null): one invoice per member, PENDING, send WAITING. Points for every recipient are reserved at once (ALIMTALK price, or the SMS price for SMS and ALIMTALK_THEN_SMS) or the request is refused with 409 / -21. requestId: the same content again creates nothing (0), other content 409 / -22, more than one member 400 / -23. Read the outcome with the list or detail.',
  }), async (req) => {
    await svc.create(account(req), req.body as CreateBillBody);
    return ok(req);
  });

  app.get('/app/v1/sales/bill', route('List invoices, newest first', {
    querystring: ListQuery, response: { 200: Envelope(BillList), ...errors(400, 401, 403) },
  }, { description: 'month (yyyy-MM, KST creation month; all months when omitted), page from 1, size at most 100 (default 20). Deleted invoices are not listed.' }),
  async (req) => ok(req, await svc.list(account(req).id, req.query as Static<typeof ListQuery>)));

  app.get('/app/v1/sales/summary', route('Sales totals of a month', {
    querystring: SummaryQuery, response: { 200: Envelope(SalesSummary), ...errors(400, 401, 403) },
  }, { description: 'A payment counts in the KST month it was paid, a cancellation in the month it was cancelled; netAmount = paid − cancelled. month defaults to the current KST month.' }),
  async (req) => ok(req, await svc.summary(account(req).id, (req.query as Static<typeof SummaryQuery>).month)));

  app.post('/app/v1/sales/bill/resend', route('Send invoices again', {
    body: ResendBody, response: { 200: Envelope(Type.Array(ResendSummary)), ...errors(400, 401, 403, 409) },
  }, { description: 'Only already-sent unpaid invoices, with the same link and their stored channel; the others are SKIPPED with a reason. Points of every resendable one are reserved at once or the request is refused (409 / -21); a failed send returns its points.' }),
  async (req) => ok(req, await svc.resend(account(req), (req.body as Static<typeof ResendBody>).billIds)));

  app.get('/app/v1/sales/bill/:id', route('Invoice detail', {
    params: BillParams, response: { 200: Envelope(BillDetail), ...errors(400, 401, 403, 404) },
  }, { description: 'id is the uniqueId or the numeric id. Another account\'s or a deleted invoice: 404 / -10.' }),
  async (req) => ok(req, await svc.detail(account(req).id, (req.params as Static<typeof BillParams>).id)));

  app.delete('/app/v1/sales/bill/:id', route('Delete an unpaid invoice', {
    params: BillParams, response: { 200: Envelope(Type.Null()), ...errors(400, 401, 403, 404, 409) },
  }, { description: 'PENDING only (otherwise 409 / -24). The gateway payment becomes STORE_DELETE so the link no longer pays; the invoice disappears from the list, the detail and the public lookup.' }),
  async (req) => {
    await svc.remove(account(req).id, (req.params as Static<typeof BillParams>).id);
    return ok(req);
  });

  app.put('/app/v1/sales/bill/:id', route('Cancel (refund) a paid invoice in full', {
    params: BillParams, response: { 200: Envelope(BillDetail), ...errors(400, 401, 403, 404, 409, 502) },
  }, { description: 'DONE → CANCELED through a full card cancel; answers the detail. A CANCELED invoice answers its detail again. PENDING: 409 / -24. A card cancel failure: 502 / -30, the invoice stays DONE.' }),
  async (req) => ok(req, await svc.cancel(account(req).id, (req.params as Static<typeof BillParams>).id)));

  app.post('/app/v1/sales/bill/:id/refresh-status', route('Refresh the delivery status of the sent messages', {
    params: BillParams, response: { 200: Envelope(BillDetail), ...errors(400, 401, 403, 404) },
  }, { description: 'Asks the messaging provider about every accepted message of the invoice and updates sendHistories[].deliveryStatus; no body; answers the detail.' }),
  async (req) => ok(req, await svc.refreshStatus(account(req).id, (req.params as Static<typeof BillParams>).id)));
}
