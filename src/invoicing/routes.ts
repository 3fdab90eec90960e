import { Type } from '@sinclair/typebox';
import type { FastifyRequest, RouteShorthandOptions } from 'fastify';
import { AppError } from '../platform/errors.js';
import { API_ROUTES, can, requireEntries } from './access.js';
import { ok, type App } from '../platform/http.js';
import { dropNulls, isPlainObject } from '../platform/validation.js';
import type { EndpointService } from '../gateway/index.js';
import type { AuthService } from './accounts.js';
import type { DeliveryLog } from './delivery-log.js';
import { deliveryRoutes } from './delivery-routes.js';
import type { Billing } from './billing.js';
import { billingRoutes } from './billing-routes.js';
import type { Costs } from './points.js';
import type { Account } from './repository.js';
import {
  BillDetail, BillList, BillParams, CreateBillBody, Envelope, ErrorEnvelope, ListQuery, LoginBody, PointsView, RefreshBody,
  ResendBody, ResendSummary, SalesSummary, SummaryQuery, TokenPair,
} from './schemas.js';
import { DEFAULT_PAGE_SIZE, type InvoiceService } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The invoicing account whose data a /app/v1 call works on (the team's; set by the auth hook). */
    account?: Account;
    /** The account that signed in (its role decides what it may change). */
    member?: Account;
  }
}

const tags = ['Invoicing'];
const security = [{ accessToken: [] as string[] }];

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorEnvelope]));

export interface InvoicingRouteDeps {
  auth: AuthService;
  invoices: InvoiceService;
  costs: Costs;
  /** Logins a minute per client address (SUNAP_LOGIN_RATE_LIMIT); 0: none. */
  loginRateLimit: number;
  /** The store's callbacks and webhooks (src/invoicing/delivery-routes.ts). */
  deliveries: DeliveryLog;
  endpoints: EndpointService;
  /** Classes (src/invoicing/billing-routes.ts). */
  billing: Billing;
}

/**
 * Thin routes (docs/architecture.md): validate with the schema on the route, authorize with
 * the token hook (the member's role against the route's action in API_ROUTES), one service
 * call. Authentication runs first (onRequest), so a request without a valid token learns
 * nothing about validation. SDK-style nulls are dropped before
 * validation (preValidation), so `field: null` reads as absent everywhere.
 */
export function invoicingRoutes(app: App, deps: InvoicingRouteDeps): void {
  const { auth, invoices: svc } = deps;
  // Every /app/v1 route is an action of API_ROUTES (src/invoicing/access.ts), or the app does not start.
  requireEntries(app, API_ROUTES, { what: 'invoicing API', tableName: 'API_ROUTES (src/invoicing/access.ts)', covers: (url) => url.startsWith('/app/v1/') });
  // The token first (401 before 403), then the member's role against the route's action: a
  // viewer reads; what changes something needs a manager or an owner (the table says which).
  const authed = async (req: FastifyRequest) => {
    const { tenant, member } = await auth.authenticate(req.headers['x-access-token']);
    req.account = tenant;
    req.member = member;
    const access = req.routeOptions.config.access;
    if (!access) throw new AppError('FORBIDDEN', 'account: this call is not open to any role');
    if (!can(member, access.action)) throw new AppError('FORBIDDEN', member.role === 'viewer' ? 'account: a viewer may only read' : `account: this needs the ${access.role} role`);
  };
  const nulls = async (req: FastifyRequest) => {
    if (isPlainObject(req.body)) req.body = dropNulls(req.body);
  };
  const account = (req: FastifyRequest) => req.account!;
  /** The token check, then nulls dropped before validation; public routes skip the token check. */
  const hooks: Pick<RouteShorthandOptions, 'onRequest' | 'preValidation'> = { onRequest: authed, preValidation: nulls };
  const publicHooks: Pick<RouteShorthandOptions, 'preValidation'> = { preValidation: nulls };
  const doc = (summary: string, description: string | undefined, isPublic = false) => ({ tags, summary, description, ...(isPublic ? {} : { security }) });

  deliveryRoutes(app, { log: deps.deliveries, endpoints: deps.endpoints, hooks, storeOf: (req) => account(req).store_code });
  billingRoutes(app, { billing: deps.billing, clock: deps.billing.clock, hooks, accountOf: (req) => account(req).id, storeOf: (req) => account(req).store_code });

  // ---- auth ------------------------------------------------------------------------------------

  // Both throttles (per email, and per client address whatever the emails, so spraying
  // passwords over many accounts is slowed too) live in the database: AuthService.checkPassword.
  app.post('/app/v1/auth/login', {
    ...publicHooks,
    schema: {
      ...doc('Log in with email and password', `Access token valid 1 hour (accessTokenExpiresIn 3600), refresh token 30 days. Wrong email or password: 401 / -3. After 5 failures for one email, further tries wait a lockout that doubles from 30 seconds (429 / -29).${deps.loginRateLimit > 0 ? ` At most ${deps.loginRateLimit} tries a minute per client address (429 / -29).` : ''}`, true),
      body: LoginBody, response: { 200: Envelope(TokenPair), ...errors(400, 401, 403, 429) },
    },
  }, async (req) => ok(req, await auth.login(req.body.email, req.body.password, req.ip)));

  app.post('/app/v1/auth/refresh', {
    ...publicHooks,
    schema: {
      ...doc('Exchange a refresh token for a new pair', 'A refresh token works once. Reusing a rotated one revokes its whole family (every access and refresh token issued from the same login). Unknown, expired or used: 401 / -3.', true),
      body: RefreshBody, response: { 200: Envelope(TokenPair), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await auth.refresh(req.body.refreshToken)));

  app.post('/app/v1/auth/logout', {
    ...hooks,
    schema: {
      ...doc('Sign out', 'Revokes the access token presented and every token of its login: its refresh token and any rotated from it. Afterwards the access token answers -1 and the refresh token 401 / -3. No body.'),
      response: { 200: Envelope(Type.Null()), ...errors(401, 403) },
    },
  }, async (req) => {
    await auth.logout(req.headers['x-access-token']);
    return ok(req);
  });

  // ---- points ----------------------------------------------------------------------------------

  app.get('/app/v1/points/me', {
    ...hooks,
    schema: { ...doc('Send-point balance and the price of one message per channel', undefined), response: { 200: Envelope(PointsView), ...errors(401, 403) } },
  }, async (req) => ok(req, { balance: await svc.balance(account(req).id), costs: { ...deps.costs } }));

  // ---- invoices --------------------------------------------------------------------------------

  app.post('/app/v1/sales/bill', {
    ...hooks,
    schema: {
      ...doc('Create invoices and send them', 'Acceptance only (result_data null): one invoice per member, PENDING, send WAITING. Points for every recipient are reserved at once (ALIMTALK price, or the SMS price for SMS and ALIMTALK_THEN_SMS) or the request is refused with 409 / -21. requestId: the same content again creates nothing (0), other content 400 / -22, more than one member 400 / -23. dueDate (optional, yyyy-MM-dd, today to 365 days ahead) is shown in the message and on the pages. taxFreeAmount (optional, 0 to amount) is the VAT-exempt part, passed to the processor\'s window. Read the outcome with the list or detail.'),
      body: CreateBillBody,
      response: {
        200: Envelope(Type.Null()), ...errors(401, 403, 409),
        // As the real service's published OpenAPI lists it: one 400 for input errors and for a used requestId with other content.
        400: Type.Object({
          ...ErrorEnvelope.properties,
          result_code: Type.Integer({ description: '-20, -22 or -23 (docs/reference.md, "Invoicing: authentication and result_code values")', examples: [-22] }),
          result_msg: Type.String({ examples: ['requestId: a different invoice cannot be sent with the same requestId'] }),
        }, {
          description: 'Input error (-20), or the same requestId with a different payload (-22), or a requestId with more than one member (-23)',
          examples: [{ result_code: -22, result_msg: 'requestId: a different invoice cannot be sent with the same requestId', result_data: null }],
        }),
      },
    },
  }, async (req) => {
    await svc.create(account(req), req.body);
    return ok(req);
  });

  app.get('/app/v1/sales/bill', {
    ...hooks,
    schema: {
      ...doc('List invoices, newest first', `month (yyyy-MM, KST creation month; all months when omitted), page from 1, size at most 100 (default ${DEFAULT_PAGE_SIZE}), overdue=true for the unpaid past their due date (false: all others). Deleted invoices are not listed. Each entry carries dueDate (yyyy-MM-dd or null) and overdue.`),
      querystring: ListQuery, response: { 200: Envelope(BillList), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await svc.list(account(req).id, req.query)));

  app.get('/app/v1/sales/summary', {
    ...hooks,
    schema: {
      ...doc('Sales totals of a month', 'A payment counts in the KST month it was paid, a cancellation in the month it was cancelled; netAmount = paid − cancelled. month defaults to the current KST month.'),
      querystring: SummaryQuery, response: { 200: Envelope(SalesSummary), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await svc.summary(account(req).id, req.query.month)));

  app.post('/app/v1/sales/bill/resend', {
    ...hooks,
    schema: {
      ...doc('Send invoices again', 'Only already-sent unpaid invoices, with the same link and their stored channel; the others are SKIPPED with a reason. Points of every resendable one are reserved at once or the request is refused (409 / -21); a failed send returns its points.'),
      body: ResendBody, response: { 200: Envelope(Type.Array(ResendSummary)), ...errors(400, 401, 403, 409) },
    },
  }, async (req) => ok(req, await svc.resend(account(req), req.body.billIds)));

  app.get('/app/v1/sales/bill/:id', {
    ...hooks,
    schema: {
      ...doc('Invoice detail', 'id is the uniqueId or the numeric id. Another account\'s or a deleted invoice: 404 / -10.'),
      params: BillParams, response: { 200: Envelope(BillDetail), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await svc.detail(account(req).id, req.params.id)));

  app.delete('/app/v1/sales/bill/:id', {
    ...hooks,
    schema: {
      ...doc('Delete an unpaid invoice', 'PENDING only (otherwise 409 / -24). The gateway payment becomes STORE_DELETE so the link no longer pays; the invoice disappears from the list, the detail and the public lookup.'),
      params: BillParams, response: { 200: Envelope(Type.Null()), ...errors(400, 401, 403, 404, 409) },
    },
  }, async (req) => {
    await svc.remove(account(req).id, req.params.id);
    return ok(req);
  });

  app.put('/app/v1/sales/bill/:id', {
    ...hooks,
    schema: {
      ...doc('Cancel (refund) a paid invoice in full', 'DONE → CANCELED through a full card cancel; answers the detail. A CANCELED invoice answers its detail again. PENDING: 409 / -24. A card cancel failure: 502 / -30, the invoice stays DONE.'),
      params: BillParams, response: { 200: Envelope(BillDetail), ...errors(400, 401, 403, 404, 409, 502) },
    },
  }, async (req) => ok(req, await svc.cancel(account(req).id, req.params.id)));

  app.post('/app/v1/sales/bill/:id/refresh-status', {
    ...hooks,
    schema: {
      ...doc('Refresh the delivery status of the sent messages', 'Asks the messaging provider about every accepted message of the invoice and updates sendHistories[].deliveryStatus; no body; answers the detail.'),
      params: BillParams, response: { 200: Envelope(BillDetail), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await svc.refreshStatus(account(req).id, req.params.id)));
}
