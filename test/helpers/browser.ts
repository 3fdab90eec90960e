import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** The system Chromium; tests never download browsers. */
export const CHROMIUM_PATH = process.env.SUNAP_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (Debian's package; .ci/run installs it), or set SUNAP_CHROMIUM`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** A phone-sized context (390x844, touch). `bypassCSP` only for contexts that inject axe. */
export function mobileContext(browser: Browser, opts: { bypassCSP?: boolean } = {}): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
    locale: 'ko-KR', timezoneId: 'Asia/Seoul', bypassCSP: opts.bypassCSP ?? false,
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; html: string }[];
}

/** Runs axe-core on the current page; the context must have been made with `bypassCSP: true`. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    // Runs in the page; the project compiles without the DOM lib, hence the typed globalThis.
    const w = globalThis as unknown as { document: unknown; axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } };
    const r = await w.axe.run(w.document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, html: n.html })) }));
  });
}

/** Width of the page's content in CSS pixels (wider than the viewport means sideways scrolling). */
export function scrollWidth(page: Page): Promise<number> {
  return page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
}

/** One computed style property of the first element matching `selector`. */
export function computedStyle(page: Page, selector: string, property: string): Promise<string> {
  return page.locator(selector).first().evaluate((el, prop) =>
    (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(el)[prop] ?? '', property);
}

/** One line per violation, for assertion messages. */
export function describeViolations(v: AxeViolation[]): string {
  return v.map((x) => `${x.id} (${x.impact}): ${x.help} @ ${x.nodes.map((n) => n.html).join(' | ')}`).join('\n');
}

/**
 * Awaits every start-up of a suite's before() and only then fails with the first error: with
 * Promise.all a failed browser launch would leave the app or receiver started later unassigned,
 * never closed by after(), and the test process waiting on them forever.
 */
export async function startAll(starts: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(starts)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
