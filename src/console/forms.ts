import { Type } from '@sinclair/typebox';

/**
 * Reading console forms. Bodies are urlencoded (or multipart for the CSV upload); the route
 * schemas type them as optional strings, and the checks with Korean messages live here and in
 * the services. `field` reads one value of an untyped body (multipart) without a cast.
 */
export function field(body: unknown, name: string): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const v = (body as Record<string, unknown>)[name];
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return undefined;
}

/** The bytes of an uploaded file field (multipart), undefined when the body has none. */
export function fileBytes(body: unknown, name: string): Buffer | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const v = (body as Record<string, unknown>)[name];
  return Buffer.isBuffer(v) ? v : undefined;
}

/** The console's words for display text with control characters (the API's `FIELD: must not contain control characters`). */
export const CONTROL_KO = '줄바꿈이나 탭 같은 제어 문자는 쓸 수 없습니다.';

/** An optional form or query string of at most `max` characters. */
export const Str = (max = 200) => Type.Optional(Type.String({ maxLength: max }));

/** The form's CSRF token field (checked by the console's preHandler; typed here so schemas list it). */
export const Csrf = { _csrf: Str(200) };

/** yyyy-MM-dd → the KST day's start (epoch ms), or undefined when empty or not a date. */
export function kstDayStart(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) - 9 * 3_600_000;
  return Number.isFinite(ms) ? ms : undefined;
}

/** A whole number of won or points from a form ("128,000원" reads as 128000); undefined when it is none. */
export function wholeNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const s = value.replace(/[,\s원P]/g, '');
  if (!/^\d{1,12}$/.test(s)) return undefined;
  return Number(s);
}

/** Digits of a phone number as typed (010-1234-5678 → 01012345678). */
export function digits(value: string | undefined): string {
  return (value ?? '').replace(/[\s-]/g, '');
}

/** Keyset cursors in a query string: `<epoch ms>.<id>`. */
export function parseCursor(value: string | undefined): { at: number; id: string } | undefined {
  if (!value) return undefined;
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{1,64})$/.exec(value);
  return m ? { at: Number(m[1]), id: m[2]! } : undefined;
}

export function cursorParam(c: { at: number; id: string | number }): string {
  return `${c.at}.${c.id}`;
}
