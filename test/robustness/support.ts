import { sql } from 'kysely';
import type { TestApp } from '../helpers/app.js';

/** SUNAP_STRESS=1 runs the property and race suites many more times. */
export const STRESS = process.env.SUNAP_STRESS === '1';
export const runs = (normal: number, stress = normal * 20): number => (STRESS ? stress : normal);

/**
 * What "nothing in the database changed" means for a refused request: the rows of every table
 * a request could write, counted by state, the sum of the wallets and the sandbox clock.
 * (Login throttle rows, tokens, payment attempts and the sandbox network's records are left
 * out: a refused login or a declined card writes them on purpose.)
 */
export async function dbSnapshot(t: TestApp): Promise<Record<string, number>> {
  const rows = await sql<{ k: string; n: number | string }>`
    select 'payments:' || state as k, count(*) as n from payments group by state
    union all select 'invoices:' || status || ':' || send_status || ':' || (case when deleted_at is null then 'live' else 'deleted' end), count(*)
      from invoices group by status, send_status, (case when deleted_at is null then 'live' else 'deleted' end)
    union all select 'sends:' || status, count(*) from sends group by status
    union all select 'jobs:' || kind || ':' || status, count(*) from jobs group by kind, status
    union all select 'ledger:' || kind, count(*) from ledger group by kind
    union all select 'wallets', cast(coalesce(sum(balance), 0) as bigint) from wallets
    union all select 'webhook_events', count(*) from webhook_events
    union all select 'settings:' || key || '=' || value, 1 from settings
  `.execute(t.app.sunap.database.db);
  const out: Record<string, number> = {};
  for (const r of rows.rows) out[r.k] = Number(r.n);
  return out;
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** A raw HTTP call: the body is sent exactly as given (a string), with the given content type. */
export async function raw(t: TestApp, method: string, path: string, opts: { text?: string; contentType?: string; headers?: Record<string, string> } = {}): Promise<Res> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.text !== undefined && opts.contentType) headers['content-type'] = opts.contentType;
  const res = await fetch(t.url + path, { method, headers, body: opts.text, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, body };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; throws with `what` after `timeoutMs`. */
export async function until<T>(what: string, fn: () => Promise<T>, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
