import type { FastifyRequest } from 'fastify';
import { can, requireEntries, type Action, type RouteAccess } from '../invoicing/index.js';
import { AppError } from '../platform/errors.js';
import type { App } from '../platform/http.js';

/**
 * Every console route and the action it is (README.md here, "Adding a page"): the key is the
 * method and the route's URL as Fastify registers it; the action's least role is in the one
 * table of actions (ACCESS, src/invoicing/access.ts), which the invoicing API reads too.
 *
 * Refusing by default, twice: the app does not start while a console route has no entry here
 * (or an entry names no route: a renamed page), and a request to a route without an entry is
 * refused (403) before its body is read. Route files declare nothing about roles.
 */
export const CONSOLE_ROUTES: Record<string, Action> = {
  // Before signing in.
  'GET /console/login': 'session.signIn',
  'POST /console/login': 'session.signIn',
  'GET /console/invite/:token': 'invite.accept',
  'POST /console/invite/:token': 'invite.accept',
  'GET /console/forgot': 'password.reset',
  'GET /console/reset/:token': 'password.reset',
  'POST /console/reset/:token': 'password.reset',

  'POST /console/logout': 'session.signOut',
  'GET /console/account': 'account.manage',
  'POST /console/account/sessions/revoke': 'account.manage',
  'POST /console/account/sessions/revoke-all': 'account.manage',
  'POST /console/account/password': 'account.manage',

  'GET /console': 'overview.view',

  'GET /console/payments': 'payments.view',
  'GET /console/payments/:seq': 'payments.view',
  'GET /console/payments.csv': 'payments.export',
  'GET /console/payments/:seq/cancel': 'payment.cancel',
  'POST /console/payments/:seq/cancel': 'payment.cancel',
  'GET /console/payments/:seq/delete': 'payment.delete',
  'POST /console/payments/:seq/delete': 'payment.delete',

  'GET /console/invoices': 'invoices.view',
  'GET /console/invoices/:id': 'invoices.view',
  'GET /console/invoices.csv': 'invoices.export',
  'POST /console/invoices/:id/resend': 'invoice.resend',
  'GET /console/invoices/:id/cancel': 'invoice.cancel',
  'POST /console/invoices/:id/cancel': 'invoice.cancel',
  'GET /console/invoices/:id/delete': 'invoice.delete',
  'POST /console/invoices/:id/delete': 'invoice.delete',
  'GET /console/invoices/new': 'invoice.send',
  'POST /console/invoices/new': 'invoice.send',
  'GET /console/invoices/bulk': 'invoice.send',
  'POST /console/invoices/bulk': 'invoice.send',
  'POST /console/invoices/bulk/preview': 'invoice.send',

  'GET /console/templates': 'templates.view',
  'GET /console/templates/new': 'template.edit',
  'POST /console/templates': 'template.edit',
  // The template's page is its edit form.
  'GET /console/templates/:id': 'template.edit',
  'POST /console/templates/:id': 'template.edit',
  'POST /console/templates/:id/delete': 'template.edit',

  'GET /console/classes': 'classes.view',
  'GET /console/classes/:id': 'classes.view',
  'GET /console/classes/:id/month': 'classes.view',
  'GET /console/classes/:id/month.csv': 'classes.export',
  'GET /console/classes/new': 'class.edit',
  'POST /console/classes': 'class.edit',
  'POST /console/classes/:id': 'class.edit',
  'POST /console/classes/:id/archive': 'class.edit',
  'POST /console/classes/:id/unarchive': 'class.edit',
  'POST /console/classes/:id/members': 'class.edit',
  'POST /console/classes/:id/members/:memberId/delete': 'class.edit',
  'POST /console/classes/:id/import': 'class.edit',
  'GET /console/classes/:id/month/remind': 'class.remind',
  'POST /console/classes/:id/month/remind': 'class.remind',

  'GET /console/schedules': 'schedules.view',
  'GET /console/schedules/:id': 'schedules.view',
  'GET /console/schedules/:id/runs/:runId': 'schedules.view',
  'GET /console/schedules/new': 'schedule.edit',
  'POST /console/schedules': 'schedule.edit',
  'POST /console/schedules/:id/pause': 'schedule.edit',
  'POST /console/schedules/:id/resume': 'schedule.edit',

  'GET /console/points': 'points.view',
  'POST /console/points/recharge': 'points.recharge',

  'GET /console/deliveries': 'deliveries.view',
  'GET /console/deliveries/:id': 'deliveries.view',
  'GET /console/deliveries/endpoints': 'deliveries.view',
  'POST /console/deliveries/recover': 'delivery.redeliver',
  'POST /console/deliveries/:id/redeliver': 'delivery.redeliver',
  'POST /console/deliveries/endpoints': 'endpoint.edit',
  'POST /console/deliveries/endpoints/:id/rotate': 'endpoint.edit',
  'POST /console/deliveries/endpoints/:id/enable': 'endpoint.edit',
  'POST /console/deliveries/endpoints/:id/disable': 'endpoint.edit',
  'POST /console/deliveries/endpoints/:id/test': 'endpoint.edit',

  'GET /console/team': 'team.view',
  'POST /console/team/invite': 'team.invite',
  'POST /console/team/invites/:id/revoke': 'team.invite',
  'POST /console/team/:id/role': 'team.role',
  'POST /console/team/:id/remove': 'team.remove',
  'POST /console/team/:id/reset-link': 'team.reset',
  'POST /console/team/:id/sign-out': 'team.reset',

  'GET /console/settings': 'settings.view',
  'POST /console/settings/store': 'settings.store',
  'POST /console/settings/processor': 'settings.processor',
  'POST /console/settings/processor/reset': 'settings.processor',
};

/**
 * Installs the check at registration, before any route of the plugin: a route without an entry
 * throws, so `app.ready()` (and `sunap serve`) fails naming the route; a stale entry fails too.
 */
export function requireConsoleEntries(app: App, table: Record<string, Action> = CONSOLE_ROUTES): void {
  requireEntries(app, table, { what: 'console', tableName: 'CONSOLE_ROUTES (src/console/access.ts)' });
}

/** The route's entry, if it has one (a public route needs no session). */
export function accessOf(req: FastifyRequest): RouteAccess | undefined {
  return req.routeOptions.config.access;
}

/**
 * The request's check, after the session is resolved and before the body is read: a route with
 * no entry is refused whoever asks; otherwise the member's role must reach the action's.
 */
export function checkAccess(req: FastifyRequest): void {
  const access = accessOf(req);
  if (!access) {
    req.log.warn({ url: req.routeOptions.url, method: req.method }, 'console route without an access entry refused');
    throw new AppError('FORBIDDEN', 'role: this page is not open to anyone');
  }
  if (!can(req.consoleUser?.member, access.action)) throw new AppError('FORBIDDEN', `role: this needs the ${access.role} role`);
}
