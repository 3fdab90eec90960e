import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayService, PaymentsConsole, SettingsContext, StoreKey } from '../gateway/index.js';
import type { Costs, Invoicing } from '../invoicing/index.js';
import { pageHeaders } from '../pages/html.js';
import { renderErrorPage } from '../pages/error-page.js';
import type { Clock } from '../platform/clock.js';
import { AppError, GatewayError } from '../platform/errors.js';
import type { AuditLog } from './audit.js';
import { TOO_LARGE } from './csv-upload.js';
import type { Invites } from './invites.js';
import type { PasswordResets } from './password-resets.js';
import type { ConsoleUser, Sessions } from './sessions.js';
import { consolePage, problemBody, publicPage, type ShellPage } from './views/shell.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is signed in to the console (set by its session hook), if anyone. */
    consoleUser?: ConsoleUser;
    /** True while the body is being read (content-type parsers, the multipart hook): what fails there is the client's body. */
    consoleReadingBody?: boolean;
  }
}

/** What the console's routes use: the domains through their public surfaces, and its own parts. */
export interface ConsoleDeps {
  gateway: GatewayService;
  payments: PaymentsConsole;
  invoicing: Invoicing;
  sessions: Sessions;
  invites: Invites;
  resets: PasswordResets;
  audit: AuditLog;
  clock: Clock;
  costs: Costs;
  publicUrl: string;
  /** The public invoice page's base (SUNAP_PUBLIC_PAY_PAGE_URL): `${it}/<TRANS_SEQNO>`. */
  publicPayPageUrl: string;
  sandbox: boolean;
  /** A store's processor settings: what they are checked against (mode, the operator's processor and keys). */
  settings: SettingsContext;
  /** Cookies carry Secure (the console is served over https). */
  secureCookies: boolean;
  loginRateLimit: number;
}

export const SESSION_COOKIE = 'sunap_console';

/** The signed-in user of a route that requires one (the session hook guarantees it). */
export function userOf(req: FastifyRequest): ConsoleUser {
  const u = req.consoleUser;
  if (!u) throw new AppError('TOKEN_MISSING', 'session: not signed in');
  return u;
}

export function storeKey(u: ConsoleUser): StoreKey {
  return { platformCode: u.store.platform_code, storeCode: u.store.code };
}

/** The form's CSRF token for this user (bound to the session, so a token of another session fails). */
export async function csrfToken(req: FastifyRequest, reply: FastifyReply): Promise<string> {
  return reply.generateCsrf({ userInfo: req.consoleUser?.sessionId ?? 'anonymous' });
}

export function sendPage(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).headers(pageHeaders()).send(body);
}

/** A console page in the shell, with its CSRF token. */
export async function renderPage(req: FastifyRequest, reply: FastifyReply, page: ShellPage, status = 200) {
  const user = userOf(req);
  return sendPage(reply, status, consolePage({ user, csrf: await csrfToken(req, reply) }, page));
}

/** After a POST: back to a page (303), with a notice key its page knows. */
export function seeOther(reply: FastifyReply, location: string) {
  return reply.code(303).headers(pageHeaders()).header('location', location).send();
}

const STATUS_TEXT: Record<number, { title: string; message: string }> = {
  400: { title: '입력을 확인해 주세요', message: '요청을 처리할 수 없습니다.' },
  403: { title: '권한이 없습니다', message: '이 작업을 할 수 있는 역할이 아닙니다. 상점 소유자에게 문의해 주세요.' },
  404: { title: '찾을 수 없습니다', message: '주소를 다시 확인해 주세요. 다른 상점의 항목이거나 삭제되었을 수 있습니다.' },
  409: { title: '지금은 할 수 없습니다', message: '항목의 상태가 이 작업을 허용하지 않습니다.' },
  // A body or file over its limit (the CSV upload's, src/console/csv-upload.ts), refused while it streams in.
  413: { title: '파일이 너무 큽니다', message: TOO_LARGE },
  429: { title: '요청이 너무 많습니다', message: '잠시 후 다시 시도해 주세요.' },
  502: { title: '카드사 처리에 실패했습니다', message: '잠시 후 다시 시도해 주세요.' },
};

/** The status and Korean text of a console error; messages of our own errors (`field: reason`) are shown as they are. */
const UNREADABLE = '보낸 양식의 내용을 읽지 못했습니다. 페이지를 새로 열어 다시 시도해 주세요.';

function problemOf(err: FastifyError, unreadable = false): { status: number; title: string; message: string } {
  if (err instanceof AppError) {
    const status = err.httpStatus;
    const base = STATUS_TEXT[status] ?? STATUS_TEXT[400]!;
    return { status, title: base.title, message: status === 404 || status === 403 ? base.message : err.message };
  }
  if (err instanceof GatewayError) {
    if (err.resultCode === '4003' || err.resultCode === '4004') return { status: 404, ...STATUS_TEXT[404]! };
    return { status: 409, title: STATUS_TEXT[409]!.title, message: err.message };
  }
  if (err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET') {
    return { status: 403, title: '보안 확인에 실패했습니다', message: '양식의 보안 토큰이 없거나 만료되었습니다. 페이지를 새로 열어 다시 시도해 주세요.' };
  }
  // A body that cannot be read (a broken multipart or urlencoded body: the parsers' own errors carry
  // no status) is the client's mistake, not ours: 400, an info line, no stack.
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : unreadable ? 400 : 500;
  if (unreadable && !(err.statusCode && err.statusCode < 500)) return { status, title: '양식을 읽을 수 없습니다', message: UNREADABLE };
  if (status === 500) return { status, title: '일시적인 오류', message: '일시적인 문제로 요청을 처리하지 못했습니다. 잠시 후 다시 시도해 주세요.' };
  const base = STATUS_TEXT[status] ?? STATUS_TEXT[400]!;
  const validation = 'validationMessage' in err && typeof err.validationMessage === 'string' ? err.validationMessage : null;
  return { status, title: base.title, message: validation ?? base.message };
}

/** The console's error handler: a page in the shell when signed in, the public page otherwise; never the request body in the log. */
export async function consoleErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  const p = problemOf(err, req.consoleReadingBody === true);
  if (p.status >= 500) req.log.error({ err: { type: err.name, message: err.message, stack: err.stack } }, 'console request failed');
  else req.log.info({ status: p.status, code: err.code }, 'console request refused');
  if (p.status === 429) req.resultCode = '-29';
  const body = problemBody(p.title, p.message);
  if (req.consoleUser) {
    try {
      return sendPage(reply, p.status, consolePage({ user: req.consoleUser, csrf: await csrfToken(req, reply) }, { title: p.title, active: '', body }));
    } catch {
      return sendPage(reply, p.status, renderErrorPage(p.status, p));
    }
  }
  return sendPage(reply, p.status, publicPage(p.title, body));
}
