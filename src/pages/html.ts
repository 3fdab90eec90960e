/**
 * Server-rendered HTML with escaping by default: every interpolated value is escaped unless it
 * is itself the result of `html` (or `raw`, which must only wrap trusted constants).
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function render(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Trusted markup only (constants written in this codebase). */
export function raw(s: string): SafeHtml {
  return new SafeHtml(s);
}

/** A restrictive CSP for pages without JavaScript; `formTargets` adds origins a form may go to. */
export function pageCsp(formTargets: string[] = []): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    `form-action 'self'${formTargets.map((o) => ' ' + o).join('')}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * An origin a live checkout page may name in its CSP: scheme, host and port only (nothing that
 * could end the directive); a leading `*.` names a processor's subdomains (https://*.tosspayments.com).
 */
const ORIGIN = /^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$/;

/**
 * The one page that runs script: a live processor's window (src/pages/checkout-page.ts,
 * renderScriptWindow). Only scripts carrying this response's nonce run (the processor's SDK and
 * our launcher); the processor's hosts are named for what its SDK loads, calls, frames and
 * posts. Anything that is not a plain origin is refused rather than written into the policy.
 */
export function checkoutCsp(nonce: string, hosts: { script: string[]; connect: string[]; frame: string[]; form: string[]; img: string[] }, formTargets: string[] = []): string {
  if (!/^[A-Za-z0-9+/_=-]{16,64}$/.test(nonce)) throw new Error('checkoutCsp: a nonce must be 16 to 64 base64 characters');
  const list = (origins: string[]) => {
    for (const o of origins) if (!ORIGIN.test(o)) throw new Error(`checkoutCsp: "${o}" is not an origin`);
    return origins.map((o) => ' ' + o).join('');
  };
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'${list(hosts.script)}`,
    `style-src 'self' 'nonce-${nonce}'`,
    `img-src 'self' data:${list(hosts.img)}`,
    `connect-src 'self'${list(hosts.connect)}`,
    `frame-src${hosts.frame.length ? list(hosts.frame) : " 'none'"}`,
    `form-action 'self'${list(hosts.form)}${list(formTargets)}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every customer page carries (src/pages/README.md). */
export function pageHeaders(formTargets: string[] = [], csp?: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': csp ?? pageCsp(formTargets),
  };
}

/**
 * The shared page shell: Korean, mobile-first, one stylesheet served from /assets/sunap.css.
 * `header` goes above the main column (the console's navigation); `wide` lets the column use a
 * desktop's width (lists and tables).
 */
export function layout(title: string, body: SafeHtml, opts: { header?: SafeHtml; wide?: boolean } = {}): string {
  return html`<!doctype html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="/assets/sunap.css">
</head>
<body>
${opts.header ?? ''}<main class="page${opts.wide ? ' wide' : ''}" id="main">
${body}
</main>
</body>
</html>`.value;
}
