/**
 * The HTTP calls Sunap makes to its own providers (card processor, messaging provider). Unlike
 * callbacks and webhooks (http-out.ts), the target is the operator's configured base URL, not a
 * merchant's, so the private-target guard does not apply (the rehearsal runs the providers'
 * fakes on this machine). What does apply: a time limit on every call, no redirects followed,
 * and nothing of the request or the answer is logged here.
 */
export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body; null when the answer was not JSON. */
  body: unknown;
}

/** No answer: a time-out, a refused or reset connection, a TLS failure. The provider may have acted. */
export class ProviderUnreachable extends Error {
  override name = 'ProviderUnreachable';
}

export async function callProvider(url: string, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; timeoutMs: number }): Promise<ProviderAnswer> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: init.method, headers: init.headers, body: init.body, redirect: 'manual', signal: AbortSignal.timeout(init.timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? `no answer within ${init.timeoutMs} ms` : (e.cause?.code ?? e.message);
    throw new ProviderUnreachable(`${init.method} ${new URL(url).origin}${new URL(url).pathname}: ${why}`);
  }
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: res.status, body };
}

/** A string field of a JSON object, or ''. */
export function str(body: unknown, key: string): string {
  if (!body || typeof body !== 'object') return '';
  const v = (body as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

export function obj(body: unknown, key: string): Record<string, unknown> | null {
  if (!body || typeof body !== 'object') return null;
  const v = (body as Record<string, unknown>)[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

export const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
