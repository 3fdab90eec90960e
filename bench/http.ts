/** Small JSON HTTP helpers for fixtures and polling (never used for measured load). */

export interface Answer {
  status: number;
  text: string;
  body: any;
  ms: number;
}

export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const t0 = performance.now();
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, text, body: parsed, ms: performance.now() - t0 };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
