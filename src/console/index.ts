/**
 * The merchant console (docs/console.md): `/console`, server-rendered Korean pages for the
 * people of one store. It uses the gateway and the invoicing side through their index.ts and
 * the page helpers of src/pages; its own tables are sessions, invites and the audit log.
 */
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import multipart from '@fastify/multipart';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { Clock } from '../platform/clock.js';
import { hmacToken } from '../platform/crypto.js';
import type { App } from '../platform/http.js';
import { checkAccess, requireConsoleEntries } from './access.js';
import { AuditLog } from './audit.js';
import { CSV_LIMITS } from './csv-upload.js';
import { consoleErrorHandler, SESSION_COOKIE, type ConsoleDeps } from './http.js';
import { oneValueEach } from './forms.js';
import { Invites } from './invites.js';
import { PasswordResets } from './password-resets.js';
import { accountRoutes } from './routes/account.js';
import { authRoutes } from './routes/auth.js';
import { classRoutes } from './routes/classes.js';
import { scheduleRoutes } from './routes/schedules.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { invoiceRoutes } from './routes/invoices.js';
import { invoiceCreateRoutes } from './routes/invoice-create.js';
import { overviewRoutes } from './routes/overview.js';
import { paymentRoutes } from './routes/payments.js';
import { resetRoutes } from './routes/reset.js';
import { pointsRoutes } from './routes/points.js';
import { settingsRoutes } from './routes/settings.js';
import { teamRoutes } from './routes/team.js';
import { templateRoutes } from './routes/templates.js';
import { Sessions } from './sessions.js';

export type { ConsoleDeps } from './http.js';
export { NAV, type NavItem } from './views/shell.js';
export { AUDIT_ACTIONS } from './audit.js';
export { SESSION } from './sessions.js';
export { OPERATOR, PasswordResets, RESET_TTL_MS } from './password-resets.js';
export { AuditLog } from './audit.js';
export { CONSOLE_ROUTES } from './access.js';

/** The console's own services, built on the domains' public surfaces. */
export function createConsoleParts(db: Kysely<Database>, deps: Pick<ConsoleDeps, 'gateway' | 'invoicing' | 'clock'> & { clock: Clock }) {
  const sessions = new Sessions(db, { clock: deps.clock, auth: deps.invoicing.auth, team: deps.invoicing.team, gateway: deps.gateway });
  const audit = new AuditLog(db, deps.clock);
  // What the service does to a store's payments by itself goes to its teams' audit logs.
  deps.gateway.addListener(audit.listener());
  const resets = new PasswordResets(db, { clock: deps.clock, team: deps.invoicing.team });
  return { sessions, invites: new Invites(db, { clock: deps.clock, team: deps.invoicing.team }), resets, audit };
}

/**
 * Registers the console, encapsulated: its cookies, CSRF tokens, uploads and HTML error
 * handler apply to /console only. Every route is an action of CONSOLE_ROUTES (access.ts), or the
 * app does not start. Every request first resolves its session; pages other than the public ones
 * (sign-in, invites, reset) redirect there without one; then the member's role must reach the
 * action's (refused by default, before the body is read); every POST carries a CSRF token bound
 * to the session.
 */
export async function consoleRoutes(app: App, deps: ConsoleDeps & { secretKey: Buffer }): Promise<void> {
  // First, before any route: every route registered below must have its entry.
  requireConsoleEntries(app);
  const cookieOpts = { path: '/console', httpOnly: true, sameSite: 'lax' as const, secure: deps.secureCookies };
  await app.register(cookie);
  await app.register(csrf, {
    cookieKey: 'sunap_csrf',
    cookieOpts,
    // Bound to the session: a token taken from another session (or before signing in) fails.
    getUserInfo: (req) => req.consoleUser?.sessionId ?? 'anonymous',
    csrfOpts: { hmacKey: Buffer.from(hmacToken(deps.secretKey, 'console-csrf', 'v1', 32), 'base64url') },
  });
  // One CSV file per request, CSV_LIMITS.bytes at most (1,000 recipients fit in well under
  // that): busboy stops the file at the limit while it streams in, and the request is refused (413).
  await app.register(multipart, { attachFieldsToBody: 'keyValues', limits: { fileSize: CSV_LIMITS.bytes, files: 1, fields: 20, fieldSize: CSV_LIMITS.bytes } });
  app.setErrorHandler(consoleErrorHandler);
  // The body is read between these two hooks; an error thrown there is about the body (consoleErrorHandler).
  app.addHook('preParsing', async (req) => {
    req.consoleReadingBody = true;
  });
  app.addHook('preHandler', async (req) => {
    req.consoleReadingBody = false;
  });
  // One value per single-valued form field, before the schema looks (src/console/forms.ts).
  app.addHook('preValidation', async (req) => oneValueEach(req.body, req.routeOptions.schema?.body));
  app.setNotFoundHandler(async (req, reply) => consoleErrorHandler(Object.assign(new Error('not found'), { statusCode: 404, code: 'SUNAP_NOT_FOUND', name: 'NotFound' }), req, reply));

  app.addHook('onRequest', async (req, reply) => {
    req.consoleUser = (await deps.sessions.resolve(req.cookies[SESSION_COOKIE])) ?? undefined;
    if (req.routeOptions.config.access?.role === 'public') return;
    // Signed in: the role check (an unknown address goes on to the 404 page).
    if (req.consoleUser) return req.is404 ? undefined : checkAccess(req);
    // Signed out (never signed in, or the session was revoked or expired): to the sign-in page.
    if (req.cookies[SESSION_COOKIE]) reply.clearCookie(SESSION_COOKIE, { path: '/console' });
    const next = req.method === 'GET' && req.url.startsWith('/console') ? `?next=${encodeURIComponent(req.url)}` : '';
    return reply.code(303).header('cache-control', 'no-store').header('location', `/console/login${next}`).send();
  });
  app.addHook('preHandler', (req, reply, done) => {
    if (req.method !== 'POST') return done();
    app.csrfProtection(req, reply, done);
  });

  const cookies = { session: SESSION_COOKIE, options: cookieOpts };
  authRoutes(app, deps, cookies);
  resetRoutes(app, deps);
  overviewRoutes(app, deps);
  paymentRoutes(app, deps);
  invoiceRoutes(app, deps);
  invoiceCreateRoutes(app, deps);
  templateRoutes(app, deps);
  classRoutes(app, deps);
  scheduleRoutes(app, deps);
  pointsRoutes(app, deps);
  deliveryRoutes(app, deps);
  teamRoutes(app, deps);
  settingsRoutes(app, deps);
  accountRoutes(app, deps, cookies);
}
