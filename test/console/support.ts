import type { Browser, Page } from 'playwright-core';
import { randomBytes } from 'node:crypto';
import type { Engine } from '../../src/db/index.js';
import { createAccount, grantPoints } from '../../src/invoicing/accounts.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';

/** A browser without a browser: a cookie jar, form posts with the page's CSRF token, no redirects followed. */
export class ConsoleClient {
  readonly jar = new Map<string, string>();
  constructor(private readonly t: TestApp) {}

  private remember(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /Expires=Thu, 01 Jan 1970/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(path: string): Promise<{ status: number; text: string; location: string | null; headers: Headers }> {
    const res = await fetch(this.t.url + path, { headers: { cookie: this.cookieHeader() }, redirect: 'manual' });
    this.remember(res);
    return { status: res.status, text: await res.text(), location: res.headers.get('location'), headers: res.headers };
  }

  /** The CSRF token of the first form on a page. */
  async csrf(path = '/console/account'): Promise<string> {
    const r = await this.get(path);
    const m = /name="_csrf" value="([^"]+)"/.exec(r.text);
    if (!m) throw new Error(`no CSRF token on ${path} (${r.status}): ${r.text.slice(0, 300)}`);
    return m[1]!;
  }

  /** A urlencoded form post; the CSRF token of `from` unless `csrf` is given (false: none). */
  async post(path: string, fields: Record<string, string>, opts: { csrf?: string | false; from?: string } = {}) {
    const token = opts.csrf === false ? undefined : opts.csrf ?? (await this.csrf(opts.from));
    const body = new URLSearchParams({ ...(token ? { _csrf: token } : {}), ...fields });
    const res = await fetch(this.t.url + path, {
      method: 'POST', redirect: 'manual', body,
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
    });
    this.remember(res);
    return { status: res.status, text: await res.text(), location: res.headers.get('location'), headers: res.headers };
  }

  /** A multipart post (the CSV upload) with a file field. */
  async upload(path: string, fields: Record<string, string>, file: { name: string; field: string; content: string }, from = '/console/invoices/bulk') {
    const form = new FormData();
    form.set('_csrf', await this.csrf(from));
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    form.set(file.field, new Blob([file.content], { type: 'text/csv' }), file.name);
    const res = await fetch(this.t.url + path, { method: 'POST', redirect: 'manual', body: form, headers: { cookie: this.cookieHeader() } });
    this.remember(res);
    return { status: res.status, text: await res.text(), location: res.headers.get('location'), headers: res.headers };
  }

  async signIn(email: string, password: string): Promise<void> {
    const r = await this.post('/console/login', { email, password, next: '/console' }, { from: '/console/login' });
    if (r.status !== 303 || r.location !== '/console') throw new Error(`sign-in failed: ${r.status} ${r.text.slice(0, 500)}`);
  }
}

export interface Owner {
  accountId: string;
  email: string;
  password: string;
}

/** A team's first owner, as `sunap account create` makes it, with points. */
export async function newOwner(t: TestApp, opts: { points?: number; storeCode?: string } = {}): Promise<Owner> {
  const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery';
  const now = t.app.sunap.clock.nowMs();
  const { accountId } = await createAccount(t.app.sunap.database.db, now, { email, password, storeCode: opts.storeCode ?? t.storeCode });
  if (opts.points) await grantPoints(t.app.sunap.database.db, now, { email, amount: opts.points });
  return { accountId, email, password };
}

/** A signed-in client of a new owner. */
export async function ownerClient(t: TestApp, opts: { points?: number; storeCode?: string } = {}): Promise<{ owner: Owner; c: ConsoleClient }> {
  const owner = await newOwner(t, opts);
  const c = new ConsoleClient(t);
  await c.signIn(owner.email, owner.password);
  return { owner, c };
}

/** Invites `email` with `role` through the owner's console and accepts it: the member's signed-in client. */
export async function addMember(t: TestApp, ownerC: ConsoleClient, role: 'owner' | 'manager' | 'viewer'): Promise<{ email: string; password: string; c: ConsoleClient }> {
  const email = `${role}-${randomBytes(4).toString('hex')}@example.com`;
  const r = await ownerC.post('/console/team/invite', { email, role }, { from: '/console/team' });
  const link = /\/console\/invite\/([A-Za-z0-9_-]+)/.exec(r.text)?.[1];
  if (r.status !== 200 || !link) throw new Error(`invite failed: ${r.status} ${r.text.slice(0, 500)}`);
  const c = new ConsoleClient(t);
  const password = 'member password 1';
  const a = await c.post(`/console/invite/${link}`, { password }, { from: `/console/invite/${link}` });
  if (a.status !== 303) throw new Error(`accept failed: ${a.status} ${a.text.slice(0, 500)}`);
  return { email, password, c };
}

/** Text of a page without tags, whitespace collapsed (for "the page shows X"). */
export function textOf(page: string): string {
  return page.replace(/<[^>]+>/g, ' ').replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/\s+/g, ' ');
}

/** n recipients as a spreadsheet would save them: a header row, dashes in phone numbers, one with a guardian and items. */
export function recipientsCsv(n: number, tag: string): string {
  const lines = ['이름,전화번호,금액,보호자 전화번호,항목'];
  for (let i = 0; i < n; i++) {
    const phone = `010-${tag}${String(i).padStart(2, '0')}-${String(1000 + i)}`;
    lines.push(i === 0 ? `학생${i},${phone},"115,000",010-2222-3333,교재:15000; 레슨:100000` : `학생${i},${phone},${10_000 + i * 100},,`);
  }
  return lines.join('\r\n');
}

/**
 * Signs in through the console's own sign-in form in Chromium (the page must show it) and waits
 * for the overview: the one way every browser suite signs in.
 */
export async function submitSignIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.getByLabel('이메일').fill(email);
  await page.getByLabel('비밀번호').fill(password);
  await Promise.all([page.waitForURL(`${baseUrl}/console`), page.getByRole('button', { name: '로그인' }).click()]);
}

/**
 * What the console's Chromium suites start from: the app on `engine` and a Chromium, started
 * side by side, and an owner with `points`. If either fails to start, the other is closed
 * before the error is thrown (no suite's `after` would know of it).
 */
export async function consoleInChromium(engine: Engine, points: number): Promise<{ t: TestApp; browser: Browser; owner: Owner }> {
  const [app, chromium] = await Promise.allSettled([startApp(engine), launchBrowser()]);
  if (app.status === 'rejected' || chromium.status === 'rejected') {
    if (app.status === 'fulfilled') await app.value.close();
    if (chromium.status === 'fulfilled') await chromium.value.close();
    throw app.status === 'rejected' ? app.reason : (chromium as PromiseRejectedResult).reason;
  }
  return { t: app.value, browser: chromium.value, owner: await newOwner(app.value, { points }) };
}
