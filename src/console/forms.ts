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

/** An optional form or query string of at most `max` characters. */
export const Str = (max = 200) => Type.Optional(Type.String({ maxLength: max }));

/**
 * A form's text field in the schema: each field's own limit is checked in Korean beside it (the
 * forms' rules, src/console/field-errors.ts); the schema only stops what no one types, 10,000
 * characters, so an over-long value brings the form back instead of an error page.
 */
export const Text = () => Str(10_000);

/**
 * A form's body limit: several fields of pasted Hangul (9 bytes a character once urlencoded)
 * up to their schema's 10,000 fit, so the form comes back with the problems said in Korean.
 */
export const FORM_BODY_LIMIT = 256 * 1024;

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

/**
 * A field sent more than once (`name=a&name=b`: a doubled hidden field, a hand-made post) where
 * the route's schema expects one string reads as its last value, as most servers take it; the
 * form then comes back with its problems in Korean instead of a schema error page. Fields the
 * schema allows as a list (checkboxes) are left as they are. Runs before validation.
 */
export function oneValueEach(body: unknown, schema: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || schema === null || typeof schema !== 'object') return;
  const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties;
  if (!props) return;
  const b = body as Record<string, unknown>;
  for (const [k, v] of Object.entries(b)) {
    if (Array.isArray(v) && props[k]?.type === 'string') b[k] = v.findLast((x) => typeof x === 'string');
  }
}
